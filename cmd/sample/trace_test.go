package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
	"github.com/metasgmcmc/metasgmcmc/samplers"
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
// chain, the first --trace-coords coordinates, which are those of the
// positions that a run with --trace-every 1 of all coordinates streams at
// those steps; the same seed gives the same bytes; trace.nc is written from
// it in a build with netCDF, and only there.
func TestTraceStreamsDraws(t *testing.T) {
	outs := []string{t.TempDir(), t.TempDir()}
	for _, out := range outs {
		if err := run(context.Background(), append(small, "-trace-every", "7", "-trace-coords", "3", "-out", out)); err != nil {
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
	// every step, every coordinate: a draw per step 1…30, whose first
	// coordinates at steps 7, 14, … are the thinned draws'
	every := t.TempDir()
	if err := run(context.Background(), append(small, "-trace-every", "1", "-trace-coords", "0", "-out", every)); err != nil {
		t.Fatal(err)
	}
	he, all := readTrace(t, every)
	if len(he.Coords) != 20 || len(all) != 30 || len(all[0].Theta) != 80 {
		t.Fatalf("--trace-every 1 --trace-coords 0: %d coordinates, %d draws", len(he.Coords), len(all))
	}
	for _, d := range ds {
		e := all[d.Step-1]
		if e.Step != d.Step {
			t.Fatalf("draw %d of --trace-every 1 is of step %d", d.Step-1, e.Step)
		}
		for k := 0; k < 4; k++ {
			for j := 0; j < 3; j++ {
				if got, want := d.Theta[k*3+j], e.Theta[k*20+j]; got != want {
					t.Errorf("step %d chain %d coordinate %d: %v, with --trace-every 1 %v", d.Step, k, j, got, want)
				}
			}
		}
	}
	if all[0].Theta[0] == all[1].Theta[0] || all[0].Theta[0] == all[0].Theta[20] {
		t.Errorf("the chains do not move, or chains 0 and 1 are alike: %v", all[:2])
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
}

// TestTracerWritesTheStatesItObserves: the tracer keeps every --trace-every
// steps the states that the run hands it, the first --trace-coords
// coordinates of each chain and lp = −U; the run-level test above compares
// thinned streams with a stream of every step, and this one pins what a
// stream of every step holds to the states themselves.
func TestTracerWritesTheStatesItObserves(t *testing.T) {
	out := t.TempDir()
	const k, d = 2, 3
	tr, err := newTracer(options{task: "gaussian20", sampler: "sghmc", out: out, chains: k, traceEvery: 2, traceCoords: 2}, d, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.abort()
	for step := 1; step <= 5; step++ {
		theta := make([]float64, d*k) // coordinate i of chain c at i·K + c
		for i := 0; i < d; i++ {
			for c := 0; c < k; c++ {
				theta[i*k+c] = float64(100*step + 10*c + i)
			}
		}
		u := []float64{float64(step), float64(-step)}
		if err := tr.observe(step, &samplers.State{Theta: theta, Eval: &samplers.Eval{U: u}, Steps: step}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := tr.finish(out); err != nil || n != 2 {
		t.Fatalf("finish: %d draws, %v", n, err)
	}
	_, ds := readTrace(t, out)
	want := []trace.Draw{
		{Step: 2, Theta: []float64{200, 201, 210, 211}, Stats: []float64{-2, 2}},
		{Step: 4, Theta: []float64{400, 401, 410, 411}, Stats: []float64{-4, 4}},
	}
	if !reflect.DeepEqual(ds, want) {
		t.Errorf("draws %+v, want %+v", ds, want)
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
	first := clitest.Start(t, append(long, "-trace-every", "50", "-out", out)...)
	clitest.WaitFor(t, filepath.Join(out, "metrics.csv"))
	first.Cmd.Process.Signal(syscall.SIGINT)
	first.Cmd.Wait()
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
