package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
	"github.com/metasgmcmc/metasgmcmc/internal/ctxtest"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// needData skips a test in -short mode, or when the data file (under the
// data directory) is missing (see datatest.Need).
func needData(t *testing.T, file string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: data tasks skipped")
	}
	datatest.Need(t, file)
}

const (
	jsbData   = "music/JSB_Chorales.mat"
	pianoData = "music/Piano_midi.mat"
	mnistData = "mnist/train-labels-idx1-ubyte.gz"
)

// gruRun are the flags of a tiny GRU run: 12 steps, an evaluation every 3.
var gruRun = []string{"-hidden", "4", "-chains", "2", "-steps", "12", "-eval-every", "3", "-valid", "-quiet"}

// interruptRun runs args into a new directory, interrupted (as by a
// signal) after the given number of steps, and returns the directory.
func interruptRun(t *testing.T, args []string, steps int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	err := run(ctxtest.CancelAfter(steps), append(args, "-out", dir))
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("want an interruption, got %v", err)
	}
	return dir
}

// metricsWithoutSeconds reads a run's metrics.csv, its seconds column
// blanked.
func metricsWithoutSeconds(t *testing.T, dir string) [][]string {
	t.Helper()
	records := clitest.ReadCSV(t, filepath.Join(dir, "metrics.csv"))
	for _, r := range records[1:] {
		r[1] = ""
	}
	return records
}

// summaryWithoutTiming reads a run's summary.json without its timing
// fields and --out.
func summaryWithoutTiming(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	delete(s, "seconds")
	delete(s, "steps_per_second")
	delete(s["flags"].(map[string]any), "out")
	return s
}

// checkSameOutputs fails the test unless the run in dir wrote the
// metrics.csv (but the seconds) and the summary.json (but the timing) of
// the uninterrupted run in straight; what names the run in dir.
func checkSameOutputs(t *testing.T, what, dir, straight string) {
	t.Helper()
	if a, b := metricsWithoutSeconds(t, straight), metricsWithoutSeconds(t, dir); !reflect.DeepEqual(a, b) {
		t.Errorf("metrics.csv of %s differs from the uninterrupted run's:\n  %s: %q\n  uninterrupted: %q", what, what, b, a)
	}
	if a, b := summaryWithoutTiming(t, straight), summaryWithoutTiming(t, dir); !reflect.DeepEqual(a, b) {
		t.Errorf("summary.json of %s differs from the uninterrupted run's:\n  %s: %v\n  uninterrupted: %v", what, what, b, a)
	}
}

// finalState reads the chains' state in a run's last checkpoint.
func finalState(t *testing.T, dir string) string {
	t.Helper()
	c, err := readCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(c.State)
	return string(b)
}

