package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
)

// TestForceReplacesOnlyASampleRun: sample --force onto the directory of a
// training run (one that records its command, and one from before it did)
// is refused in one line naming what is there, and deletes nothing; it
// deleted the run's checkpoint.json and config.json.
func TestForceReplacesOnlyASampleRun(t *testing.T) {
	for _, config := range []string{
		`{"command": "train", "flags": {"task": "gaussian10"}, "given": ["task"], "training": {"chains": 8}}`,
		`{"flags": {"task": "gaussian10"}, "given": ["task"], "training": {"chains": 8}}`,
	} {
		dir := t.TempDir()
		files := map[string]string{"config.json": config + "\n", "checkpoint.json": `{"version": 1}` + "\n", "train.csv": "epoch\n1\n"}
		for name, content := range files {
			os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
		}
		code, stderr := clitest.Command(t, append(small, "-force", "-out", dir)...)
		want := dir + " holds a train run, not a sample run: sample does not write over it; choose another --out"
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
			t.Errorf("status %d, stderr %q; want 2 and one line with %q", code, stderr, want)
		}
		for name, content := range files {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != content {
				t.Errorf("%s: %q, %v; want it kept", name, b, err)
			}
		}
	}
}

// TestCheckpointThatIsNoObject: a checkpoint.json of null, or without a
// version, is named as such; null was reported as "version 0".
func TestCheckpointThatIsNoObject(t *testing.T) {
	for content, want := range map[string]string{
		"null":        "it holds null, not an object with a checkpoint's fields",
		"[]":          "not valid JSON of a checkpoint",
		`{"rows": 0}`: "version is missing",
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, checkpointFile), []byte(content), 0o644)
		if _, err := readCheckpoint(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", content, err, want)
		}
	}
}

// TestProgressCountsTheLastStep: a run stopped early by --patience logs
// the step it stopped at, where its count was one short ("29/200" for a
// run that stopped at step 30).
func TestProgressCountsTheLastStep(t *testing.T) {
	needData(t, pianoData)
	out := filepath.Join(t.TempDir(), "run")
	code, stderr := clitest.Command(t, "-task", "piano-gru", "-sampler", "sghmc", "-hidden", "4", "-chains", "2", "-steps", "60",
		"-eval-every", "3", "-valid", "-patience", "2", "-lr", "0.05", "-out", out)
	if code != 0 {
		t.Fatalf("status %d, %s", code, stderr)
	}
	m := regexp.MustCompile(`stopped at (\d+)/60 `).FindStringSubmatch(stderr)
	sum := summaryWithoutTiming(t, out)
	if m == nil || m[1] != strconv.Itoa(int(sum["steps"].(float64))) {
		t.Errorf("log:\n%s\nwant \"stopped at %v/60\"", stderr, sum["steps"])
	}
}

// TestTuneStep: --tune-step runs the pilot runs, takes the step size of
// the smallest KSD and records the candidates in summary.json; a task
// without an exact score is refused in one line.
func TestTuneStep(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if err := run(context.Background(), []string{"-task", "gaussian20", "-sampler", "sghmc", "-chains", "4", "-steps", "30", "-eval-every", "10", "-quiet", "-tune-step", "-out", out}); err != nil {
		t.Fatal(err)
	}
	sum := summaryWithoutTiming(t, out)
	tuned, ok := sum["tune_step"].(map[string]any)
	if !ok || len(tuned["step_sizes"].([]any)) != 9 || tuned["step_size"] != sum["step_size"] {
		t.Fatalf("summary.json: tune_step %v, step_size %v", sum["tune_step"], sum["step_size"])
	}
	needData(t, pianoData)
	err := run(context.Background(), append(append([]string{"-task", "piano-gru"}, gruRun...), "-tune-step", "-out", filepath.Join(t.TempDir(), "gru")))
	var ue *cli.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--tune-step needs the exact score") {
		t.Errorf("--tune-step on piano-gru: %v", err)
	}
}
