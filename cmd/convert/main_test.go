package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// authorsFile returns the authors' checkpoints beside the data directory,
// skipping the test where they are absent (and failing it in CI).
func authorsFile(t *testing.T) string {
	t.Helper()
	in := defaultIn("")
	if _, err := os.Stat(in); err != nil {
		datatest.Skip(t, fmt.Sprintf("the authors' samplers, %s, are missing", in))
	}
	return in
}

// TestConvertedNTSamplerKeepsTheAuthorsNetworks converts the authors' MNIST
// NT sampler and evaluates its f_Q, read back from our file format, where
// the authors' PyTorch network gives −2.558 and −0.696.
func TestConvertedNTSamplerKeepsTheAuthorsNetworks(t *testing.T) {
	authorsFile(t)
	out := filepath.Join(t.TempDir(), "nt.json")
	if err := run(context.Background(), []string{"-sampler", "nt", "-out", out}); err != nil {
		t.Fatal(err)
	}
	f, err := nnsghmc.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ u, p, want float64 }{{-2.3, 0, -2.558}, {0, 0, -0.696}} {
		got := make([]float64, 1)
		f.Q.Eval([]float64{c.u, c.p}, got)
		if math.Abs(got[0]-c.want) > 5e-4 {
			t.Errorf("f_Q(u = %v, p = %v) = %.4f, want %.3f", c.u, c.p, got[0], c.want)
		}
	}
	if f.Domain.Dim != 784*20+20+20*10+10 || f.Inputs.EnergyScale != -1 || f.DScale != 50 || f.Domain.Friction != nnsghmc.FrictionExplicit {
		t.Errorf("domain %+v, inputs %+v, d_scale %v: want the training network's dimension and the authors' scalings", f.Domain, f.Inputs, f.DScale)
	}
	if f.Training["source"] == nil {
		t.Error("the file does not say the weights are the authors'")
	}
}

func TestConvertEverySampler(t *testing.T) {
	authorsFile(t)
	for name := range authors {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), name+".json")
			if err := run(context.Background(), []string{"-sampler", name, "-out", out}); err != nil {
				t.Fatal(err)
			}
			if _, err := nnsghmc.Load(out); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestConvertBadInput(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(notJSON, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"x": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"no sampler":    {"-out", filepath.Join(dir, "a.json")},
		"bad sampler":   {"-sampler", "nope", "-out", filepath.Join(dir, "a.json")},
		"no out":        {"-sampler", "toy"},
		"missing in":    {"-sampler", "toy", "-in", filepath.Join(dir, "none.json"), "-out", filepath.Join(dir, "a.json")},
		"not json":      {"-sampler", "toy", "-in", notJSON, "-out", filepath.Join(dir, "a.json")},
		"other samples": {"-sampler", "toy", "-in", other, "-out", filepath.Join(dir, "a.json")},
	} {
		t.Run(name, func(t *testing.T) {
			err := run(context.Background(), args)
			var u *cli.UsageError
			if !errors.As(err, &u) {
				t.Fatalf("error %v, want a usage error", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "a.json")); err == nil {
				t.Fatal("wrote an output file")
			}
		})
	}
}

// TestMissingDataNamesNoFlagOfConvert: converting an MNIST sampler without
// the MNIST files says where to get them without suggesting a --download
// flag, which convert does not have (sample and train do).
func TestMissingDataNamesNoFlagOfConvert(t *testing.T) {
	err := run(context.Background(), []string{"-sampler", "nt", "-data-dir", t.TempDir(), "-out", filepath.Join(t.TempDir(), "nt.json")})
	var ue *cli.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "not found") || strings.Contains(err.Error(), "pass --download") ||
		!strings.Contains(err.Error(), "cmd/sample or cmd/train fetch the four MNIST files with --download") {
		t.Errorf("%v; want a usage error naming the missing file and that sample and train fetch it", err)
	}
}
