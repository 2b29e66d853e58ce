package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
	"github.com/metasgmcmc/metasgmcmc/internal/ctxtest"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
	"github.com/metasgmcmc/metasgmcmc/train"
)

// TestMain lets tests run the command itself as a subprocess (see
// clitest.Main).
// TestMain runs the tests, and the commands they start, without the
// set-ups' validation protocols, which take minutes on the data tasks; the
// tests of validation put a short one back (shortValidation).
func TestMain(m *testing.M) {
	testValidation = noValidation
	os.Exit(clitest.Main(m, main, datatest.Main))
}

func TestBadInputGivesOneLineAndStatus2(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-task", "nope", "-out", dir}, `unknown task "nope"`},
		{[]string{"-task", "gaussian20", "-out", dir}, "has no meta-training set-up"},
		{[]string{"-task", "gaussian10", "-hidden", "50", "-out", dir}, "--hidden is a flag of the GRU tasks; task gaussian10 does not use it"},
		{[]string{"-epochs", "0", "-out", dir}, "--epochs: invalid value"},
		{[]string{"-lr", "Inf", "-out", dir}, "--lr must be a finite number, got +Inf"},
		{[]string{"-step-size=-Inf", "-out", dir}, "--step-size must be a finite number, got -Inf"},
		{[]string{"-continue-step-size", "0", "-out", dir}, "--continue-step-size: invalid value 0 (want a positive finite number)"},
		{[]string{"-steps", "10", "-out", dir}, "the in-chain loss has no time within 10 steps"},
		{[]string{"-resume", filepath.Join(dir, "none")}, "cannot resume " + filepath.Join(dir, "none") + ": no such file or directory"},
		{[]string{"-revalidate", "-out", dir}, "--revalidate scores a run's validations again: give the run with --resume DIR"},
		// the cross-chain loss's Stein estimator failed on 2 chains after
		// the run had started, the in-chain loss on fewer than 10
		{[]string{"-chains", "2", "-preset", "quick", "-out", dir}, "--chains 2: this training set-up needs at least 3 chains (the cross-chain loss: the Stein estimator's bandwidth"},
		{[]string{"-chains", "5", "-out", dir}, "--chains 5: this training set-up needs at least 10 chains (the in-chain loss draws its first chain from 0..9)"},
		// flags the task does not read were silently ignored
		{[]string{"-task", "gaussian10", "-target-scale", "1", "-out", dir}, "--target-scale is a flag of the 20-D toy Gaussian (gaussian20) tasks; task gaussian10 does not use it"},
		{[]string{"-task", "piano-gru", "-target-seed", "3", "-out", dir}, "--target-seed is a flag of the toy Gaussian"},
		{[]string{"-init", filepath.Join(dir, "none.json"), "-out", filepath.Join(dir, "i")}, "--init: cannot read sampler file"},
	}
	for _, tc := range tests {
		code, stderr := clitest.Command(t, tc.args...)
		clitest.CheckUsageError(t, "train", tc.args, code, stderr, tc.want)
	}
}

// A run stopped at the end of an epoch and extended with --resume gives the
// same sampler, bit for bit, as one that never stopped, on a task that
// draws minibatches: the checkpoint carries the minibatch order.
func TestResumeContinuesTheMinibatchOrder(t *testing.T) {
	if _, err := os.Stat(filepath.Join(datadir.Dir(""), "mnist", "train-images-idx3-ubyte.gz")); err != nil {
		datatest.Skip(t, err.Error())
	}
	// 4 chains, unrolls of 12 steps on batches of 500: an epoch of 2 unrolls
	// visits 24 minibatches and the losses 8, part of a data epoch of 120
	// (mnist-relu: mnist-data-train starts every unroll on a new data
	// epoch, train.Config.DataPerUnroll)
	args := []string{"-task", "mnist-relu", "-sub-epochs", "1", "-chains", "4", "-steps", "12", "-window", "4", "-quiet", "-seed", "3"}
	straight, stopped := t.TempDir(), t.TempDir()
	if err := run(context.Background(), append(args, "-epochs", "2", "-out", straight)); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), append(args, "-epochs", "1", "-out", stopped)); err != nil {
		t.Fatal(err)
	}
	resumeMatches(t, straight, stopped, append(args, "-epochs", "2", "-resume", stopped))
}

