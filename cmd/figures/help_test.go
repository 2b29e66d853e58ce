package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
)

// helpOf runs the command with args, which must ask for help, and returns
// what it printed on standard output.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	out, err := clitest.Stdout(t, func() error { return run(context.Background(), args) })
	if !errors.Is(err, pflag.ErrHelp) {
		t.Errorf("%v: error %v, want pflag.ErrHelp (status 0)", args, err)
	}
	return out
}

// TestHelpListsFiguresAndArguments is the regression test of "figures
// --help", "-h" and "help" failing as unknown figures: they print the
// command's description and its figures, and each figure's help (asked
// for either way) starts with its description and lists its NAME=DIR
// arguments.
func TestHelpListsFiguresAndArguments(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"help"}} {
		got := helpOf(t, args...)
		if !strings.HasPrefix(got, "figures: draws the experiments' figures and tables") {
			t.Errorf("%v: help does not start with the description:\n%s", args, got)
		}
		for _, f := range []string{"curves", "trajectories", "nets", "table", "lastlayer"} {
			if !strings.Contains(got, "\n  "+f+" ") {
				t.Errorf("%v: help does not list %s:\n%s", args, f, got)
			}
		}
	}
	for _, tc := range []struct {
		figure string
		want   []string
	}{
		{"curves", []string{"Usage: figures curves [flags] --out FIG NAME=DIR[,DIR...]...", "  NAME=DIR  ", "  NAME=DIR1,DIR2,...  ", "--metric string"}},
		{"table", []string{"Usage: figures table [flags] NAME=DIR[,DIR...]...", "  NAME=DIR  ", "  NAME=DIR1,DIR2,...  ", "--steps ints"}},
		{"trajectories", []string{"Usage: figures trajectories [flags] --out FIG NAME=DIR...", "  NAME=DIR  a run", "--task string"}},
		{"nets", []string{"Usage: figures nets [flags] --meta sampler.json --out DIR", "--meta string"}},
		{"lastlayer", []string{"Usage: figures lastlayer NAME=DIR[,DIR...]...", "a run of cmd/sample on an MLP task", "  NAME=DIR1,DIR2,...  "}},
	} {
		for _, args := range [][]string{{tc.figure, "--help"}, {tc.figure, "-h"}, {"help", tc.figure}} {
			got := helpOf(t, args...)
			if first, _, _ := strings.Cut(got, "\n"); !strings.HasPrefix(first, "figures "+tc.figure+": ") || len(first) < 30 {
				t.Errorf("%v: first line %q is not a description", args, first)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%v: help lacks %q:\n%s", args, w, got)
				}
			}
		}
	}
	var ue *cli.UsageError
	if err := run(context.Background(), []string{"help", "pie"}); !errors.As(err, &ue) {
		t.Errorf("help of an unknown figure: %v, want a usage error", err)
	}
}

// TestMissingColumnsAreUsageErrors is the regression test of "figures table
// -metric nosuch -steps 1000 A=DIR", which panicked: a metric or a column
// that a run's CSV lacks is a usage error naming the file and what it has;
// so is a trace that trajectories cannot draw.
func TestMissingColumnsAreUsageErrors(t *testing.T) {
	a := fakeRun(t, 1, 0.5, `{}`)
	trace3 := fakeTrace(t, 3, []int{0, 1, 2}, 1)
	oneCoord := fakeTrace(t, 2, []int{0}, 1)
	noDraws := fakeTrace(t, 2, []int{0, 1}, 0)
	noTrace := t.TempDir()
	notStream := t.TempDir()
	os.WriteFile(filepath.Join(notStream, "trace.bin"), []byte("step,chain,theta_0,theta_1\n1,0,1,2\n"), 0o644)
	fig := filepath.Join(t.TempDir(), "fig")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"table", "-metric", "nosuch", "-steps", "1000", "A=" + a}, `metrics.csv has no column "nosuch": give -metric one of kl`},
		{[]string{"table", "-metric", "nosuch", "-steps", "10", "A=" + a + "," + a}, `has no column "nosuch"`},
		{[]string{"curves", "-metric", "nosuch", "-out", fig, "A=" + a}, `metrics.csv has no column "nosuch": give -metric one of kl`},
		{[]string{"trajectories", "-out", fig, "A=" + trace3}, "does not hold 2-D positions (θ of 3 dimensions, coordinates [0 1 2] traced): trace a 2-D task with cmd/sample --trace-every 1"},
		{[]string{"trajectories", "-out", fig, "A=" + oneCoord}, "does not hold 2-D positions (θ of 2 dimensions, coordinates [0] traced)"},
		{[]string{"trajectories", "-out", fig, "A=" + noDraws}, filepath.Join(noDraws, "trace.bin") + " has no draws: trace a 2-D task with cmd/sample --trace-every 1"},
		{[]string{"trajectories", "-out", fig, "A=" + noTrace}, filepath.Join(noTrace, "trace.bin") + " does not exist: trace a 2-D task with cmd/sample --trace-every 1 --out " + noTrace},
		{[]string{"trajectories", "-out", fig, "A=" + notStream}, "not a complete trace stream"},
	} {
		err := run(context.Background(), tc.args)
		var ue *cli.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want a one-line usage error with %q", tc.args, err, tc.want)
		}
	}
	// without -steps the metric is not read: the summaries still print
	out := capture(t, func() error { return run(context.Background(), []string{"table", "-metric", "nosuch", "A=" + a}) })
	if !strings.Contains(out, "| A |") {
		t.Errorf("table without steps:\n%s", out)
	}
}

// TestLastLayerRefusesOtherRuns: figures lastlayer names a directory that
// is not a run of cmd/sample, or one of a task without an MLP, in one line.
func TestLastLayerRefusesOtherRuns(t *testing.T) {
	write := func(config string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	training := write(`{"command": "train", "flags": {"task": "mnist-relu"}}`)
	toy := write(`{"command": "sample", "flags": {"task": "gaussian10"}}`)
	for _, tc := range []struct {
		dir, want string
	}{
		{training, training + ` is not a run of cmd/sample (its config.json is of "train")`},
		{toy, toy + ` sampled task "gaussian10", not a Bayesian MLP`},
	} {
		err := run(context.Background(), []string{"lastlayer", "A=" + tc.dir})
		var ue *cli.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %v, want a one-line usage error with %q", err, tc.want)
		}
	}
}
