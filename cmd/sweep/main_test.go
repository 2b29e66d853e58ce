package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/sweep"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// buildFlags are the flags of go build for the binaries the tests run:
// the build tags of the tests' own build (tags_openblas_test.go).
var buildFlags []string

// binDir holds the binaries that binaries builds, removed by TestMain.
var binDir struct {
	once sync.Once
	dir  string
	err  error
	out  []byte
}

func TestMain(m *testing.M) {
	code := datatest.Main(m)
	for _, d := range []string{binDir.dir, local.dir} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
	os.Exit(code)
}

// binaries builds sweep, sample and figures, once for the package's tests,
// and returns their directory.
func binaries(t *testing.T) string {
	t.Helper()
	binDir.once.Do(func() {
		if binDir.dir, binDir.err = os.MkdirTemp("", "sweep-bin"); binDir.err != nil {
			return
		}
		args := append(append([]string{"build"}, buildFlags...), "-o", binDir.dir+string(filepath.Separator), "./cmd/sweep", "./cmd/sample", "./cmd/figures")
		cmd := exec.Command("go", args...)
		cmd.Dir = filepath.Join("..", "..")
		binDir.out, binDir.err = cmd.CombinedOutput()
	})
	if binDir.err != nil {
		t.Fatalf("go build: %v\n%s", binDir.err, binDir.out)
	}
	return binDir.dir
}

// command runs a binary of dir with args in the directory wd and returns
// its standard output; a failure fails t with its standard error.
func command(t *testing.T, wd, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = wd
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// writeSweep writes a sweep file into dir.
func writeSweep(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// metricsWithoutSeconds returns a run's metrics.csv without its seconds
// column, the one thing that differs between runs of the same flags.
func metricsWithoutSeconds(t *testing.T, dir string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range recs {
		b.WriteString(strings.Join(append(r[:1:1], r[2:]...), ",") + "\n")
	}
	return b.String()
}

// sameRuns fails t unless every run of s has finished under both roots
// with the same metrics but the seconds.
func sameRuns(t *testing.T, s *sweep.Sweep, a, b string) {
	t.Helper()
	for _, r := range s.Runs("") {
		ra, rb := filepath.Join(a, r.Dir), filepath.Join(b, r.Dir)
		for _, d := range []string{ra, rb} {
			if st, err := sweep.Inspect(d); err != nil || st.State != sweep.Finished {
				t.Errorf("run %d in %s: %v %v, want finished", r.Index, d, st, err)
			}
		}
		if ma, mb := metricsWithoutSeconds(t, ra), metricsWithoutSeconds(t, rb); ma != mb {
			t.Errorf("run %d: metrics differ:\n%s\n%s", r.Index, ma, mb)
		}
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		out, err := clitest.Stdout(t, func() error { return run(context.Background(), args) })
		if !errors.Is(err, pflag.ErrHelp) || !strings.HasPrefix(out, "sweep: runs an experiment's sweep file") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
		for _, c := range commands().List {
			if !strings.Contains(out, "\n  "+c.Name+" ") {
				t.Errorf("%v: help does not list %s:\n%s", args, c.Name, out)
			}
		}
	}
	for _, c := range commands().List {
		out, err := clitest.Stdout(t, func() error { return run(context.Background(), []string{c.Name, "--help"}) })
		if !errors.Is(err, pflag.ErrHelp) || !strings.HasPrefix(out, "sweep "+c.Name+": ") || !strings.Contains(out, "--runs string") {
			t.Errorf("%s --help: %v\n%s", c.Name, err, out)
		}
	}
}

// TestUsageErrors checks that bad input gets one line saying what is
// wrong and what to do, with status 2.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeSweep(t, dir, "good.sweep", "out g/{seed}\nseeds 1-3\nargs --task gaussian20\n")
	bad := writeSweep(t, dir, "bad.sweep", "out g\nseeds 1-3\n")
	os.Unsetenv("SLURM_ARRAY_TASK_ID")
	os.Unsetenv("JOB_COMPLETION_INDEX")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "want a command"},
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"list"}, "no sweep file given"},
		{[]string{"list", filepath.Join(dir, "none.sweep")}, "cannot read sweep file"},
		{[]string{"status", bad}, "out g lacks {seed}"},
		{[]string{"run", "--index", "5", good}, "--index 5: the sweep has runs 0 to 2"},
		{[]string{"run", "--index", "2-1", good}, `"2-1" is not an index`},
		{[]string{"run", "--index", "1", good, good}, "--index picks runs of one sweep file"},
		{[]string{"run", "--jobs", "0", good}, "--jobs must be at least 1"},
		{[]string{"task", good}, "no run index: give --index N"},
		{[]string{"task", "--index", "3", good}, "--index 3 is not a run of"},
		{[]string{"task", good, good}, "takes one sweep file"},
		{[]string{"slurm", "--sbatch", "partition=x", good}, "want an sbatch option"},
	} {
		err := run(context.Background(), tc.args)
		var ue *cli.UsageError
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") || !errors.As(err, &ue) {
			t.Errorf("%q: error %v, want a one-line usage error with %q", tc.args, err, tc.want)
		}
	}
}