// small is a two-epoch toy training that runs in about a second.
var small = []string{"-task", "gaussian10", "-epochs", "2", "-sub-epochs", "1", "-chains", "12", "-steps", "56",
	"-window", "20", "-quiet", "-seed", "4"}

func TestTrainWritesASamplerThatResumesExactly(t *testing.T) {
	straight := t.TempDir()
	if err := run(context.Background(), append(small, "-out", straight)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"train.csv", "checkpoint.json", "sampler.json", "train.png", "train.svg", "config.json"} {
		if _, err := os.Stat(filepath.Join(straight, name)); err != nil {
			t.Errorf("missing output: %v", err)
		}
	}
	f, err := nnsghmc.Load(filepath.Join(straight, "sampler.json"))
	if err != nil {
		t.Fatal(err)
	}
	if d := f.Domain; d.Dim != 10 || d.DataSize != 1 || d.StepSize != (nnsghmc.Range{Min: 0.01, Max: 0.01}) || d.Energy == nil || d.Momentum == nil || d.Gradient == nil ||
		!(d.Momentum.Min < 0 && d.Momentum.Max > 0) || !(d.Energy.Min > 0) {
		t.Errorf("sampler file: domain %+v, want dimension 10, data size 1, step size 0.01 and the inputs' ranges", d)
	}

	// interrupt after the first optimiser steps, then resume
	resumed := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // interrupted before the first unroll completes
	if err := run(ctx, append(small, "-out", resumed)); !errors.Is(err, train.ErrInterrupted) {
		t.Fatalf("want an interruption, got %v", err)
	}
	resumeMatches(t, straight, resumed, append(small, "-resume", resumed))
	// a sampler file runs in cmd/sample: checked there; here a mismatched resume
	if err := run(context.Background(), append(append([]string{}, small...), "-steps", "57", "-resume", resumed)); err == nil ||
		!strings.Contains(err.Error(), "--steps 57 conflicts with the run in") {
		t.Errorf("resume with other flags: %v", err)
	}
}

// TestInitStartsFromTheGivenNetworks trains briefly from a trained sampler's
// networks: with Adam's steps bounded by the learning rate, the result stays
// within a few steps of those networks, where random ones are far away.
func TestInitStartsFromTheGivenNetworks(t *testing.T) {
	first, fromInit, fresh := t.TempDir(), t.TempDir(), t.TempDir()
	if err := run(context.Background(), append(small, "-out", first)); err != nil {
		t.Fatal(err)
	}
	start := filepath.Join(first, "sampler.json")
	other := append(append([]string{}, small...), "-seed", "9")
	if err := run(context.Background(), append(other, "-init", start, "-out", fromInit)); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), append(other, "-out", fresh)); err != nil {
		t.Fatal(err)
	}
	read := func(dir string) *nnsghmc.Trained {
		f, err := nnsghmc.Load(filepath.Join(dir, "sampler.json"))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b, c := read(first), read(fromInit), read(fresh)
	maxDiff := func(x, y *nnsghmc.Trained) float64 {
		d := 0.0
		for l := range x.Q.W {
			for i, v := range x.Q.W[l] {
				d = math.Max(d, math.Abs(v-y.Q.W[l][i]))
			}
		}
		return d
	}
	// 2 epochs × 2 unrolls × 2 losses = 8 Adam steps of at most ~lr 5e-4
	if d := maxDiff(a, b); d > 0.01 {
		t.Errorf("trained from --init, f_Q's weights moved by up to %v", d)
	}
	if d := maxDiff(a, c); d < 0.05 {
		t.Errorf("without --init, f_Q's weights are within %v of the other run's: the test cannot tell", d)
	}
	if b.Training["init"] != start {
		t.Errorf("training info: init %v", b.Training["init"])
	}
}

