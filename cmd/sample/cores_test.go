package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// TestCoreCountsGiveTheSameRun runs the same short mnist-nt runs on one
// core and on two: every parallel kernel adds its partial results in an
// order fixed by its spans and the normal draws are tied to their spans,
// so the draws (every coordinate at every step) and the test-set metrics
// must be bit-identical.
func TestCoreCountsGiveTheSameRun(t *testing.T) {
	datatest.Need(t, "mnist/train-labels-idx1-ubyte.gz")
	t.Chdir("../..") // the flag file names the sampler file from the repository's root
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"SGHMC float64", []string{"--flagfile", "experiments/mnist-nt/sghmc.flags"}},
		{"NNSGHMC float32", []string{"--flagfile", "experiments/mnist-nt/nnsghmc.flags", "--float32"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var outs []string
			for _, procs := range []int{1, 2} {
				out := filepath.Join(t.TempDir(), "run")
				args := append(tc.args[:len(tc.args):len(tc.args)], "--chains", "4", "--steps", "8", "--eval-every", "4",
					"--trace-every", "1", "--trace-coords", "0", "--quiet", "--out", out)
				func() {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					if err := run(context.Background(), args); err != nil {
						t.Fatal(err)
					}
				}()
				outs = append(outs, out)
			}
			for _, name := range []string{traceStream, "metrics.csv"} {
				a, errA := os.ReadFile(filepath.Join(outs[0], name))
				b, errB := os.ReadFile(filepath.Join(outs[1], name))
				if errA != nil || errB != nil {
					t.Fatal(errA, errB)
				}
				if name == "metrics.csv" {
					a, b = dropColumn(a, 1), dropColumn(b, 1) // seconds differ
				}
				if len(a) == 0 || !bytes.Equal(a, b) {
					t.Errorf("%s differs between one core and two (%d and %d bytes)", name, len(a), len(b))
				}
			}
		})
	}
}
