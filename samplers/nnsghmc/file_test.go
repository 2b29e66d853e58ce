package nnsghmc_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// TestTrainedFileRoundTripIsBitExact: a trained sampler written by Encode
// and read by Load comes back exactly, weights bit for bit.
func TestTrainedFileRoundTripIsBitExact(t *testing.T) {
	tr := nnsghmc.RandomTrained([]int{10}, []int{10}, nnsghmc.Inputs{EnergyScale: -1, GradScale: 70, MomentumScale: 1}, 50,
		rand.New(rand.NewPCG(1, 2)))
	energy, momentum, gradient := nnsghmc.Range{Min: -1.25, Max: -0.3}, nnsghmc.Range{Min: -3.5, Max: 3.25}, nnsghmc.Range{Min: -0.1, Max: 0.7}
	tr.Domain = nnsghmc.Domain{Dim: 15910, DataSize: 60000, StepSize: nnsghmc.Range{Min: math.Sqrt(0.007 / 60000), Max: math.Sqrt(0.007 / 60000)},
		Energy: &energy, Momentum: &momentum, Gradient: &gradient}
	tr.Training = map[string]any{"task": "mnist-relu"}
	var buf bytes.Buffer
	if err := tr.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sampler.json")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := nnsghmc.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, tr) { // DeepEqual compares floats exactly
		t.Errorf("round trip changed the trained sampler:\n got %+v\nwant %+v", got, tr)
	}
	for i, p := range append(tr.Q.Params(), tr.D.Params()...) {
		q := append(got.Q.Params(), got.D.Params()...)[i]
		for j := range p {
			if math.Float64bits(p[j]) != math.Float64bits(q[j]) {
				t.Fatalf("weight %d[%d]: %v became %v", i, j, p[j], q[j])
			}
		}
	}
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(buf.Bytes(), &head); err != nil || head.Format != nnsghmc.FileFormat || head.Version != nnsghmc.FileVersion {
		t.Errorf("file header %+v (%v), want format %q version %d", head, err, nnsghmc.FileFormat, nnsghmc.FileVersion)
	}
}

// TestLoadReadsVersion1: a file of version 1, as the old samplers.SamplerFile
// wrote it (settings and networks in "config"), gives its networks, input
// scalings, d_scale, training dimension and step sizes; its run settings
// are not read.
func TestLoadReadsVersion1(t *testing.T) {
	tr := nnsghmc.RandomTrained([]int{10}, []int{10}, nnsghmc.Inputs{}, 0, rand.New(rand.NewPCG(3, 4)))
	v1 := map[string]any{
		"format":  nnsghmc.FileFormat,
		"version": 1,
		"config": map[string]any{
			"step_size": 0.025, "alpha": 0.3, "beta": -1.5, "c": 100, "clamp_q": 5, "d_max": 1000, "d_scale": 50,
			"energy_scale": -1, "grad_scale": 70, "momentum_scale": 1.5, "train_dim": 15910, "gamma": "fd",
			"f_q": tr.Q, "f_d": tr.D,
		},
		"training": map[string]any{"task": "mnist-relu", "continue_step_size": 0.05},
	}
	b, err := json.MarshalIndent(v1, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v1.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := nnsghmc.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &nnsghmc.Trained{Q: tr.Q, D: tr.D, Inputs: nnsghmc.Inputs{EnergyScale: -1, GradScale: 70, MomentumScale: 1.5}, DScale: 50,
		Domain:   nnsghmc.Domain{Dim: 15910, StepSize: nnsghmc.Range{Min: 0.025, Max: 0.05}, Friction: nnsghmc.FrictionExplicit},
		Training: map[string]any{"task": "mnist-relu", "continue_step_size": 0.05}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("version 1 read as\n %+v\nwant %+v", got, want)
	}
}

// Files of version 2 record no friction step and were trained with the
// explicit one; version 3 keeps what it records, none for untrained
// networks.
func TestLoadGivesTheTrainedFriction(t *testing.T) {
	tr := nnsghmc.RandomTrained([]int{4}, []int{4}, rawInputs, 1, rand.New(rand.NewPCG(3, 4)))
	for _, c := range []struct {
		version int
		written nnsghmc.Friction
		want    nnsghmc.Friction
	}{{2, "", nnsghmc.FrictionExplicit}, {3, "", ""}, {3, nnsghmc.FrictionExponential, nnsghmc.FrictionExponential},
		{3, nnsghmc.FrictionExplicit, nnsghmc.FrictionExplicit}} {
		tr.Domain.Friction = c.written
		var buf bytes.Buffer
		if err := tr.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		b := bytes.Replace(buf.Bytes(), []byte(fmt.Sprintf(`"version": %d`, nnsghmc.FileVersion)), []byte(fmt.Sprintf(`"version": %d`, c.version)), 1)
		path := filepath.Join(t.TempDir(), "s.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := nnsghmc.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.Domain.Friction != c.want {
			t.Errorf("version %d written with friction %q: read %q, want %q", c.version, c.written, got.Domain.Friction, c.want)
		}
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"not json":         "{",
		"wrong format":     `{"format":"other","version":2}`,
		"wrong version":    `{"format":"metasgmcmc/nnsghmc","version":99}`,
		"no networks":      `{"format":"metasgmcmc/nnsghmc","version":2,"d_scale":1}`,
		"no networks (v1)": `{"format":"metasgmcmc/nnsghmc","version":1,"config":{"step_size":0.1}}`,
	}
	for name, body := range cases {
		path := filepath.Join(dir, strings.NewReplacer(" ", "_", "(", "", ")", "").Replace(name)+".json")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := nnsghmc.Load(path); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := nnsghmc.Load(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("missing file: %v", err)
	}
}