// TestQStartMakesFQConstant trains briefly with --q-start 2: f_Q starts as
// the constant 2 and, with Adam's steps bounded by the learning rate,
// stays within a few steps of it at every energy and momentum, where the
// random start of the same seed is far from constant.
func TestQStartMakesFQConstant(t *testing.T) {
	var x []float64 // rows (u, p)
	for u := -3.0; u <= 3; u += 0.5 {
		for _, p := range []float64{-1, 0, 1} {
			x = append(x, u, p)
		}
	}
	spread := func(dir string) (lo, hi float64) {
		f, err := nnsghmc.Load(filepath.Join(dir, "sampler.json"))
		if err != nil {
			t.Fatal(err)
		}
		q := make([]float64, len(x)/2)
		f.Q.Eval(x, q)
		return slices.Min(q), slices.Max(q)
	}
	constant, random := t.TempDir(), t.TempDir()
	if err := run(context.Background(), append(append([]string{}, small...), "-q-start", "2", "-out", constant)); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), append(append([]string{}, small...), "-out", random)); err != nil {
		t.Fatal(err)
	}
	// 2 epochs × 2 unrolls × 2 losses = 8 Adam steps of at most ~lr 5e-4
	if lo, hi := spread(constant); lo < 1.95 || hi > 2.05 {
		t.Errorf("--q-start 2: after 8 Adam steps f_Q lies in [%.4g, %.4g], want within 0.05 of 2", lo, hi)
	}
	if lo, hi := spread(random); hi-lo < 0.1 {
		t.Errorf("without --q-start f_Q lies in [%.4g, %.4g]: the test cannot tell a constant start from a random one", lo, hi)
	}
}

