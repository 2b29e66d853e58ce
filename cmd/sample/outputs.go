package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
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

// The chains' kinetic temperature (samplers.KineticTemperature), which
// metrics.csv reports after the task's metrics for the samplers whose
// momenta are N(0, I) at equilibrium, and summary.json at the last
// evaluation: the mean over the chains and the hottest chain's. A sampler
// that heats its chains (gradient noise its friction does not carry off, a
// step size too large) shows above 1.
const (
	metricTemperature    = "kinetic_temperature"
	metricTemperatureMax = "kinetic_temperature_max"
)

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