func TestArrayRanges(t *testing.T) {
	for _, tc := range []struct {
		idx  []int
		want string
	}{{[]int{0}, "0"}, {[]int{0, 1, 2, 3}, "0-3"}, {[]int{0, 1, 2, 3, 7, 9, 10, 11, 12}, "0-3,7,9-12"}, {[]int{4, 6}, "4,6"}} {
		if got := arrayRanges(tc.idx); got != tc.want {
			t.Errorf("arrayRanges(%v) = %q, want %q", tc.idx, got, tc.want)
		}
	}
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{90 * time.Second, "00:02:00"}, {5 * time.Hour, "05:00:00"}, {49*time.Hour + 30*time.Minute, "2-01:30:00"}} {
		if got := slurmTime(tc.d); got != tc.want {
			t.Errorf("slurmTime(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestSlurmScript checks the batch script of a job array: one index per
// run not ended, the derived resources, requeue-safe, and each task run
// by sweep task, which becomes sample.
func TestSlurmScript(t *testing.T) {
	bin := binaries(t)
	dir := t.TempDir()
	file := writeSweep(t, dir, "toy.sweep", `out toy/{seed}
seeds 1-5
args --task gaussian20 --chains 10 --steps 1000 --eval-every 500
step-time 10ms
cores 2
`)
	// run 1 has finished, run 3 failed: the array leaves them out
	for i, summary := range map[int]string{1: `{"kl": 1}`, 3: `{"error": "diverged"}`} {
		d := filepath.Join(dir, "runs", "toy", []string{"", "2", "", "4"}[i])
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "summary.json"), []byte(summary), 0o644)
	}
	command(t, dir, filepath.Join(bin, "sweep"), "slurm", "--max-running", "2", "--sbatch=--partition=short", file)
	b, err := os.ReadFile(filepath.Join(dir, "runs", "slurm", filepath.Base(dir)+"-toy.sbatch"))
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	var ts sweep.Tasks
	st, err := ts.Settings([]string{"--task", "gaussian20", "--chains", "10", "--steps", "1000", "--eval-every", "500"})
	if err != nil {
		t.Fatal(err)
	}
	mem := int64((sweep.MemoryFactor*st.Bytes + sweep.MemoryBase + (1 << 20) - 1) / (1 << 20))
	for _, want := range []string{
		"#!/bin/bash\n",
		"#SBATCH --job-name=" + filepath.Base(dir) + "-toy\n",
		"#SBATCH --array=0,2,4%2\n",
		"#SBATCH --cpus-per-task=2\n",
		"#SBATCH --mem=" + strconv.FormatInt(mem, 10) + "M\n",
		"#SBATCH --time=00:06:00\n", // 1000 steps × 10 ms × 1.5 + 5 min, rounded up
		"#SBATCH --requeue\n",
		"#SBATCH --signal=B:TERM@120\n",
		"#SBATCH --open-mode=append\n",
		"#SBATCH --output=" + filepath.Join(dir, "runs", "slurm", filepath.Base(dir)+"-toy-%A_%a.log") + "\n",
		"#SBATCH --chdir=" + dir + "\n",
		"#SBATCH --partition=short\n",
		"\nexec " + filepath.Join(bin, "sweep") + " task --runs " + filepath.Join(dir, "runs") + " --sample " + filepath.Join(bin, "sample") + " " + file + "\n",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("the script lacks %q:\n%s", want, script)
		}
	}
	// sweep task runs the run of its index, and says so
	cmd := exec.Command(filepath.Join(bin, "sweep"), "task", file)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=1")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "has ended (finished): nothing to do") {
		t.Errorf("task of a finished run: %v\n%s", err, out)
	}
	cmd = exec.Command(filepath.Join(bin, "sweep"), "task", file)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "JOB_COMPLETION_INDEX=4")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "toy run 4 ("+filepath.Join("runs", "toy", "5")+"): starting") {
		t.Errorf("task of a new run: %v\n%s", err, out)
	}
	if st, err := sweep.Inspect(filepath.Join(dir, "runs", "toy", "5")); err != nil || st.State != sweep.Finished {
		t.Errorf("the task's run: %v %v, want finished", st, err)
	}
}

