package main

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/trace"
)

// defaultTraceCoords is --trace-coords's default: every coordinate of the
// toy Gaussians, the first 100 of the networks' (all 80,000 weights of the
// MNIST network in 20 chains would be 12.8 MB a draw).
const defaultTraceCoords = 100

// The files of --trace-every: the stream, written as the run goes, and
// ArviZ's InferenceData written from it at the end.
const (
	traceStream = "trace.bin"
	traceNetCDF = "trace.nc"
)

// lpStat is trace.bin's sample stat.
// SG-MCMC evaluates the energy only at the positions a step starts from, so
// lp lags θ by one step.
var lpStat = trace.Stat{Name: "lp", Doc: "minus the stochastic energy U (on a minibatch for data tasks) " +
	"that the draw's step evaluated, at the positions one step before the draw"}

// tracer streams a run's draws to trace.bin (--trace-every).
type tracer struct {
	w     *trace.Writer
	every int
	lp    []float64 // one per chain
}

// newTracer starts trace.bin in o.out, or returns nil when --trace-every is
// 0. The header records the run in attributes, so the netCDF file says
// what it holds. A resumed run (draws ≥ 0, its checkpoint's count)
// continues the run's stream after its first draws, dropping those written
// after the checkpoint.
func newTracer(o options, d, draws int) (*tracer, error) {
	if o.traceEvery == 0 {
		return nil, nil
	}
	attrs := map[string]string{
		"task": o.task, "sampler": o.sampler, "seed": strconv.FormatUint(o.seed, 10), "dimension": strconv.Itoa(d),
		"trace_every": strconv.Itoa(o.traceEvery), "step_size": cli.FormatFloat(o.stepSize),
		"inference_library": trace.InferenceLibrary, "inference_library_version": versionString(cli.Version()),
	}
	h := trace.Header{Chains: o.chains, Dim: d, Coords: trace.FirstCoords(o.traceCoords, d), Stats: []trace.Stat{lpStat}, Attrs: attrs}
	path := filepath.Join(o.out, traceStream)
	var w *trace.Writer
	var err error
	switch {
	case draws < 0:
		w, err = trace.Create(path, h)
	default:
		w, err = trace.Append(path, h, draws)
		if err != nil {
			err = cli.Usagef("cannot resume %s: %v; %s", o.out, err, damaged)
		}
	}
	if err != nil {
		return nil, err
	}
	return &tracer{w: w, every: o.traceEvery, lp: make([]float64, o.chains)}, nil
}

// sync commits the draws so far to disk and returns their number, for the
// checkpoint that counts them (0 without a trace).
func (t *tracer) sync() (int, error) {
	if t == nil {
		return 0, nil
	}
	if err := t.w.Sync(); err != nil {
		return 0, err
	}
	return t.w.Draws(), nil
}

// observe writes the state after step when it is a draw (every --trace-every
// steps).
func (t *tracer) observe(step int, st *samplers.State) error {
	if t == nil || step%t.every != 0 {
		return nil
	}
	for k := range t.lp {
		t.lp[k] = math.NaN() // a kernel that keeps no energies
		if st.Eval != nil && len(st.Eval.U) == len(t.lp) {
			t.lp[k] = -st.Eval.U[k]
		}
	}
	return t.w.Write(step, st.Theta, t.lp)
}

// finish completes trace.bin with the draws so far and, in a build with
// netCDF, writes trace.nc from it. It returns the number of draws.
func (t *tracer) finish(out string) (int, error) {
	if t == nil {
		return 0, nil
	}
	if err := t.w.Close(); err != nil {
		return 0, err
	}
	if trace.NetCDF {
		if err := trace.ConvertFile(filepath.Join(out, traceNetCDF), filepath.Join(out, traceStream), time.Now()); err != nil {
			return 0, err
		}
	}
	return t.w.Draws(), nil
}

// abort ends trace.bin unfinished, unless finish completed it: its draws
// so far stay readable, and a resumed run continues it.
func (t *tracer) abort() {
	if t != nil {
		t.w.Abort()
	}
}

// versionString is cli.Version as one line, as "go1.26.8 revision=abc…
// modified=true", for the netCDF attribute inference_library_version.
func versionString(v map[string]any) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, v[k]))
	}
	return strings.Join(parts, " ")
}
