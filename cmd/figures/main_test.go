package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeRun writes a run directory with a metric at steps 10 and 20.
func fakeRun(t *testing.T, kl10, kl20 float64, summary string) string {
	t.Helper()
	dir := t.TempDir()
	csv := "step,seconds,kl\n10,1," + ftoa(kl10) + "\n20,2," + ftoa(kl20) + "\n"
	os.WriteFile(filepath.Join(dir, "metrics.csv"), []byte(csv), 0o644)
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte(summary), 0o644)
	return dir
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// capture runs f with standard output redirected and returns what it printed.
func capture(t *testing.T, f func() error) string {
	t.Helper()
	r, w, _ := os.Pipe()
	old := os.Stdout
	os.Stdout = w
	err := f()
	w.Close()
	os.Stdout = old
	b, _ := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTableAveragesRunsAndReportsFailures(t *testing.T) {
	a := fakeRun(t, 1, 0.5, `{"ess": 10}`)
	b := fakeRun(t, 3, 0.7, `{"ess": 20}`)
	c := fakeRun(t, 2, 0.1, `{"error": "chain 3 diverged at step 4"}`)
	out := capture(t, func() error {
		return run(context.Background(), []string{"table", "-metric", "kl", "-steps", "10,20", "-summary", "ess", "two=" + a + "," + b, "bad=" + c})
	})
	for _, want := range []string{"| run | kl at 10 | kl at 20 | ess | stopped |\n| --- | --- | --- | --- | --- |\n", "| two | 2 ± 1 | 0.6 ± 0.1 | 15 ± 5 |  |", "| bad | 2 | 0.1 | — | chain 3 diverged at step 4 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestTableShowsRankDiagnostics: the rank-normalised diagnostics that
// cmd/sample's Gaussian summaries hold beside the older ones tabulate like
// any other summary value.
func TestTableShowsRankDiagnostics(t *testing.T) {
	a := fakeRun(t, 1, 0.5, `{"rhat_max": 1.001, "rhat_rank_max": 1.062, "ess_bulk_min": 1338.4, "ess_tail_min": 97.2}`)
	out := capture(t, func() error {
		return run(context.Background(), []string{"table", "-summary", "rhat_max,rhat_rank_max,ess_bulk_min,ess_tail_min", "A=" + a})
	})
	for _, want := range []string{"| run | rhat_max | rhat_rank_max | ess_bulk_min | ess_tail_min |", "| A | 1.001 | 1.062 | 1338 | 97.2 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestCurvesWritesFigures(t *testing.T) {
	a := fakeRun(t, 1, 0.5, `{}`)
	out := filepath.Join(t.TempDir(), "kl")
	if err := run(context.Background(), []string{"curves", "-metric", "kl", "-out", out, "-steps-per-unit", "10", "A=" + a}); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".png", ".svg"} {
		if st, err := os.Stat(out + ext); err != nil || st.Size() == 0 {
			t.Errorf("missing %s: %v", ext, err)
		}
	}
}

func TestCurvesLeaveOutRunsStoppedBeforeScoring(t *testing.T) {
	a := fakeRun(t, 1, 0.5, `{}`)
	stopped := t.TempDir()
	os.WriteFile(filepath.Join(stopped, "summary.json"), []byte(`{"error": "chain 1 diverged at step 3"}`), 0o644)
	going := t.TempDir()
	os.WriteFile(filepath.Join(going, "summary.json"), []byte(`{}`), 0o644)
	out := filepath.Join(t.TempDir(), "kl")
	if err := run(context.Background(), []string{"curves", "-metric", "kl", "-out", out, "A=" + a, "B=" + stopped}); err != nil {
		t.Fatalf("a run that stopped before scoring should be left out: %v", err)
	}
	if _, err := os.Stat(out + ".png"); err != nil {
		t.Error(err)
	}
	err := run(context.Background(), []string{"curves", "-metric", "kl", "-out", out, "A=" + a, "C=" + going})
	if err == nil || !strings.Contains(err.Error(), "no metrics.csv") {
		t.Errorf("a run with neither metrics nor error: got %v, want an error naming the missing metrics.csv", err)
	}
}

func TestBadInput(t *testing.T) {
	a := fakeRun(t, 1, 0.5, `{}`)
	for _, args := range [][]string{
		{},
		{"pie"},
		{"curves", "-metric", "kl", "A=" + a},
		{"curves", "-metric", "nope", "-out", filepath.Join(t.TempDir(), "x"), "A=" + a},
		{"table", "A"},
		{"table", "A=" + filepath.Join(a, "missing")},
	} {
		if err := run(context.Background(), args); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}