// toyAxes is the start of the Gaussian sweeps below: SGHMC and SGLD, one
// seed, each run in toy/SAMPLER-SEED.
const toyAxes = `out toy/{sampler}-{seed}
seeds 1
axis sampler sghmc --sampler sghmc --friction 1
axis sampler sgld --sampler sgld
`

// TestRunRestartsAndSkips checks the local runner on runs that write no
// checkpoint (a Gaussian task): a run killed before its summary starts
// afresh, a finished run is skipped, a failed one too unless
// --redo-failed, and the results are those of a sweep run uninterrupted.
func TestRunRestartsAndSkips(t *testing.T) {
	bin := binaries(t)
	dir := t.TempDir()
	file := writeSweep(t, dir, "toy.sweep", toyAxes+`args --task gaussian20 --chains 5 --steps 600 --eval-every 200 --step-size 0.025 --noise 1
table table.md --metric kl --steps 200,600 --summary ess
`)
	s, err := sweep.Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	sw := filepath.Join(bin, "sweep")
	command(t, dir, sw, "run", "--jobs", "2", "--runs", "ref", file)
	// in another runs directory: run 0 killed (no summary), run 1 failed
	command(t, dir, sw, "run", "--runs", "b", file)
	run0, run1 := filepath.Join(dir, "b", s.Run(0, "").Dir), filepath.Join(dir, "b", s.Run(1, "").Dir)
	os.Remove(filepath.Join(run0, "summary.json"))
	failed := []byte(`{"task": "gaussian20", "sampler": "sgld", "error": "chain 2 diverged at step 9"}`)
	os.WriteFile(filepath.Join(run1, "summary.json"), failed, 0o644)
	if got := command(t, dir, sw, "run", "--dry-run", "--runs", "b", file); !strings.HasPrefix(got, s.Name+" 0 restart: sample ") ||
		!strings.Contains(got, "--force --out b/toy/sghmc-1") || strings.Count(got, "\n") != 1 {
		t.Errorf("--dry-run:\n%s", got)
	}
	command(t, dir, sw, "run", "--runs", "b", file)
	if b, _ := os.ReadFile(filepath.Join(run1, "summary.json")); !bytes.Equal(b, failed) {
		t.Errorf("the failed run was run again without --redo-failed")
	}
	if got := command(t, dir, sw, "run", "--dry-run", "--runs", "b", file); got != "" {
		t.Errorf("a second run would do:\n%s", got)
	}
	command(t, dir, sw, "run", "--redo-failed", "--runs", "b", file)
	sameRuns(t, s, filepath.Join(dir, "ref"), filepath.Join(dir, "b"))
	status := command(t, dir, sw, "status", "--runs", "b", file)
	if !strings.Contains(status, "2 runs: 2 finished") {
		t.Errorf("status:\n%s", status)
	}
}

// TestRunResumesInterruptedRuns checks the local runner on runs that
// write checkpoints (a GRU task): a signal stops them, each one's metrics
// so far are kept in its record, the same command resumes them, and they
// end as runs never stopped, bit for bit, their records those of ended
// runs.
func TestRunResumesInterruptedRuns(t *testing.T) {
	data := datatest.Need(t, "music/Piano_midi.mat")
	bin := binaries(t)
	dir := t.TempDir()
	file := writeSweep(t, dir, "gru.sweep", gruSweep(data)+"record results\n")
	s, err := sweep.Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	sw := filepath.Join(bin, "sweep")
	ref := localGRU(t, data, "0-1")
	cmd := exec.Command(sw, "run", "--jobs", "2", "--runs", "b", "--index", "0-1", file)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "both runs' first checkpoints", func() bool {
		for i := range 2 {
			if _, err := os.Stat(filepath.Join(dir, "b", s.Run(i, "").Dir, sweep.CheckpointFile)); err != nil {
				return false
			}
		}
		return true
	})
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("sweep run stopped by SIGINT: %v, want status 130\n%s", err, stderr.String())
	}
	for i := range 2 {
		r := s.Run(i, filepath.Join(dir, "b"))
		st, err := sweep.Inspect(r.Dir)
		if err != nil || st.State != sweep.Stopped && st.State != sweep.Finished {
			t.Errorf("run %d after the signal: %v %v, want stopped\n%s", i, st, err, stderr.String())
		}
		if st.State != sweep.Stopped {
			continue
		}
		want, _ := os.ReadFile(filepath.Join(r.Dir, sweep.MetricsFile))
		if got, err := os.ReadFile(filepath.Join(r.Record, sweep.StoppedMetricsFile)); err != nil || len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("run %d after the signal: its metrics so far not kept in its record: %v", i, err)
		}
	}
	out := command(t, dir, sw, "run", "--dry-run", "--runs", "b", "--index", "0-1", file)
	if !strings.Contains(out, " resume: sample --resume b/gru/") {
		t.Errorf("--dry-run after the signal:\n%s", out)
	}
	command(t, dir, sw, "run", "--jobs", "2", "--runs", "b", "--index", "0-1", file)
	for i := range 2 {
		r := s.Run(i, filepath.Join(dir, "b"))
		if _, err := os.Stat(filepath.Join(r.Record, sweep.StoppedMetricsFile)); err == nil {
			t.Errorf("run %d ended: its record still holds %s", i, sweep.StoppedMetricsFile)
		}
		if _, err := os.Stat(filepath.Join(r.Record, sweep.SummaryFile)); err != nil {
			t.Errorf("run %d ended: %v", i, err)
		}
	}
	s.Axes[0].Values = s.Axes[0].Values[:1] // seed 1: runs 0 and 1
	sameRuns(t, s, ref, filepath.Join(dir, "b"))
}

