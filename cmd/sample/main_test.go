package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// TestMain lets tests run the command itself as a subprocess: with
// SAMPLE_RUN_MAIN=1 the test binary is the command.
func TestMain(m *testing.M) {
	if os.Getenv("SAMPLE_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(datatest.Main(m))
}

// command runs the command with args and returns its exit status and
// standard error.
func command(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SAMPLE_RUN_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stderr.String()
}

func TestBadInputGivesOneLineAndStatus2(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.flags")
	os.WriteFile(bad, []byte("--steps 10\n--no-such-flag 3\n"), 0o644)
	cov2 := filepath.Join(dir, "cov2")
	os.WriteFile(cov2, []byte("1 0\n0 1\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-task", "nope", "-out", dir}, `unknown task "nope"`},
		{[]string{"-sampler", "hmc", "-out", dir, "-steps", "1"}, `unknown sampler "hmc"`},
		{[]string{"-chains", "0", "-out", dir}, "--chains must be positive"},
		{[]string{"-step-size", "-0.1", "-out", dir}, "--step-size must be positive"},
		{[]string{"-steps", "-5", "-out", dir}, "--steps must be positive"},
		{[]string{"-gamma", "approx", "-out", dir, "-steps", "1"}, `unknown gamma "approx"`},
		{[]string{"-flagfile", filepath.Join(dir, "missing.flags"), "-out", dir}, "cannot read flag file"},
		{[]string{"-flagfile", bad, "-out", dir}, "line 2: unknown flag --no-such-flag"},
		{[]string{"-meta", filepath.Join(dir, "none.json"), "-out", dir, "-steps", "1"}, "cannot read sampler file"},
		{[]string{"-steps", "3"}, "--out DIR is required"},
		{[]string{"-sampler", "sghmc", "-meta", "sampler.json", "-out", dir}, "--meta is a flag of --sampler nnsghmc; --sampler sghmc does not use it"},
		{[]string{"-sampler", "sgld", "-friction", "1", "-out", dir}, "--friction is a flag of --sampler sghmc"},
		{[]string{"-sampler", "nnsghmc", "-psgld-decay", "0.9", "-out", dir}, "--psgld-decay is a flag of --sampler psgld"},
		{[]string{"-task", "gaussian20", "-valid", "-out", dir}, "--valid is a flag of the GRU tasks; task gaussian20 does not use it"},
		{[]string{"-task", "gaussian20", "-hidden", "50", "-out", dir}, "--hidden is a flag of the GRU tasks"},
		{[]string{"-task", "gaussian20", "-download", "-out", dir}, "--download is a flag of the MNIST tasks"},
		{[]string{"-task", "gaussian20", "-target-cov", cov2, "-out", dir}, "is 2×2; this task's target is 20-D"},
		{[]string{"-task", "gaussian20", "-target-cov", filepath.Join(dir, "none"), "-out", dir}, "cannot read the covariance"},
		{[]string{"-task", "gaussian20", "-target-cov", cov2, "-target-seed", "3", "-out", dir}, "--target-cov replaces the covariance"},
		{[]string{"-task", "gaussian2d", "-target-cov", cov2, "-out", dir}, "--target-cov is a flag of the toy Gaussian"},
	}
	for _, tc := range tests {
		code, stderr := command(t, tc.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(stderr, tc.want) || !strings.HasPrefix(stderr, "sample: error: ") {
			t.Errorf("%v: status %d, stderr %q; want status 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestRunWritesOutputsReproducibly(t *testing.T) {
	outs := []string{t.TempDir(), t.TempDir()}
	for _, out := range outs {
		args := []string{"-task", "gaussian20", "-sampler", "nnsghmc", "-chains", "4", "-steps", "30",
			"-eval-every", "10", "-q-hidden", "5", "-d-hidden", "5", "-trace", "2", "-seed", "3", "-quiet", "-out", out}
		if err := run(context.Background(), args); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"metrics.csv", "trace.csv", "metrics.png", "metrics.svg", "summary.json"} {
		a, err := os.ReadFile(filepath.Join(outs[0], name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "metrics.csv" || name == "trace.csv" {
			b, _ := os.ReadFile(filepath.Join(outs[1], name))
			if name == "metrics.csv" {
				a, b = dropColumn(a, 1), dropColumn(b, 1) // seconds differ
			}
			if !bytes.Equal(a, b) {
				t.Errorf("%s differs between two runs with the same seed", name)
			}
		}
	}
	var sum map[string]any
	b, _ := os.ReadFile(filepath.Join(outs[0], "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"task", "sampler", "chains", "steps", "seed", "seconds", "steps_per_second", "kl", "ess", "flags"} {
		if _, ok := sum[key]; !ok {
			t.Errorf("summary.json lacks %q", key)
		}
	}
	if sum["steps"].(float64) != 30 || sum["chains"].(float64) != 4 {
		t.Errorf("summary: %v steps, %v chains", sum["steps"], sum["chains"])
	}
	m, _ := os.ReadFile(filepath.Join(outs[0], "metrics.csv"))
	if lines := strings.Split(strings.TrimSpace(string(m)), "\n"); len(lines) != 4 || lines[0] != "step,seconds,kl" {
		t.Errorf("metrics.csv:\n%s", m)
	}
	entries, _ := os.ReadDir(outs[0])
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func dropColumn(csv []byte, col int) []byte {
	var out []string
	for _, line := range strings.Split(string(csv), "\n") {
		f := strings.Split(line, ",")
		if len(f) > col {
			f = append(f[:col], f[col+1:]...)
		}
		out = append(out, strings.Join(f, ","))
	}
	return []byte(strings.Join(out, "\n"))
}

func TestDivergenceIsReportedNotPrinted(t *testing.T) {
	out := t.TempDir()
	err := run(context.Background(), []string{"-task", "gaussian20", "-sampler", "sgld", "-step-size", "5", "-chains", "3",
		"-steps", "200", "-quiet", "-out", out})
	if err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Fatalf("want a divergence error, got %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if !strings.Contains(string(b), "diverged") {
		t.Errorf("summary.json does not report the divergence:\n%s", b)
	}
}
