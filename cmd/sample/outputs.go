package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/floats"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// runKind is what sample writes into --out: its files, which --force
// removes before a new run. trace.csv is no longer written (the old
// --trace N; --trace-every streams trace.bin instead) but stays in the
// list, so that --force on the directory of a run from before removes it
// too, rather than leaving it beside the new run's files.
var runKind = cli.RunKind{
	Command: cli.KindSample,
	Files:   []string{metricsFile, "metrics.png", "metrics.svg", summaryFile, checkpointFile, configFile, "trace.csv", traceStream, traceNetCDF},
	Keep: func(dir string) string {
		if _, err := os.Stat(filepath.Join(dir, checkpointFile)); err == nil {
			return "continue it with --resume " + dir + ", give --force to replace it, or choose another --out"
		}
		return "give --force to replace it, or choose another --out"
	},
}

// The chains' kinetic temperature (samplers.KineticTemperatures), which
// metrics.csv reports after the task's metrics for the samplers whose
// momenta are N(0, I) at equilibrium, and summary.json at the end of the
// run: the mean over the chains, the hottest chain's, and the share of the
// coordinates that run hot across the chains (samplers.HotFraction). A
// sampler that heats its chains (gradient noise its friction does not carry
// off, a step size too large) shows above 1; one that heats a block of
// coordinates shows a hot share well above samplers.HotLevel (0.001)
// though its temperature may be close to 1. On a task whose monitor names
// blocks of coordinates (tasks.Blocker: an MLP's layers), each block's
// temperature follows, as kinetic_temperature_ and the block's name.
const (
	metricTemperature    = "kinetic_temperature"
	metricTemperatureMax = "kinetic_temperature_max"
	metricHotFraction    = "kinetic_hot_fraction"
)

// temperatureMetrics returns the kinetic temperature of the k chains
// whose momenta are p, at step, and of each of blocks, as metrics, with a
// warning when the hottest chain's has run away
// (samplers.RunawayTemperature), "" otherwise.
func temperatureMetrics(p []float64, k, step int, blocks []tasks.Block) ([]tasks.Metric, string, error) {
	temps, err := samplers.KineticTemperatures(p, k)
	if err != nil {
		return nil, "", err
	}
	hottest := 0 // or the first not finite
	for c, t := range temps {
		if t > temps[hottest] || math.IsNaN(t) {
			hottest = c
			if math.IsNaN(t) {
				break
			}
		}
	}
	hotShare, err := samplers.HotFraction(p, k)
	if err != nil {
		return nil, "", err
	}
	ms := []tasks.Metric{{Name: metricTemperature, Value: floats.Sum(temps) / float64(k)}, {Name: metricTemperatureMax, Value: temps[hottest]},
		{Name: metricHotFraction, Value: hotShare}}
	for _, b := range blocks {
		q := p[b.Lo*k : b.Hi*k] // coordinate-major
		ms = append(ms, tasks.Metric{Name: metricTemperature + "_" + b.Name, Value: floats.Dot(q, q) / float64(len(q))})
	}
	hot := ""
	if t := temps[hottest]; !(t <= samplers.RunawayTemperature) {
		hot = fmt.Sprintf("chain %d's kinetic temperature (its mean squared momentum) is %.3g at step %d, where a chain at equilibrium has 1: its momenta ran away (or the run is within its burn-in), and its draws are nothing like the target's whatever the ensemble's metrics say; lower the step size, or run longer", hottest, t, step)
	}
	return ms, hot, nil
}

// metricsLine formats metrics for a log line, as "kl=0.1234 ess=56.78".
func metricsLine(ms []tasks.Metric) string {
	var b strings.Builder
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%.4g", m.Name, m.Value)
	}
	return b.String()
}
