package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/sweep"
)

// writeSweepRun writes a sample run's files into dir: a metric at steps 10 and
// 20, and its summary.
func writeSweepRun(t *testing.T, dir string, kl10, kl20 float64, summary string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	csv := "step,seconds,kl\n10,1," + ftoa(kl10) + "\n20,2," + ftoa(kl20) + "\n"
	os.WriteFile(filepath.Join(dir, "metrics.csv"), []byte(csv), 0o644)
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte(summary), 0o644)
}

// writeToySweep writes exp/table.sweep: runs toy/{sampler}-{seed} of the
// seeds, samplers nn (NNSGHMC) and sghmc (SGHMC), and the lines rest.
func writeToySweep(t *testing.T, exp, seeds, rest string) string {
	t.Helper()
	os.MkdirAll(exp, 0o755)
	file := filepath.Join(exp, "table.sweep")
	text := "out toy/{sampler}-{seed}\nseeds " + seeds + "\naxis sampler nn=NNSGHMC --sampler nnsghmc\naxis sampler sghmc=SGHMC --sampler sghmc\n" + rest
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestSweepGathersWhatHasEnded checks figures sweep on a sweep whose runs
// have partly ended: a row per sampler over the seeds that ended (the
// failed run's error in its row), the runs that have not named under the
// table and on standard error, the table file beside the sweep file and in
// its README between the markers, and the curves.
func TestSweepGathersWhatHasEnded(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	file := writeToySweep(t, exp, "1-3", `table table.md --metric kl --steps 10,20
table table.md --metric kl --steps 20 --summary ess
curves kl --metric kl
`)
	readme := "# exp\n\nbefore\n<!-- table.md -->\nold table\n<!-- /table.md -->\nafter\n"
	os.WriteFile(filepath.Join(exp, "README.md"), []byte(readme), 0o644)
	runs := filepath.Join(dir, "runs")
	writeSweepRun(t, filepath.Join(runs, "toy", "nn-1"), 4, 2, `{"ess": 10}`)
	writeSweepRun(t, filepath.Join(runs, "toy", "nn-2"), 6, 4, `{"ess": 20}`)
	writeSweepRun(t, filepath.Join(runs, "toy", "sghmc-1"), 8, 6, `{"ess": 5}`)
	writeSweepRun(t, filepath.Join(runs, "toy", "sghmc-2"), 8, 6, `{"error": "chain 1 diverged at step 25"}`)
	// sghmc-3 was interrupted before a checkpoint: it has not ended
	writeSweepRun(t, filepath.Join(runs, "toy", "sghmc-3"), 8, 6, `{"error": "interrupted by SIGTERM"}`)
	// nn-3 never started
	want := `| run | kl at 10 | kl at 20 | stopped |
| --- | --- | --- | --- |
| NNSGHMC | 5 ± 1 | 3 ± 1 |  |
| SGHMC | 8 ± 0 | 6 ± 0 | chain 1 diverged at step 25 |

| run | kl at 20 | ess | stopped |
| --- | --- | --- | --- |
| NNSGHMC | 3 ± 1 | 15 ± 5 |  |
| SGHMC | 6 ± 0 | 5 | chain 1 diverged at step 25 |

Not in the tables: 2 of the sweep's 6 runs, which have not ended: toy/nn-3 (new), toy/sghmc-3 (started).
`
	out, err := clitest.Stdout(t, func() error {
		return run(context.Background(), []string{"sweep", "--runs", runs, "--stdout", file})
	})
	if err != nil || out != want {
		t.Errorf("figures sweep --stdout: %v\n%s\nwant\n%s", err, out, want)
	}
	if _, err := os.Stat(filepath.Join(exp, "table.md")); err == nil {
		t.Errorf("--stdout wrote table.md")
	}
	if err := run(context.Background(), []string{"sweep", "--runs", runs, file}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(exp, "table.md")); err != nil || string(b) != want {
		t.Errorf("table.md: %v\n%s\nwant\n%s", err, b, want)
	}
	b, _ := os.ReadFile(filepath.Join(exp, "README.md"))
	if wantReadme := strings.Replace(readme, "old table\n", want, 1); string(b) != wantReadme {
		t.Errorf("README.md:\n%s\nwant\n%s", b, wantReadme)
	}
	for _, ext := range []string{".png", ".svg"} {
		if info, err := os.Stat(filepath.Join(exp, "kl"+ext)); err != nil || info.Size() == 0 {
			t.Errorf("kl%s: %v", ext, err)
		}
	}
	// nothing ended: no table, and a word on standard error
	if err := run(context.Background(), []string{"sweep", "--runs", t.TempDir(), "--stdout", file}); err != nil {
		t.Errorf("a sweep with no run ended: %v", err)
	}
}

// TestSweepRefusesBadInput checks one-line usage errors.
func TestSweepRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.sweep")
	os.WriteFile(bad, []byte("out x\nseeds 1 2\n"), 0o644)
	eq := filepath.Join(dir, "eq.sweep")
	os.WriteFile(eq, []byte("out x/{a}\naxis a a=\"x=y\"\naxis a b\ntable t.md --metric kl\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep"}, "no sweep file given"},
		{[]string{"sweep", filepath.Join(dir, "none.sweep")}, "cannot read sweep file"},
		{[]string{"sweep", bad}, "lacks {seed}"},
		{[]string{"sweep", eq}, `the row name "x=y" has a '='`},
	} {
		err := run(context.Background(), tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

// TestSweepRecordOutlivesTheRuns checks a sweep with a record line:
// figures sweep keeps each ended run's files under the record directory
// beside the sweep file (a run that has not ended gets none), and builds
// the same table, byte for byte, once the runs directory is gone; a
// record is brought up to date when its run's files change.
func TestSweepRecordOutlivesTheRuns(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	file := writeToySweep(t, exp, "1-2", `table table.md --metric kl --steps 10,20 --summary ess
record results
`)
	runs := filepath.Join(dir, "runs")
	writeSweepRun(t, filepath.Join(runs, "toy", "nn-1"), 4, 2, `{"ess": 10}`)
	writeSweepRun(t, filepath.Join(runs, "toy", "nn-2"), 6, 4, `{"ess": 20}`)
	writeSweepRun(t, filepath.Join(runs, "toy", "sghmc-1"), 8, 6, `{"error": "chain 1 diverged at step 25"}`)
	writeSweepRun(t, filepath.Join(runs, "toy", "sghmc-2"), 8, 6, `{"error": "interrupted by SIGTERM"}`)
	gather := func(runs string) string {
		t.Helper()
		out, err := clitest.Stdout(t, func() error {
			return run(context.Background(), []string{"sweep", "--runs", runs, "--stdout", file})
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := gather(runs)
	if !strings.Contains(before, "| NNSGHMC | 5 ± 1 | 3 ± 1 | 15 ± 5 |") || !strings.Contains(before, "toy/sghmc-2 (started)") {
		t.Fatalf("the table from the runs:\n%s", before)
	}
	for _, run := range []string{"nn-1", "nn-2", "sghmc-1"} {
		for _, name := range []string{"summary.json", "metrics.csv"} {
			want, _ := os.ReadFile(filepath.Join(runs, "toy", run, name))
			if got, err := os.ReadFile(filepath.Join(exp, "results", "toy", run, name)); err != nil || string(got) != string(want) {
				t.Errorf("the record of %s: %s: %v %q, want %q", run, name, err, got, want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(exp, "results", "toy", "sghmc-2")); err == nil {
		t.Errorf("a run that has not ended was recorded")
	}
	// the run that had not ended is gone with the runs directory: new
	want := strings.Replace(before, "toy/sghmc-2 (started)", "toy/sghmc-2 (new)", 1)
	if after := gather(filepath.Join(dir, "gone")); after != want {
		t.Errorf("the table from the record alone:\n%s\nwant, as from the runs:\n%s", after, want)
	}
	writeSweepRun(t, filepath.Join(runs, "toy", "nn-1"), 4, 1, `{"ess": 12}`)
	gather(runs)
	if b, _ := os.ReadFile(filepath.Join(exp, "results", "toy", "nn-1", "summary.json")); string(b) != `{"ess": 12}` {
		t.Errorf("the record after its run changed: %s", b)
	}
}

// TestSweepLeavesStaleRunsOut checks that a run that ended with flags the
// sweep no longer sets (a flag file or the sweep changed since) is left
// out of the tables and named under them with the flags that differ.
func TestSweepLeavesStaleRunsOut(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	file := writeToySweep(t, exp, "1-2", "table table.md --metric kl --steps 20\n")
	runs := filepath.Join(dir, "runs")
	writeSweepRun(t, filepath.Join(runs, "toy", "nn-1"), 4, 2, `{"flags": {"sampler": "nnsghmc", "seed": "1"}}`)
	writeSweepRun(t, filepath.Join(runs, "toy", "nn-2"), 6, 4, `{"flags": {"sampler": "nnsghmc", "seed": "2"}}`)
	writeSweepRun(t, filepath.Join(runs, "toy", "sghmc-1"), 8, 6, `{"flags": {"sampler": "sghmc", "seed": "1"}}`)
	writeSweepRun(t, filepath.Join(runs, "toy", "sghmc-2"), 8, 9, `{"flags": {"sampler": "sgld", "seed": "2"}}`)
	want := `| run | kl at 20 |
| --- | --- |
| NNSGHMC | 3 ± 1 |
| SGHMC | 6 |

Not in the table: 1 of the sweep's 4 runs, which have not ended or ran with flags or input files that have changed since: toy/sghmc-2 (stale: sampler ran sgld, now sghmc).
`
	out, err := clitest.Stdout(t, func() error {
		return run(context.Background(), []string{"sweep", "--runs", runs, "--stdout", file})
	})
	if err != nil || out != want {
		t.Errorf("figures sweep --stdout: %v\n%s\nwant\n%s", err, out, want)
	}
}

// TestSweepDrawsRunsThatHaveNotEnded checks that figures sweep draws the
// curves of the runs that have not ended as far as they were scored,
// named as such, from the runs directory or from the metrics its record
// kept of a stopped run, and leaves them out of the tables; a run that
// has not been scored gets no curve.
func TestSweepDrawsRunsThatHaveNotEnded(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	file := filepath.Join(exp, "table.sweep")
	os.MkdirAll(exp, 0o755)
	os.WriteFile(file, []byte(`out toy/{sampler}-{seed}
seeds 1
axis sampler nn=NNSGHMC --sampler nnsghmc
axis sampler sghmc=SGHMC --sampler sghmc
axis sampler sgld=SGLD --sampler sgld
axis sampler adam=Adam --sampler adam
table table.md --metric kl --steps 10
curves kl --metric kl --zoom NNSGHMC,SGHMC
record results
`), 0o644)
	runs := filepath.Join(dir, "runs")
	writeSweepRun(t, filepath.Join(runs, "toy", "sghmc-1"), 8, 6, `{}`)
	// nn-1 was stopped by a signal in a runs directory since lost: its record keeps its metrics
	kept := filepath.Join(exp, "results", "toy", "nn-1", "metrics-stopped.csv")
	os.MkdirAll(filepath.Dir(kept), 0o755)
	os.WriteFile(kept, []byte("step,seconds,kl\n10,1,4\n"), 0o644)
	// sgld-1 is stopped at a checkpoint in the runs directory
	writeSweepRun(t, filepath.Join(runs, "toy", "sgld-1"), 9, 7, `{"error": "interrupted by SIGTERM"}`)
	os.WriteFile(filepath.Join(runs, "toy", "sgld-1", "checkpoint.json"), []byte(`{"state": {"steps": 10}}`), 0o644)
	// adam-1 has started and not been scored
	os.MkdirAll(filepath.Join(runs, "toy", "adam-1"), 0o755)
	os.WriteFile(filepath.Join(runs, "toy", "adam-1", "metrics.csv"), []byte("step,seconds,kl\n"), 0o644)
	s, err := sweep.Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	rows, partial, note, err := sweepRows(s, runs)
	if err != nil {
		t.Fatal(err)
	}
	wantRows := []string{"SGHMC=" + filepath.Join(runs, "toy", "sghmc-1")}
	wantPartial := []string{
		"NNSGHMC (not ended)=" + kept,
		"SGLD (not ended)=" + filepath.Join(runs, "toy", "sgld-1", "metrics.csv"),
	}
	if !slices.Equal(rows, wantRows) || !slices.Equal(partial, wantPartial) {
		t.Errorf("sweepRows: rows %q, partial %q; want %q, %q", rows, partial, wantRows, wantPartial)
	}
	if !strings.Contains(note, "toy/sgld-1 (stopped)") || !strings.Contains(note, "toy/nn-1 (new; an earlier run's metrics") {
		t.Errorf("the note under the table: %s", note)
	}
	if err := run(context.Background(), []string{"sweep", "--runs", runs, file}); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".png", ".svg"} {
		if info, err := os.Stat(filepath.Join(exp, "kl"+ext)); err != nil || info.Size() == 0 {
			t.Errorf("kl%s: %v", ext, err)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(exp, "kl.svg"))
	for _, name := range []string{"NNSGHMC (not ended)", "SGLD (not ended)", "zoom on NNSGHMC (SGHMC above"} {
		if !strings.Contains(string(svg), name) {
			t.Errorf("kl.svg does not name %q", name)
		}
	}
	if strings.Contains(string(svg), "Adam") {
		t.Errorf("kl.svg draws Adam, which has not been scored")
	}
}