// TestFreshMomentumFlag checks that --fresh-momentum overrides the
// set-up's choice both ways: the toy's continuation unrolls carry their
// momentum over, and with the flag they restart from the fresh unroll's, a
// different training recorded in sampler.json.
func TestFreshMomentumFlag(t *testing.T) {
	trained := func(extra ...string) *nnsghmc.Trained {
		dir := t.TempDir()
		// two continuations: the second is where the momenta differ
		args := append(append([]string{}, small...), "-sub-epochs", "2", "-out", dir)
		if err := run(context.Background(), append(args, extra...)); err != nil {
			t.Fatal(err)
		}
		f, err := nnsghmc.Load(filepath.Join(dir, "sampler.json"))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	carried, off, fresh := trained(), trained("-fresh-momentum=false"), trained("-fresh-momentum")
	if carried.Training["fresh_momentum"] != nil || off.Training["fresh_momentum"] != nil {
		t.Errorf("the toy's training records fresh_momentum %v (default) and %v (--fresh-momentum=false), want neither", carried.Training["fresh_momentum"], off.Training["fresh_momentum"])
	}
	if fresh.Training["fresh_momentum"] != true {
		t.Errorf("--fresh-momentum: the training records fresh_momentum %v, want true", fresh.Training["fresh_momentum"])
	}
	w := func(f *nnsghmc.Trained) []float64 { return slices.Concat(append(f.Q.Params(), f.D.Params()...)...) }
	if !slices.Equal(w(carried), w(off)) {
		t.Error("--fresh-momentum=false trains other networks than the toy's default, which carries the momentum over")
	}
	if slices.Equal(w(carried), w(fresh)) {
		t.Error("--fresh-momentum trains the same networks as carrying the momentum over")
	}
}

// TestInterruptMidUnrollResumesExactly interrupts a run in the middle of an
// unroll (as Ctrl-C or SIGTERM does), then resumes it with --resume DIR
// alone: the sampler must be the uninterrupted run's, bit for bit, on the
// toy and on the tasks that draw minibatches (MNIST, the GRU), whose
// minibatch order the abandoned unroll had advanced.
func TestInterruptMidUnrollResumesExactly(t *testing.T) {
	tests := []struct {
		name  string
		data  string // data file the task needs, under the data directory
		args  []string
		steps int // steps run before the interruption
	}{
		{"gaussian10", "", small, 56 + 30},
		{"mnist-data-train", filepath.Join("mnist", "train-images-idx3-ubyte.gz"),
			[]string{"-task", "mnist-data-train", "-epochs", "1", "-sub-epochs", "1", "-chains", "4", "-steps", "12", "-window", "4", "-quiet", "-seed", "3"}, 12 + 5},
		{"piano-gru", filepath.Join("music", "Piano_midi.mat"), // the slowest, about 10 s
			[]string{"-task", "piano-gru", "-preset", "quick", "-hidden", "4", "-epochs", "1", "-sub-epochs", "1", "-chains", "4", "-steps", "8", "-window", "4", "-quiet", "-seed", "2"}, 8 + 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.data != "" {
				if testing.Short() {
					t.Skip("-short: data tasks skipped")
				}
				if _, err := os.Stat(filepath.Join(datadir.Dir(""), tc.data)); err != nil {
					t.Skipf("data not available (%v); set %s", err, datadir.EnvVar)
				}
			}
			straight, stopped := t.TempDir(), t.TempDir()
			if err := run(context.Background(), append(tc.args, "-out", straight)); err != nil {
				t.Fatal(err)
			}
			if err := run(ctxtest.CancelAfter(tc.steps), append(tc.args, "-out", stopped)); !errors.Is(err, train.ErrInterrupted) {
				t.Fatalf("want an interruption, got %v", err)
			}
			cp, err := train.ReadCheckpoint(filepath.Join(stopped, "checkpoint.json"))
			if err != nil {
				t.Fatal(err)
			}
			if cp.Position != (train.Position{Unroll: 1}) || len(cp.Theta) == 0 {
				t.Fatalf("checkpoint at %+v with %d positions; want the middle of the first epoch", cp.Position, len(cp.Theta))
			}
			resumeMatches(t, straight, stopped, nil)
		})
	}
}

// resumeMatches resumes the run stopped in dir stopped with args (--resume
// stopped alone when nil) and fails unless its sampler.json is the
// uninterrupted run's (in straight), bit for bit.
func resumeMatches(t *testing.T, straight, stopped string, args []string) {
	t.Helper()
	if args == nil {
		args = []string{"-resume", stopped}
	}
	if err := run(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(straight, "sampler.json"))
	b, _ := os.ReadFile(filepath.Join(stopped, "sampler.json"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the resumed run's sampler differs from the uninterrupted run's")
	}
}

// interrupted returns a run of args stopped after the given number of
// sampler steps, in the middle of an unroll, with its checkpoint.
func interrupted(t *testing.T, args []string, steps int) string {
	t.Helper()
	dir := t.TempDir()
	if err := run(ctxtest.CancelAfter(steps), append(args, "-out", dir)); !errors.Is(err, train.ErrInterrupted) {
		t.Fatalf("want an interruption, got %v", err)
	}
	return dir
}

// editJSON applies change to the JSON file at path as a tree of maps.
func editJSON(t *testing.T, path string, change func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	change(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestResumeTakesTheRunsFlags resumes an interrupted run with --resume DIR
// alone: the flags come from the run's config.json, also from one written
// before config.json recorded which flags were given (then the flags that
// differ from their defaults count, but the GRU width --preset quick sets),
// and the result is the uninterrupted run's.
func TestResumeTakesTheRunsFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		old  bool // config.json without "given"
	}{
		{"config.json", false},
		{"older config.json", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			straight := t.TempDir()
			if err := run(context.Background(), append(quick, "-out", straight)); err != nil {
				t.Fatal(err)
			}
			stopped := interrupted(t, quick, 12+5)
			if tc.old {
				editJSON(t, filepath.Join(stopped, "config.json"), func(m map[string]any) { delete(m, "given") })
			}
			resumeMatches(t, straight, stopped, nil)
		})
	}
}

