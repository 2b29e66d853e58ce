package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
	"github.com/metasgmcmc/metasgmcmc/train"
)

func TestMain(m *testing.M) {
	if os.Getenv("TRAIN_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func command(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "TRAIN_RUN_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
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
		{[]string{"-steps", "10", "-out", dir}, "the in-chain loss has no time within 10 steps"},
		{[]string{"-resume", filepath.Join(dir, "none")}, "cannot read checkpoint"},
		{[]string{"-init", filepath.Join(dir, "none.json"), "-out", filepath.Join(dir, "i")}, "--init: cannot read sampler file"},
	}
	for _, tc := range tests {
		code, stderr := command(t, tc.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(stderr, tc.want) || !strings.HasPrefix(stderr, "train: error: ") {
			t.Errorf("%v: status %d, stderr %q; want status 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// A run stopped at the end of an epoch and extended with --resume gives the
// same sampler, bit for bit, as one that never stopped, on a task that
// draws minibatches: the checkpoint carries the minibatch order.
func TestResumeContinuesTheMinibatchOrder(t *testing.T) {
	if _, err := os.Stat(filepath.Join(datadir.Dir(""), "mnist", "train-images-idx3-ubyte.gz")); err != nil {
		t.Skipf("MNIST not available (%v); set %s", err, datadir.EnvVar)
	}
	// 4 chains, unrolls of 12 steps on batches of 500: an epoch of 2 unrolls
	// visits 24 minibatches, part of a data epoch of 61
	args := []string{"-task", "mnist-data-train", "-sub-epochs", "1", "-chains", "4", "-steps", "12", "-window", "4", "-quiet", "-seed", "3"}
	straight, stopped := t.TempDir(), t.TempDir()
	if err := run(context.Background(), append(args, "-epochs", "2", "-out", straight)); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), append(args, "-epochs", "1", "-out", stopped)); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), append(args, "-epochs", "2", "-resume", stopped)); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(straight, "sampler.json"))
	b, _ := os.ReadFile(filepath.Join(stopped, "sampler.json"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the resumed run's sampler differs from the uninterrupted run's")
	}
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
	f, err := samplers.ReadSamplerFile(filepath.Join(straight, "sampler.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Config.TrainDim != 10 || f.Config.StepSize != 0.01 {
		t.Errorf("sampler file: train_dim %d, step size %v", f.Config.TrainDim, f.Config.StepSize)
	}

	// interrupt after the first optimiser steps, then resume
	resumed := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // interrupted before the first unroll completes
	if err := run(ctx, append(small, "-out", resumed)); !errors.Is(err, train.ErrInterrupted) {
		t.Fatalf("want an interruption, got %v", err)
	}
	if err := run(context.Background(), append(small, "-resume", resumed)); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(straight, "sampler.json"))
	b, _ := os.ReadFile(filepath.Join(resumed, "sampler.json"))
	if !bytes.Equal(a, b) {
		t.Error("the resumed run's sampler differs from the uninterrupted run's")
	}
	// a sampler file runs in cmd/sample: checked there; here a mismatched resume
	if err := run(context.Background(), append(append([]string{}, small...), "-steps", "57", "-resume", resumed)); err == nil ||
		!strings.Contains(err.Error(), "another training configuration") {
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
	read := func(dir string) *samplers.SamplerFile {
		f, err := samplers.ReadSamplerFile(filepath.Join(dir, "sampler.json"))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b, c := read(first), read(fromInit), read(fresh)
	maxDiff := func(x, y *samplers.SamplerFile) float64 {
		d := 0.0
		for l := range x.Config.Q.W {
			for i, v := range x.Config.Q.W[l] {
				d = math.Max(d, math.Abs(v-y.Config.Q.W[l][i]))
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

// TestUsageErrorsLeaveNoOutDir: usage errors, NaN and infinite values of
// float flags among them, are reported before --out is created.
func TestUsageErrorsLeaveNoOutDir(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-lr", "Inf"}, "--lr must be a finite number, got +Inf"},
		{[]string{"-lr", "NaN"}, "--lr must be a finite number, got NaN"},
		{[]string{"-step-size", "-Inf"}, "--step-size must be a finite number, got -Inf"},
		{[]string{"-target-scale", "NaN"}, "--target-scale must be a finite number"},
		{[]string{"-lr", "-1"}, "--lr: invalid value -1"},
		{[]string{"-epochs", "0"}, "--epochs: invalid value"},
		{[]string{"-task", "nope"}, `unknown task "nope"`},
		{[]string{"-init", "none.json"}, "--init: cannot read sampler file"},
	}
	root := t.TempDir()
	for i, tc := range tests {
		top := filepath.Join(root, strconv.Itoa(i))
		args := append(append(append([]string{}, small...), tc.args...), "-out", filepath.Join(top, "out"))
		code, stderr := command(t, args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: status %d, stderr %q; want status 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
		if _, err := os.Stat(top); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: left a directory behind (%v)", tc.args, err)
		}
	}
	// --resume of a directory that does not exist creates none
	none := filepath.Join(root, "none", "run")
	if code, stderr := command(t, "-resume", none); code != 2 || !strings.Contains(stderr, "cannot read checkpoint") {
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
	for _, tc := range []struct {
		sig  syscall.Signal
		name string
		code int
	}{{syscall.SIGINT, "SIGINT", 130}, {syscall.SIGTERM, "SIGTERM", 143}} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cmd := exec.Command(os.Args[0], append(small, "-epochs", "100000", "-out", out)...)
			cmd.Env = append(os.Environ(), "TRAIN_RUN_MAIN=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			checkpoint := filepath.Join(out, "checkpoint.json")
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if _, err := os.Stat(checkpoint); err == nil {
					break
				} else if time.Now().After(deadline) {
					t.Fatal("no checkpoint after a minute")
				}
			}

			code, second := command(t, append(small, "-epochs", "1", "-resume", out)...)
			want := fmt.Sprintf("train: error: %s is in use by another run (PID %d on ", out, cmd.Process.Pid)
			if code != 1 || !strings.HasPrefix(second, want) || strings.Count(second, "\n") != 1 {
				t.Errorf("second process: status %d, stderr %q; want 1 and %q...", code, second, want)
			}

			cmd.Process.Signal(tc.sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("stopped by %s: %v; want status %d", tc.name, err, tc.code)
			}
			want = fmt.Sprintf("train: %s: training interrupted: checkpoint written to %s; continue with --resume %s and the same flags\n", tc.name, checkpoint, out)
			if stderr.String() != want {
				t.Errorf("stderr %q, want %q", stderr.String(), want)
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
	code, stderr := command(t, args...)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
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