// TestInterruptResumesExactly interrupts GRU and MNIST runs between
// evaluation points, in the middle of a data epoch, and resumes them with
// --resume DIR alone: metrics.csv must be the uninterrupted run's but for
// the seconds, summary.json the same but for timing, the chains the same
// bit for bit, and so must trace.bin where the run writes one. It fails if
// any of the random state, the minibatch order, the kernel's memory
// (pSGLD, NNSGHMC with finite-difference Γ, its thermostat's running
// means and its adaptive friction's ζ, Adam, Santa) or the warm-up
// schedule were not restored; twice interrupted runs resume too.
func TestInterruptResumesExactly(t *testing.T) {
	meta := "../../experiments/piano-gru/sampler.json"
	// the length and evaluations of a short mnist-nt run (gruRun's for the
	// GRU runs)
	mnist := []string{"--chains", "3", "--steps", "12", "--eval-every", "3",
		"--trace-every", "2", "--trace-coords", "4", "--quiet"}
	tests := []struct {
		name, data string
		args       []string
		stops      []int // steps run before each interruption, in turn
	}{
		{"jsb-gru sghmc", jsbData, []string{"-task", "jsb-gru", "-sampler", "sghmc"}, []int{7}},
		{"jsb-gru sghmc at an evaluation", jsbData, []string{"-task", "jsb-gru", "-sampler", "sghmc", "-seed", "5"}, []int{6}},
		{"piano-gru nnsghmc", pianoData, []string{"-task", "piano-gru", "-sampler", "nnsghmc", "-meta", meta}, []int{5}},
		{"piano-gru nnsghmc fd warm-up", pianoData, []string{"-task", "piano-gru", "-sampler", "nnsghmc", "-meta", meta,
			"-gamma", "fd", "-warmup-steps", "8", "-warmup-step-size", "0.0001", "-patience", "20"}, []int{4, 6}},
		{"jsb-gru psgld", jsbData, []string{"-task", "jsb-gru", "-sampler", "psgld"}, []int{8}},
		// the optimisers: Adam's moments and step count, SGD-M's velocity,
		// Santa's momenta, thermostats and step count, interrupted in its
		// exploration and resumed across the switch to refinement at step 9
		{"jsb-gru adam", jsbData, []string{"-task", "jsb-gru", "-sampler", "adam"}, []int{5}},
		{"jsb-gru sgdm", jsbData, []string{"-task", "jsb-gru", "-sampler", "sgdm"}, []int{7}},
		{"jsb-gru santa", jsbData, []string{"-task", "jsb-gru", "-sampler", "santa", "-santa-explore", "9"}, []int{4, 3}},
		{"mnist-nt sghmc", mnistData, append([]string{"--flagfile", "../../experiments/mnist-nt/sghmc.flags"}, mnist...), []int{7}},
		{"mnist-nt nnsghmc thermostat", mnistData, append([]string{"--flagfile", "../../experiments/mnist-nt/nnsghmc.flags", "--float32",
			"--meta", "../../experiments/mnist-nt/sampler.json", "--warmup-steps", "5", "--thermostat", "1.01", "--adaptive-friction", "0.01"}, mnist...), []int{4, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			needData(t, tc.data)
			args := append([]string(nil), tc.args...)
			if tc.data != mnistData {
				args = append(args, gruRun...)
			}
			straight := filepath.Join(t.TempDir(), "straight")
			if err := run(context.Background(), append(args, "-out", straight)); err != nil {
				t.Fatal(err)
			}
			stopped := interruptRun(t, args, tc.stops[0])
			for _, n := range tc.stops[1:] {
				err := run(ctxtest.CancelAfter(n), []string{"-resume", stopped})
				if err == nil || !strings.Contains(err.Error(), "continue with --resume") {
					t.Fatalf("resumed run interrupted again: %v, want an interruption", err)
				}
			}
			if err := run(context.Background(), []string{"-resume", stopped}); err != nil {
				t.Fatal(err)
			}
			checkSameOutputs(t, "the resumed run", stopped, straight)
			if finalState(t, straight) != finalState(t, stopped) {
				t.Error("the resumed run's final chains differ from the uninterrupted run's")
			}
			a, errA := os.ReadFile(filepath.Join(straight, traceStream))
			b, errB := os.ReadFile(filepath.Join(stopped, traceStream))
			if !errors.Is(errA, os.ErrNotExist) && (errA != nil || errB != nil || !bytes.Equal(a, b)) {
				t.Errorf("%s of the resumed run differs from the uninterrupted run's (%d and %d bytes; %v, %v)", traceStream, len(b), len(a), errB, errA)
			}
		})
	}
}

// TestResumeExtendsARun: a finished run resumes only with more --steps, and
// then continues as a longer run would have.
func TestResumeExtendsARun(t *testing.T) {
	needData(t, jsbData)
	args := append([]string{"-task", "jsb-gru", "-sampler", "sghmc"}, gruRun...)
	long := filepath.Join(t.TempDir(), "long")
	if err := run(context.Background(), append(args, "-steps", "18", "-out", long)); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(t.TempDir(), "short")
	if err := run(context.Background(), append(args, "-out", short)); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"-resume", short})
	var u *cli.UsageError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "has finished its 12 steps; give --steps larger than 12") {
		t.Fatalf("resuming a finished run: %v, want a usage error", err)
	}
	if err := run(context.Background(), []string{"-resume", short, "-steps", "18"}); err != nil {
		t.Fatal(err)
	}
	checkSameOutputs(t, "the extended run", short, long)
}