// quick is a toy training of 3 unrolls of 12 steps per epoch, with flags
// beside the preset for resumes to take from config.json.
var quick = []string{"-task", "gaussian10", "-preset", "quick", "-chains", "8", "-sub-epochs", "2", "-seed", "6", "-quiet"}

// TestResumeRefusesConflictingFlags gives --resume flags beside it: those
// that change the run are refused in one line naming the flag, the run's
// value and what to do; those that do not, or that agree, are taken.
func TestResumeRefusesConflictingFlags(t *testing.T) {
	stopped := interrupted(t, quick, 12+5)
	for _, tc := range []struct {
		args []string
		want string // "" for no error
	}{
		{[]string{"-chains", "6"}, "--chains 6 conflicts with the run in " + stopped + ", which has --chains 8"},
		{[]string{"-task", "mnist-nt"}, "--task mnist-nt conflicts with the run in " + stopped + ", which has --task gaussian10"},
		{[]string{"-seed", "5"}, "which has --seed 6"},
		{[]string{"-preset", ""}, "which has --preset quick"},
		{[]string{"-steps", "13"}, "--steps 13 conflicts with the run in " + stopped + ", which did not set --steps"},
		{[]string{"-lr", "0.5"}, "which did not set --lr"},
		{[]string{"-target-seed", "3"}, "which did not set --target-seed"},
		{[]string{"-chains", "8", "-task", "gaussian10"}, ""},
		{[]string{"-quiet=false"}, ""},
		{[]string{"-epochs", "3"}, ""},
	} {
		dir := clitest.CopyDir(t, stopped)
		err := run(context.Background(), append(tc.args, "-resume", dir))
		if tc.want == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.args, err)
			}
			continue
		}
		tc.want = strings.ReplaceAll(tc.want, stopped, dir)
		var ue *cli.UsageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) ||
			!strings.Contains(err.Error(), "drop --") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: got %v; want a one-line usage error with %q", tc.args, err, tc.want)
		}
	}
	// --epochs extends the run
	dir := clitest.CopyDir(t, stopped)
	if err := run(context.Background(), []string{"-resume", dir, "-epochs", "3"}); err != nil {
		t.Fatal(err)
	}
	f, err := nnsghmc.Load(filepath.Join(dir, "sampler.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Training["epochs"] != 3.0 {
		t.Errorf("extended to %v epochs, want 3", f.Training["epochs"])
	}
}

// TestResumeRefusesADamagedRun resumes runs whose checkpoint or
// config.json was damaged: each is a one-line usage error (status 2) that
// names the file and what is wrong.
func TestResumeRefusesADamagedRun(t *testing.T) {
	stopped := interrupted(t, quick, 12+5)
	for _, tc := range []struct {
		name   string
		damage func(dir string)
		want   string
	}{
		{"negative epoch", func(dir string) {
			editJSON(t, filepath.Join(dir, "checkpoint.json"), func(m map[string]any) { m["position"].(map[string]any)["epoch"] = -5 })
		}, "checkpoint.json is not valid: position.epoch is -5"},
		{"unroll past the epoch", func(dir string) {
			editJSON(t, filepath.Join(dir, "checkpoint.json"), func(m map[string]any) { m["position"].(map[string]any)["unroll"] = 3 })
		}, "checkpoint.json is not valid: position.unroll is 3"},
		{"truncated checkpoint", func(dir string) {
			os.WriteFile(filepath.Join(dir, "checkpoint.json"), []byte(`{"version": 1, "posi`), 0o644)
		}, "checkpoint.json is not valid JSON of a checkpoint"},
		{"no checkpoint", func(dir string) { os.Remove(filepath.Join(dir, "checkpoint.json")) }, "cannot read checkpoint"},
		{"no config.json", func(dir string) { os.Remove(filepath.Join(dir, "config.json")) }, "config.json: no such file"},
		{"config.json without flags", func(dir string) {
			editJSON(t, filepath.Join(dir, "config.json"), func(m map[string]any) { delete(m, "flags") })
		}, `config.json is not valid (no "flags")`},
		{"config.json and checkpoint disagree", func(dir string) {
			editJSON(t, filepath.Join(dir, "config.json"), func(m map[string]any) { m["flags"].(map[string]any)["chains"] = "7" })
		}, "its config.chains is 8, this run's 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := clitest.CopyDir(t, stopped)
			tc.damage(dir)
			code, stderr := clitest.Command(t, "-resume", dir)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, dir) {
				t.Errorf("status %d, stderr %q; want status 2 and one line naming %s with %q", code, stderr, dir, tc.want)
			}
		})
	}
}

