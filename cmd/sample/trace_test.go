package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
	"github.com/metasgmcmc/metasgmcmc/samplers/trace"
)

// readTrace reads every draw of a run's trace.bin.
func readTrace(t *testing.T, out string) (trace.Header, []trace.Draw) {
	t.Helper()
	h, ds, err := trace.ReadFile(filepath.Join(out, traceStream))
	if err != nil {
		t.Fatal(err)
	}
	return h, ds
}

// TestTraceStreamsDraws: --trace-every streams the thinned draws of every
// chain, the first --trace-coords coordinates, which are the positions
// that trace.csv holds at those steps; the same seed gives the same bytes;
// trace.nc is written from it in a build with netCDF, and only there.
func TestTraceStreamsDraws(t *testing.T) {
	outs := []string{t.TempDir(), t.TempDir()}
	for _, out := range outs {
		if err := run(context.Background(), append(small, "-trace", "4", "-trace-every", "7", "-trace-coords", "3", "-out", out)); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := os.ReadFile(filepath.Join(outs[0], traceStream))
	b, _ := os.ReadFile(filepath.Join(outs[1], traceStream))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("trace.bin differs between two runs with the same seed (%d and %d bytes)", len(a), len(b))
	}
	h, ds := readTrace(t, outs[0])
	if h.Chains != 4 || h.Dim != 20 || !reflect.DeepEqual(h.Coords, []int{0, 1, 2}) || len(h.Stats) != 1 || h.Stats[0].Name != "lp" ||
		h.Attrs["task"] != "gaussian20" || h.Attrs["sampler"] != "nnsghmc" || h.Attrs["seed"] != "3" || h.Attrs["trace_every"] != "7" {
		t.Errorf("header %+v", h)
	}
	var steps []int
	for _, d := range ds {
		steps = append(steps, d.Step)
		for _, lp := range d.Stats {
			if !(lp < 0 || lp >= 0) {
				t.Errorf("step %d: lp %v", d.Step, lp)
			}
		}
	}
	if !reflect.DeepEqual(steps, []int{7, 14, 21, 28}) {
		t.Errorf("steps %v", steps)
	}
	// trace.csv: step, chain, theta_0, …; the draws' θ are its first
	// coordinates at the same steps
	csv, _ := os.ReadFile(filepath.Join(outs[0], "trace.csv"))
	positions := map[[2]int][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(csv)), "\n")[1:] {
		f := strings.Split(line, ",")
		step, _ := strconv.Atoi(f[0])
		chain, _ := strconv.Atoi(f[1])
		positions[[2]int{step, chain}] = f[2:5]
	}
	for _, d := range ds {
		for k := 0; k < 4; k++ {
			for j := 0; j < 3; j++ {
				if got, want := strconv.FormatFloat(d.Theta[k*3+j], 'g', -1, 64), positions[[2]int{d.Step, k}][j]; got != want {
					t.Errorf("step %d chain %d coordinate %d: %s, trace.csv %s", d.Step, k, j, got, want)
				}
			}
		}
	}
	var sum map[string]any
	s, _ := os.ReadFile(filepath.Join(outs[0], "summary.json"))
	if err := json.Unmarshal(s, &sum); err != nil || sum["trace_draws"] != 4.0 {
		t.Errorf("summary.json: trace_draws %v (%v)", sum["trace_draws"], err)
	}
	_, err := os.Stat(filepath.Join(outs[0], traceNetCDF))
	if trace.NetCDF != (err == nil) {
		t.Errorf("trace.nc in a build with netCDF %v: %v", trace.NetCDF, err)
	}

	// all coordinates
	out := t.TempDir()
	if err := run(context.Background(), append(small, "-trace-every", "10", "-trace-coords", "0", "-out", out)); err != nil {
		t.Fatal(err)
	}
	if h, ds := readTrace(t, out); len(h.Coords) != 20 || len(ds) != 3 || len(ds[0].Theta) != 80 {
		t.Errorf("--trace-coords 0: %d coordinates, %d draws", len(h.Coords), len(ds))
	}
}

// TestTraceOfStoppedRuns: a run that diverges or is interrupted leaves a
// complete trace.bin with the draws so far.
func TestTraceOfStoppedRuns(t *testing.T) {
	out := t.TempDir()
	code, _ := clitest.Command(t, "--task", "gaussian20", "--sampler", "sghmc", "--step-size", "0.5", "--steps", "2000",
		"--eval-every", "10", "--trace-every", "3", "--quiet", "--out", out)
	if code != 1 {
		t.Errorf("diverging run: status %d", code)
	}
	if _, ds := readTrace(t, out); len(ds) != 3 || ds[2].Step != 9 { // diverged at step 11
		t.Errorf("diverged run: %d draws", len(ds))
	}

	out = filepath.Join(t.TempDir(), "out")
	first := start(t, append(long, "-trace-every", "50", "-out", out)...)
	waitFor(t, filepath.Join(out, "metrics.csv"))
	first.cmd.Process.Signal(syscall.SIGINT)
	first.cmd.Wait()
	_, ds := readTrace(t, out)
	var sum map[string]any
	s, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	json.Unmarshal(s, &sum)
	if len(ds) < 2 || sum["trace_draws"] != float64(len(ds)) || float64(ds[len(ds)-1].Step) > sum["steps"].(float64) {
		t.Errorf("interrupted run: %d draws, summary %v draws after %v steps", len(ds), sum["trace_draws"], sum["steps"])
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && e.Name() != ".lock" {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestTraceFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-trace-every", "-1"}, "--trace-every must be non-negative, got -1"},
		{[]string{"-trace-every", "2", "-trace-coords", "-3"}, "--trace-coords must be non-negative, got -3"},
		{[]string{"-trace-coords", "3"}, "--trace-coords chooses what --trace-every traces; give --trace-every N too"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, stderr := clitest.Command(t, append(tc.args, "-steps", "3", "-out", out)...)
		if code != 2 || stderr != "sample: error: "+tc.want+"\n" {
			t.Errorf("%v: status %d, stderr %q; want 2, %q", tc.args, code, stderr, tc.want)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: left --out behind", tc.args)
		}
	}
}