// TestResumeRefusesConflictingFlags: --resume DIR continues the run with
// its own flags; another value of any flag but --steps (and --quiet and the
// data directory) is a usage error naming the flag.
func TestResumeRefusesConflictingFlags(t *testing.T) {
	needData(t, jsbData)
	dir := interruptRun(t, append([]string{"-task", "jsb-gru", "-sampler", "sghmc"}, gruRun...), 4)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-seed", "2"}, "--seed 2 conflicts with the run in " + dir + ", which did not set --seed"},
		{[]string{"-sampler", "sgld"}, "--sampler sgld conflicts with the run in " + dir + ", which has --sampler sghmc"},
		{[]string{"-chains", "3"}, "--chains 3 conflicts"},
		{[]string{"-task", "piano-gru"}, "--task piano-gru conflicts"},
		{[]string{"-valid=false"}, "--valid false conflicts"},
		{[]string{"-patience", "2"}, "--patience 2 conflicts"},
		{[]string{"-trace-every", "2"}, "--trace-every 2 conflicts"},
		{[]string{"-out", dir + "x"}, "--resume writes into the run's own directory; drop --out"},
		{[]string{"-force"}, "--force replaces a run and --resume continues it"},
		{[]string{"-steps", "3"}, "--steps 3 is before the checkpoint of the run in " + dir + ", at step 4"},
	}
	for _, tc := range tests {
		err := run(context.Background(), append([]string{"-resume", dir}, tc.args...))
		var u *cli.UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	// a new run into the directory is pointed to --resume
	err := run(context.Background(), append([]string{"-task", "jsb-gru", "-out", dir}, gruRun...))
	if want := "already holds a sample run (checkpoint.json, config.json, metrics.csv and 3 more); continue it with --resume " + dir; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a new run into the directory: %v, want %q", err, want)
	}
	// the same values, and --steps, are accepted
	if err := run(context.Background(), []string{"-resume", dir, "-seed", "1", "-chains", "2", "-steps", "15"}); err != nil {
		t.Errorf("resuming with the run's own flags and more steps: %v", err)
	}
}

// TestResumeRefusesWhatCannotResume: a run whose monitor accumulates its
// metrics (the Gaussian tasks), with a trace or without, is not
// resumed: a one-line usage error says why. It writes no checkpoint.
func TestResumeRefusesWhatCannotResume(t *testing.T) {
	toy := []string{"-task", "gaussian20", "-sampler", "sghmc", "-chains", "4", "-steps", "30", "-eval-every", "10", "-quiet"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"accumulating monitor", toy, "the monitor of task gaussian20 accumulates its metrics over the run and cannot be restored"},
		{"trace", append(toy, "-trace-every", "5"), "the monitor of task gaussian20 accumulates its metrics over the run and cannot be restored"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := interruptRun(t, tc.args, 15)
			if _, err := os.Stat(filepath.Join(dir, checkpointFile)); err == nil {
				t.Errorf("the run wrote %s, which it cannot resume from", checkpointFile)
			}
			err := run(context.Background(), []string{"-resume", dir})
			var u *cli.UsageError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want a one-line usage error with %q", err, tc.want)
			}
		})
	}
}

// TestReplayEarlyStop: the early-stopping state rebuilt from metrics rows
// is the one the run had, whatever row it resumes after.
func TestReplayEarlyStop(t *testing.T) {
	header := []string{"step", "seconds", "test_nll", "valid_nll"}
	rows := [][]string{{"3", "0.1", "5", "4"}, {"6", "0.2", "4.5", "3.5"}, {"9", "0.3", "4.6", "3.6"}, {"12", "0.4", "4.7", "3.7"}, {"15", "0.5", "4.1", "3.8"}}
	for cut := 0; cut <= len(rows); cut++ {
		var live, replayed earlyStop
		var stopLive bool
		for i, r := range rows {
			ms := []tasks.Metric{{Name: "test_nll"}, {Name: "valid_nll"}}
			json.Unmarshal([]byte(r[2]), &ms[0].Value)
			json.Unmarshal([]byte(r[3]), &ms[1].Value)
			step := 3 * (i + 1)
			stop := live.observe(step, ms, 3)
			if i < cut {
				stopLive = stop
				continue
			}
			if i == cut {
				if got := replayEarlyStop(&replayed, header, rows[:cut], 3); got != stopLive {
					t.Errorf("cut %d: replay reports a stop %v, want %v", cut, got, stopLive)
				}
			}
			replayed.observe(step, ms, 3)
		}
		if cut == len(rows) {
			replayEarlyStop(&replayed, header, rows, 3)
		}
		if live != replayed {
			t.Errorf("cut %d: replayed state %+v, want %+v", cut, replayed, live)
		}
	}
}