// TestDivergenceNamesTheLastCheckpoint makes training diverge in the first
// epoch, before any checkpoint, and in the second: the message names the
// checkpoint on disk, or says there is none.
func TestDivergenceNamesTheLastCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		epoch int // of the checkpoint; -1 for none
	}{
		{"in the first epoch", []string{"-step-size", "0.4"}, -1},
		{"in the second epoch", []string{"-step-size", "0.3", "-lr", "0.01"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append(append([]string{}, small...), "-epochs", "4", "-out", dir)
			err := run(context.Background(), append(args, tc.args...))
			var de *train.DivergenceError
			if !errors.As(err, &de) {
				t.Fatalf("want a divergence, got %v", err)
			}
			path := filepath.Join(dir, "checkpoint.json")
			cp, rerr := train.ReadCheckpoint(path)
			if tc.epoch < 0 {
				if rerr == nil || !strings.Contains(err.Error(), "no checkpoint was written") {
					t.Errorf("checkpoint read: %v; message %q; want no checkpoint, and a message that says so", rerr, err)
				}
				return
			}
			if rerr != nil {
				t.Fatalf("the message %q names a checkpoint that cannot be read: %v", err, rerr)
			}
			want := fmt.Sprintf("the last checkpoint, %s, holds the run after epoch %d", path, tc.epoch)
			if cp.Position != (train.Position{Epoch: tc.epoch}) || !strings.Contains(err.Error(), want) {
				t.Errorf("checkpoint at %+v, message %q; want epoch %d and %q", cp.Position, err, tc.epoch, want)
			}
		})
	}
}

// TestUsageErrorsLeaveNoOutDir: usage errors, NaN and infinite values of
// float flags and sizes beyond memory among them, are reported in one line
// with status 2 before --out is created.
func TestUsageErrorsLeaveNoOutDir(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		// sizes that crashed with a stack trace (a panic or a fatal
		// out-of-memory error, both status 2) are refused up front with
		// the estimate
		{[]string{"-chains", "2000000000000000", "-steps", "100"},
			"--chains 2000000000000000 on gaussian10 (10 dimensions) with --steps 100 and --window 20 needs at least about 34.4 EiB of memory, more than the "},
		{[]string{"-steps", "2000000000000000000"}, "lower --chains, --steps or --window"},
		{[]string{"-lr", "Inf"}, "--lr must be a finite number, got +Inf"},
		{[]string{"-lr", "NaN"}, "--lr must be a finite number, got NaN"},
		{[]string{"-step-size", "-Inf"}, "--step-size must be a finite number, got -Inf"},
		{[]string{"-target-scale", "NaN"}, "--target-scale must be a finite number"},
		{[]string{"-lr", "-1"}, "--lr: invalid value -1"},
		{[]string{"-epochs", "0"}, "--epochs: invalid value"},
		{[]string{"-task", "nope"}, `unknown task "nope"`},
		{[]string{"-init", "none.json"}, "--init: cannot read sampler file"},
		{[]string{"-step-size", "Inf"}, "--step-size must be a finite number, got +Inf"},
		{[]string{"-steps", "10"}, "the in-chain loss has no time within 10 steps"},
		{[]string{"-preset", "slow"}, `unknown preset "slow"`},
	}
	root := t.TempDir()
	for i, tc := range tests {
		top := filepath.Join(root, strconv.Itoa(i))
		args := append(append(append([]string{}, small...), tc.args...), "-out", filepath.Join(top, "out"))
		code, stderr := clitest.Command(t, args...)
		clitest.CheckUsageError(t, "train", tc.args, code, stderr, tc.want)
		if _, err := os.Stat(top); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: left a directory behind (%v)", tc.args, err)
		}
	}
	// --resume of a directory that does not exist creates none
	none := filepath.Join(root, "none", "run")
	if code, stderr := clitest.Command(t, "-resume", none); code != 2 || !strings.Contains(stderr, "cannot resume "+none+": no such file or directory") {
		t.Errorf("--resume %s: status %d, stderr %q", none, code, stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--resume left a directory behind (%v)", err)
	}
}

