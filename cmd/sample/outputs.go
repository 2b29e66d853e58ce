package main

import (
	"fmt"
	"strings"

	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// outputFiles are the files that sample writes into --out; --force removes
// them before a new run. trace.csv is no longer written (the old --trace N;
// --trace-every streams trace.bin instead) but stays in the list, so that
// --force on the directory of a run from before removes it too, rather
// than leaving it beside the new run's files.
var outputFiles = []string{metricsFile, "metrics.png", "metrics.svg", summaryFile, checkpointFile, configFile, "trace.csv", traceStream, traceNetCDF}

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