// TestResumeRefusesADamagedCheckpoint: a checkpoint that is not one this
// run can have written is refused in one line naming the file and the
// field, before anything is run.
func TestResumeRefusesADamagedCheckpoint(t *testing.T) {
	needData(t, jsbData)
	dir := interruptRun(t, append([]string{"-task", "jsb-gru", "-sampler", "sghmc"}, gruRun...), 7)
	tests := []struct {
		name string
		edit func(c map[string]any)
		want string
	}{
		{"version", func(c map[string]any) { c["version"] = 2 }, "version is 2; this program reads version 1"},
		{"positions", func(c map[string]any) {
			s := c["state"].(map[string]any)
			s["theta"] = s["theta"].([]any)[:3]
		}, "state.theta has 3 values, want"},
		{"momenta", func(c map[string]any) { delete(c["state"].(map[string]any), "p") }, "0 momenta for a kernel with momenta"},
		{"random state", func(c map[string]any) { c["rng"] = "AAAA" }, "rng:"},
		{"minibatch order", func(c map[string]any) { delete(c, "batches") }, "batches: missing"},
		{"rows", func(c map[string]any) { c["rows"] = 3 }, "2 rows, fewer than the 3 that checkpoint.json follows"},
		{"seconds", func(c map[string]any) { c["seconds"] = -1 }, "seconds is -1"},
		{"not JSON", nil, "is not valid JSON of a checkpoint"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := clitest.CopyDir(t, dir)
			path := filepath.Join(run, checkpointFile)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if tc.edit == nil {
				b = b[:len(b)/2]
			} else {
				var c map[string]any
				if err := json.Unmarshal(b, &c); err != nil {
					t.Fatal(err)
				}
				tc.edit(c)
				b, _ = json.Marshal(c)
			}
			os.WriteFile(path, b, 0o644)
			code, stderr := clitest.Command(t, "-resume", run)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, checkpointFile) {
				t.Errorf("status %d, stderr %q; want status 2 and one line naming %s with %q", code, stderr, checkpointFile, tc.want)
			}
		})
	}
}

// TestSignalWritesACheckpointThatResumes: SIGINT or SIGTERM stops a GRU run
// with a checkpoint at the step it stopped at and says how to continue; --resume DIR --steps N then
// ends it as a run of N steps would have ended.
func TestSignalWritesACheckpointThatResumes(t *testing.T) {
	needData(t, jsbData)
	args := []string{"-task", "jsb-gru", "-sampler", "sghmc", "-hidden", "4", "-chains", "2", "-eval-every", "200", "-valid", "-quiet"}
	for _, sig := range clitest.StopSignals {
		t.Run(sig.Name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			first := clitest.Start(t, append(args, "-steps", "1000000", "-out", out)...)
			clitest.WaitFor(t, filepath.Join(out, checkpointFile))
			time.Sleep(100 * time.Millisecond) // between evaluations
			first.Stop(t, sig)
			if want := "; continue with --resume " + out + ")"; !strings.HasSuffix(strings.TrimSpace(first.Stderr.String()), want) {
				t.Errorf("stderr %q, want it to end with %q", first.Stderr, want)
			}
			c, err := readCheckpoint(out)
			if err != nil {
				t.Fatal(err)
			}
			var stopped struct{ Steps int }
			b, _ := os.ReadFile(filepath.Join(out, summaryFile))
			if err := json.Unmarshal(b, &stopped); err != nil || stopped.Steps != c.State.Steps {
				t.Errorf("checkpoint at step %d, the run stopped after %d (%v)", c.State.Steps, stopped.Steps, err)
			}
			steps := strconv.Itoa(c.State.Steps + 4)
			if err := run(context.Background(), []string{"-resume", out, "-steps", steps}); err != nil {
				t.Fatal(err)
			}
			straight := filepath.Join(t.TempDir(), "straight")
			if err := run(context.Background(), append(args, "-steps", steps, "-out", straight)); err != nil {
				t.Fatal(err)
			}
			checkSameOutputs(t, "the resumed run", out, straight)
		})
	}
}