// TestSignalsWriteACheckpoint: SIGINT and SIGTERM stop training with a
// checkpoint and exit with 130 and 143; while it runs, a second process on
// the same directory is refused with a line naming it and the first
// process's PID.
func TestSignalsWriteACheckpoint(t *testing.T) {
	for _, sig := range clitest.StopSignals {
		t.Run(sig.Name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			first := clitest.Start(t, append(small, "-epochs", "100000", "-out", out)...)
			checkpoint := filepath.Join(out, "checkpoint.json")
			clitest.WaitFor(t, checkpoint)

			code, second := clitest.Command(t, append(small, "-epochs", "1", "-resume", out)...)
			want := fmt.Sprintf("train: error: cannot resume %s: it is in use by a run that is still going (PID %d on ", out, first.Cmd.Process.Pid)
			if code != 1 || !strings.HasPrefix(second, want) || strings.Count(second, "\n") != 1 {
				t.Errorf("second process: status %d, stderr %q; want 1 and %q...", code, second, want)
			}

			first.Stop(t, sig)
			want = fmt.Sprintf("train: %s: training interrupted: checkpoint written to %s; continue with --resume %s\n", sig.Name, checkpoint, out)
			if first.Stderr.String() != want {
				t.Errorf("stderr %q, want %q", first.Stderr.String(), want)
			}
			if _, err := train.ReadCheckpoint(checkpoint); err != nil {
				t.Error(err)
			}
			if _, err := os.Stat(filepath.Join(out, ".lock")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("lock file left behind: %v", err)
			}
		})
	}
}

// TestLogWhenNotATerminal: without a terminal, training logs a line per
// epoch with progress and time left, and at the end where its outputs are.
func TestLogWhenNotATerminal(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	args := append(slices.DeleteFunc(append([]string{}, small...), func(a string) bool { return a == "-quiet" }), "-out", out)
	code, stderr := clitest.Command(t, args...)
	lines := clitest.LogLines(stderr)
	stamp := `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d train gaussian10: `
	want := []string{
		stamp + `2/4 \(50%\), .* elapsed, ETA .*: epoch 1/2, \S+ energy \S+$`,
		stamp + `4/4 \(100%\), .* elapsed: epoch 2/2, \S+ energy \S+$`,
		stamp + `finished 4/4 \(100%\), .* elapsed$`,
		stamp + `outputs in ` + regexp.QuoteMeta(out) + `$`,
	}
	if code != 0 || len(lines) != len(want) {
		t.Fatalf("status %d, stderr:\n%s", code, stderr)
	}
	for i, re := range want {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %s", i+1, lines[i], re)
		}
	}
}

