package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
	"github.com/metasgmcmc/metasgmcmc/tasks/gru"
)

func TestEarlyStopFollowsTheValidationNLL(t *testing.T) {
	tests := []struct {
		name     string
		valid    []float64 // valid_nll at evaluations 1, 2, …
		patience int
		stopAt   int // the evaluation observe stops at, 0 for none
		best     int // the evaluation of the best valid_nll
	}{
		{"improving", []float64{5, 4, 3, 2}, 2, 0, 4},
		{"worse twice", []float64{5, 4, 4.5, 4.2, 3}, 2, 4, 2},
		{"a tie is no improvement", []float64{5, 4, 4, 4}, 2, 4, 2},
		{"recovers in time", []float64{5, 4, 4.5, 3.9, 4.1, 4.0, 3.8}, 3, 0, 7},
		{"patience 1", []float64{5, 6}, 1, 2, 1},
		{"no patience runs on", []float64{5, 6, 7, 8}, 0, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e earlyStop
			stopped := 0
			for i, v := range tc.valid {
				ms := []tasks.Metric{{Name: gru.MetricTestNLL, Value: 10 * v}, {Name: gru.MetricValidNLL, Value: v}}
				if e.observe(10*(i+1), ms, tc.patience) {
					stopped = i + 1
					break
				}
			}
			if stopped != tc.stopAt {
				t.Errorf("stopped at evaluation %d, want %d", stopped, tc.stopAt)
			}
			summary := map[string]any{}
			e.summarise(summary)
			want := tc.valid[tc.best-1]
			if summary["best_valid_nll"] != want || summary["best_valid_step"] != 10*tc.best || summary["test_nll_at_best_valid"] != 10*want ||
				summary["stopped_early"] != (tc.stopAt > 0) {
				t.Errorf("summary %v; want the best %v at step %d", summary, want, 10*tc.best)
			}
		})
	}
	// without a validation split: nothing followed, nothing summarised
	var e earlyStop
	if e.observe(1, []tasks.Metric{{Name: gru.MetricTestNLL, Value: 3}}, 1) || e.observe(2, []tasks.Metric{{Name: gru.MetricTestNLL, Value: 4}}, 1) {
		t.Error("stopped without valid_nll")
	}
	summary := map[string]any{}
	e.summarise(summary)
	if len(summary) != 0 {
		t.Errorf("summary without valid_nll: %v", summary)
	}
}

// TestPatienceStopsAGRURun runs SGHMC on a small GRU on Piano with a
// learning rate large enough that the validation NLL turns up after a few
// evaluations: the run stops patience evaluations after its best, and
// summary.json names that best, its step and the test NLL there, as
// metrics.csv has them.
func TestPatienceStopsAGRURun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: data tasks skipped")
	}
	if _, err := os.Stat(filepath.Join(datadir.Dir(""), "music", "Piano_midi.mat")); err != nil {
		t.Skipf("data not available (%v); set %s", err, datadir.EnvVar)
	}
	const patience, steps = 2, 60
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"-task", "piano-gru", "-sampler", "sghmc", "-hidden", "4", "-chains", "2", "-steps", strconv.Itoa(steps),
		"-eval-every", "3", "-valid", "-patience", strconv.Itoa(patience), "-lr", "0.05", "-quiet", "-out", out}
	if err := run(t.Context(), args); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	col := map[string]int{}
	for i, name := range strings.Split(lines[0], ",") {
		col[name] = i
	}
	bestRow, best := -1, math.Inf(1)
	var rows [][]string
	for _, line := range lines[1:] {
		r := strings.Split(line, ",")
		rows = append(rows, r)
		if v, _ := strconv.ParseFloat(r[col["valid_nll"]], 64); v < best {
			best, bestRow = v, len(rows)-1
		}
	}
	if len(rows) != bestRow+1+patience {
		t.Fatalf("%d evaluations, the best at evaluation %d: want the run to stop %d after it", len(rows), bestRow+1, patience)
	}
	var summary map[string]any
	if b, err = os.ReadFile(filepath.Join(out, "summary.json")); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Fatal(err)
	}
	last, _ := strconv.Atoi(rows[len(rows)-1][0])
	bestStep, _ := strconv.Atoi(rows[bestRow][0])
	test, _ := strconv.ParseFloat(rows[bestRow][col["test_nll"]], 64)
	if last >= steps || summary["steps"] != float64(last) || summary["stopped_early"] != true ||
		summary["best_valid_nll"] != best || summary["best_valid_step"] != float64(bestStep) || summary["test_nll_at_best_valid"] != test {
		t.Errorf("summary %v; want a stop at step %d < %d with the best valid_nll %v at step %d, test_nll %v", summary, last, steps, best, bestStep, test)
	}
}
