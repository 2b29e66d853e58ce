package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
)

// diagCov writes a 10×10 diagonal covariance with the given variances'
// scale to path, as the authors' Cov_* files.
func diagCov(t *testing.T, path string, scale float64) {
	t.Helper()
	var b strings.Builder
	for i := 0; i < 10; i++ {
		for j := 0; j < 10; j++ {
			v := 0.0
			if i == j {
				v = scale * float64(i+1) / 10
			}
			fmt.Fprintf(&b, "%g ", v)
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestResumeReadsTheInputsItStartedWith: a run started with a relative
// --target-cov in one directory and resumed from another that holds a
// different file of the same name continues with the file it started
// with, to the uninterrupted run's sampler; a run whose file has changed
// since is refused in one line naming the file.
func TestResumeReadsTheInputsItStartedWith(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	os.Mkdir(a, 0o755)
	os.Mkdir(b, 0o755)
	diagCov(t, filepath.Join(a, "cov"), 1)
	diagCov(t, filepath.Join(b, "cov"), 3)
	args := append(append([]string{}, quick...), "-target-cov", "cov")
	t.Chdir(a)
	straight := t.TempDir()
	if err := run(context.Background(), append(args, "-out", straight)); err != nil {
		t.Fatal(err)
	}
	stopped := interrupted(t, args, 12+5)
	changed := clitest.CopyDir(t, stopped)

	t.Chdir(b)
	resumeMatches(t, straight, stopped, nil)

	diagCov(t, filepath.Join(a, "cov"), 2)
	err := run(context.Background(), []string{"-resume", changed})
	want := fmt.Sprintf("cannot resume %s: --target-cov %s has changed since the run started", changed, filepath.Join(a, "cov"))
	var ue *cli.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("resumed after its covariance changed: %v; want one line with %q", err, want)
	}
}

// TestOutRefusesWhatIsNotItsOwnRun: train --out onto a directory of a
// user's files, or of a sample run, is refused in one line that says what
// is there, and leaves the files as they were; --resume on a sample run
// names the command that continues it.
func TestOutRefusesWhatIsNotItsOwnRun(t *testing.T) {
	userFiles := map[string]string{"config.json": `{"lr": 0.1}` + "\n", "train.csv": "a,b\n1,2\n"}
	sampleRun := map[string]string{"config.json": `{"command": "sample", "flags": {}, "given": []}` + "\n", "summary.json": "{}\n"}
	oldSampleRun := map[string]string{"summary.json": `{"task": "gaussian20", "sampler": "sghmc"}` + "\n", "metrics.csv": "step,seconds\n"}
	tests := []struct {
		name  string
		files map[string]string
		args  []string // besides small's
		want  string   // DIR for the directory
	}{
		{"a user's files", userFiles, []string{"-out", "DIR"}, "the output directory DIR is not empty and holds no run of this program (it has config.json, train.csv)"},
		{"a sample run", sampleRun, []string{"-out", "DIR"}, "DIR holds a sample run, not a train run: train does not write over it"},
		{"a sample run from before config.json", oldSampleRun, []string{"-out", "DIR"}, "DIR holds a sample run, not a train run"},
		{"resume a sample run", sampleRun, []string{"-resume", "DIR"}, "cannot resume DIR: it holds a sample run, not a train run; continue it with sample --resume DIR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
			}
			args := append(append([]string{}, small...), strings.Fields(strings.ReplaceAll(strings.Join(tc.args, " "), "DIR", dir))...)
			code, stderr := clitest.Command(t, args...)
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
				t.Errorf("status %d, stderr %q; want status 2 and one line with %q", code, stderr, want)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != len(tc.files) {
				t.Errorf("the directory now has %d entries, had %d", len(entries), len(tc.files))
			}
			for name, content := range tc.files {
				if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != content {
					t.Errorf("%s changed to %q", name, b)
				}
			}
		})
	}
}

// TestResumeRefusesEpochsBeforeTheCheckpoint: --resume with --epochs below
// the checkpoint's is refused, where it ran and reported "finished 3/2
// (150 %)" and rewrote config.json with the smaller number.
func TestResumeRefusesEpochsBeforeTheCheckpoint(t *testing.T) {
	dir := t.TempDir()
	if err := run(context.Background(), append(append([]string{}, quick...), "-epochs", "3", "-out", dir)); err != nil {
		t.Fatal(err)
	}
	config, _ := os.ReadFile(filepath.Join(dir, cli.ConfigFile))
	code, stderr := clitest.Command(t, "-resume", dir, "-epochs", "2")
	want := fmt.Sprintf("--epochs 2 is before the checkpoint of the run in %s, after epoch 3: give --epochs 3 or more", dir)
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("status %d, stderr %q; want 2 and %q", code, stderr, want)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, cli.ConfigFile)); !bytes.Equal(now, config) {
		t.Error("the refused resume rewrote config.json")
	}
	// ending it at its checkpoint is no error
	if err := run(context.Background(), []string{"-resume", dir, "-epochs", "3"}); err != nil {
		t.Errorf("--epochs 3: %v", err)
	}
}

// TestResumeRemovesInterruptedWrites: the temporary files of writes that a
// killed process left behind (".train.png.tmp123") are gone after a
// resumed run.
func TestResumeRemovesInterruptedWrites(t *testing.T) {
	stopped := interrupted(t, quick, 12+5)
	temp := filepath.Join(stopped, ".train.png.tmp123")
	os.WriteFile(temp, []byte("half a png"), 0o600)
	if err := run(context.Background(), []string{"-resume", stopped}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(temp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there (%v)", temp, err)
	}
}