// gruSweep is a sweep of four short runs on a GRU task (they write
// checkpoints), two samplers and two seeds, reading the data in data.
func gruSweep(data string) string {
	return `# four short runs of a small GRU on Piano-midi.de
out gru/{sampler}-{seed}
seeds 1 2
axis sampler sghmc=SGHMC --sampler sghmc --lr 0.001
axis sampler sgld=SGLD --sampler sgld --lr 0.001
args --task piano-gru --hidden 8 --chains 2 --steps 60 --eval-every 10 --data-dir "` + data + `"
step-time 100ms
table table.md --metric test_nll --steps 10,30,60 --summary test_nll,test_nll_chain
`
}

// local holds the runs of gruSweep run locally, for the tests that
// compare with them.
var local struct {
	sync.Mutex
	dir string
}

// localGRU returns the runs directory of gruSweep run locally (sweep run
// --jobs 2) in the directory whose gru.sweep it is, with at least the
// runs of index (as 0-1; "" for all) there: the package's tests share the
// runs, each run once, as sweep run skips those that have finished.
func localGRU(t *testing.T, data, index string) string {
	t.Helper()
	bin := binaries(t)
	local.Lock()
	defer local.Unlock()
	if local.dir == "" {
		dir, err := os.MkdirTemp("", "sweep-local")
		if err != nil {
			t.Fatal(err)
		}
		local.dir = dir
		writeSweep(t, dir, "gru.sweep", gruSweep(data))
	}
	args := []string{"run", "--jobs", "2", "--runs", "local"}
	if index != "" {
		args = append(args, "--index", index)
	}
	command(t, local.dir, filepath.Join(bin, "sweep"), append(args, "gru.sweep")...)
	return filepath.Join(local.dir, "local")
}

// waitFor polls cond every 50 ms until it holds, failing t after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no %s after %v", what, limit)
		}
	}
}

// TestRunKeepsRecords checks a sweep with a record line: sweep run writes
// each finished run's record beside the sweep file, and a fresh runs
// directory (another machine, a new checkout) finds every run ended
// there: nothing to run, status says so.
func TestRunKeepsRecords(t *testing.T) {
	bin := binaries(t)
	dir := t.TempDir()
	file := writeSweep(t, dir, "toy.sweep", toyAxes+`args --task gaussian20 --chains 5 --steps 200 --eval-every 100 --step-size 0.025 --noise 1
record results
`)
	sw := filepath.Join(bin, "sweep")
	command(t, dir, sw, "run", "--jobs", "2", "--runs", "a", file)
	for _, run := range []string{"sghmc-1", "sgld-1"} {
		for _, name := range sweep.RecordFiles {
			want, _ := os.ReadFile(filepath.Join(dir, "a", "toy", run, name))
			if got, err := os.ReadFile(filepath.Join(dir, "results", "toy", run, name)); err != nil || len(want) == 0 || !bytes.Equal(got, want) {
				t.Errorf("record of %s, %s: %v", run, name, err)
			}
		}
	}
	if got := command(t, dir, sw, "run", "--dry-run", "--runs", "fresh", file); got != "" {
		t.Errorf("with the records alone, sweep run would do:\n%s", got)
	}
	if got := command(t, dir, sw, "status", "--all", "--runs", "fresh", file); !strings.Contains(got, "2 runs: 2 finished") || strings.Count(got, "finished (recorded)") != 2 {
		t.Errorf("status with the records alone:\n%s", got)
	}
	// a record of other flags than the sweep sets now is stale, and list says so
	file = writeSweep(t, dir, "toy.sweep", toyAxes+"args --task gaussian20 --chains 5 --steps 200 --eval-every 100 --step-size 0.05 --noise 1\nrecord results\n")
	if got := command(t, dir, sw, "list", "--runs", "fresh", file); strings.Count(got, "finished (stale)") != 2 {
		t.Errorf("list with the records of other flags:\n%s", got)
	}
}