// TestEnergyScaleSetsTheNetworksInput: --energy-scale sets the scale of the
// networks' energy input that training uses, and the trained-sampler file
// records it; 0 is refused.
func TestEnergyScaleSetsTheNetworksInput(t *testing.T) {
	for _, tc := range []struct {
		scale string
		want  float64 // 0: a usage error
	}{{"", 1}, {"0.1", 0.1}, {"-2", -2}, {"0", 0}} {
		args := append([]string{}, quick...)
		if tc.scale != "" {
			args = append(args, "-energy-scale", tc.scale)
		}
		out := filepath.Join(t.TempDir(), "run")
		err := run(context.Background(), append(args, "-out", out))
		if tc.want == 0 {
			var ue *cli.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--energy-scale") {
				t.Errorf("--energy-scale %s: got %v, want a usage error naming the flag", tc.scale, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("--energy-scale %q: %v", tc.scale, err)
		}
		f, err := nnsghmc.Load(filepath.Join(out, "sampler.json"))
		if err != nil {
			t.Fatal(err)
		}
		if f.Inputs.EnergyScale != tc.want {
			t.Errorf("--energy-scale %q: the sampler file records %v, want %v", tc.scale, f.Inputs.EnergyScale, tc.want)
		}
	}
}

// TestFloat32TrainsLikeFloat64 trains a small Bayesian GRU with its energy
// in float64 and in float32 (--float32): the losses and the gradient norms
// of every optimiser step agree to float32's precision (measured: 2e-8 and
// 6e-8 relative), and so do the trained networks, while the two runs do
// differ (the flag reaches the energy).
func TestFloat32TrainsLikeFloat64(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: data tasks skipped")
	}
	if _, err := os.Stat(filepath.Join(datadir.Dir(""), "music", "Piano_midi.mat")); err != nil {
		t.Skipf("data not available (%v); set %s", err, datadir.EnvVar)
	}
	args := []string{"-task", "piano-gru", "-preset", "quick", "-hidden", "4", "-epochs", "2", "-sub-epochs", "1", "-chains", "4", "-steps", "8", "-window", "4", "-quiet", "-seed", "2"}
	dirs := [2]string{t.TempDir(), t.TempDir()}
	for i, extra := range [][]string{nil, {"-float32"}} {
		if err := run(context.Background(), append(append(append([]string{}, args...), extra...), "-out", dirs[i])); err != nil {
			t.Fatal(err)
		}
	}
	var rows [2][][]string
	var nets [2][][]float64
	for i, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "train.csv"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
			rows[i] = append(rows[i], strings.Split(line, ","))
		}
		f, err := nnsghmc.Load(filepath.Join(dir, "sampler.json"))
		if err != nil {
			t.Fatal(err)
		}
		nets[i] = append(f.Q.Params(), f.D.Params()...)
		if dt, want := f.Training["energy_dtype"], []any{nil, "float32"}[i]; dt != want {
			t.Errorf("sampler.json's training records energy_dtype %v, want %v", dt, want)
		}
	}
	if len(rows[0]) != 4 || len(rows[1]) != len(rows[0]) {
		t.Fatalf("train.csv rows: %d and %d, want 4", len(rows[0]), len(rows[1]))
	}
	same := true
	for r := range rows[0] {
		for _, col := range []int{3, 4} { // energy, grad_norm
			a, errA := strconv.ParseFloat(rows[0][r][col], 64)
			b, errB := strconv.ParseFloat(rows[1][r][col], 64)
			if errA != nil || errB != nil {
				t.Fatalf("row %d: %v %v", r, errA, errB)
			}
			if rel := math.Abs(a-b) / math.Abs(a); rel > 1e-6 {
				t.Errorf("row %d column %d: float64 %v, float32 %v (relative difference %.1e > 1e-6)", r, col, a, b, rel)
			}
			same = same && a == b
		}
	}
	if same {
		t.Error("the float32 run's losses are the float64 run's bit for bit: --float32 did not reach the energy")
	}
	for i := range nets[0] {
		for j, a := range nets[0][i] {
			if d := math.Abs(a - nets[1][i][j]); d > 1e-5*(1+math.Abs(a)) {
				t.Errorf("network parameter %d.%d: float64 %v, float32 %v", i, j, a, nets[1][i][j])
			}
		}
	}
}