// TestResumeDropsRowsAfterTheCheckpoint: rows of metrics.csv written after
// the checkpoint, and a row torn by a lost machine with NUL bytes after
// it, are dropped with a one-line notice, and the run resumes to the
// uninterrupted run's metrics (the torn row was refused as damage).
func TestResumeDropsRowsAfterTheCheckpoint(t *testing.T) {
	needData(t, jsbData)
	args := append([]string{"-task", "jsb-gru", "-sampler", "sghmc"}, gruRun...)
	straight := filepath.Join(t.TempDir(), "straight")
	if err := run(context.Background(), append(args, "-out", straight)); err != nil {
		t.Fatal(err)
	}
	stopped := interruptRun(t, args, 7)
	for _, tc := range []struct{ name, tail, notice string }{
		// the row of an evaluation the checkpoint does not know
		{"a row", "9,1,2,3,4\n", "dropped 1 line(s) written after the checkpoint at step 7\n"},
		{"a torn row", "9,1,2,3,4\n9,0.5,2\x00\x00\x00", "dropped 1 line(s) written after the checkpoint at step 7 and a torn last line of 10 bytes\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := clitest.CopyDir(t, stopped)
			f, err := os.OpenFile(filepath.Join(dir, metricsFile), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(tc.tail)
			f.Close()
			code, stderr := clitest.Command(t, "-resume", dir)
			if want := "sample: " + filepath.Join(dir, metricsFile) + ": " + tc.notice; code != 0 || stderr != want {
				t.Errorf("status %d, stderr %q; want 0 and %q", code, stderr, want)
			}
			if a, b := metricsWithoutSeconds(t, straight), metricsWithoutSeconds(t, dir); !reflect.DeepEqual(a, b) {
				t.Errorf("metrics.csv of the resumed run differs from the uninterrupted run's:\n  resumed: %q\n  straight: %q", b, a)
			}
		})
	}
}

// TestResumeKeepsTheRunsColumns: a run whose metrics.csv lacks a metric
// this version reports (one started before kinetic_hot_fraction was) is
// resumed with the columns it began with, each row as long as its header;
// one whose metrics.csv names a metric this version does not report is
// refused in one line.
func TestResumeKeepsTheRunsColumns(t *testing.T) {
	needData(t, jsbData)
	args := append([]string{"-task", "jsb-gru", "-sampler", "sghmc"}, gruRun...)
	path := func(dir string) string { return filepath.Join(dir, "metrics.csv") }
	rewrite := func(t *testing.T, dir string, edit func(string) string) {
		b, err := os.ReadFile(path(dir))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path(dir), []byte(edit(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	older := interruptRun(t, args, 7)
	header := clitest.ReadCSV(t, path(older))[0]
	hot := slices.Index(header, "kinetic_hot_fraction")
	if hot < 0 {
		t.Fatalf("metrics.csv's header %v has no kinetic_hot_fraction", header)
	}
	rewrite(t, older, func(s string) string { return string(dropColumn([]byte(s), hot)) })
	if err := run(context.Background(), []string{"-resume", older}); err != nil {
		t.Fatal(err)
	}
	rows := clitest.ReadCSV(t, path(older))
	if want := slices.Delete(slices.Clone(header), hot, hot+1); !slices.Equal(rows[0], want) || len(rows) < 3 {
		t.Fatalf("resumed run's metrics.csv: %v, want the header %v and its rows", rows, want)
	}
	for _, r := range rows[1:] {
		if len(r) != len(rows[0]) {
			t.Errorf("row %v under the header %v", r, rows[0])
		}
	}

	other := interruptRun(t, args, 7)
	rewrite(t, other, func(s string) string {
		return strings.Replace(s, "kinetic_temperature,", "kinetic_temperature_other,", 1)
	})
	err := run(context.Background(), []string{"-resume", other})
	if err == nil || !strings.Contains(err.Error(), `column "kinetic_temperature_other"`) || strings.Contains(err.Error(), "\n") {
		t.Errorf("resuming a run with a column this version does not report: %v, want one line naming the column", err)
	}
}
