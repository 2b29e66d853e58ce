package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// TestSizesAndScalesGiveOneLineAndStatus2 is the regression test of issue
// 18's inputs that gave stack traces (exit status 2 from the panic or a
// fatal out-of-memory error): a scale that gives no covariance, sizes whose
// vectors overflow or cannot fit. Each must be refused up front with one
// line naming the problem (with the memory figure for sizes) and status 2,
// leaving no --out directory behind.
func TestSizesAndScalesGiveOneLineAndStatus2(t *testing.T) {
	const fourGiB = "4194304" // ulimit -v counts KiB
	tests := []struct {
		name  string
		limit string // ulimit -v, or "" for none
		args  []string
		want  string
	}{
		{"NaN scale", "", []string{"--task", "gaussian20", "--target-scale", "NaN"}, "--target-scale must be a finite number, got NaN"},
		{"infinite scale", "", []string{"--task", "gaussian20", "--target-scale", "Inf"}, "--target-scale must be a finite number, got +Inf"},
		{"zero scale", "", []string{"--task", "gaussian20", "--target-scale", "0"}, "--target-scale must be a positive number, got 0"},
		{"underflowing scale", "", []string{"--task", "gaussian20", "--target-scale", "1e-200"}, "has no valid covariance in float64"},
		{"overflowing scale", "", []string{"--task", "gaussian20", "--target-scale", "1e200"}, "has no valid covariance in float64"},
		{"chains overflowing an int", "", []string{"--task", "gaussian20", "--chains", "2000000000000000000"},
			"--chains 2000000000000000000 on gaussian20 (20 dimensions) for --steps 12000 needs at least about 3.33e+06 EiB of memory"},
		{"chains beyond ulimit -v", fourGiB, []string{"--task", "gaussian20", "--chains", "100000000"},
			"--chains 100000000 on gaussian20 (20 dimensions) for --steps 12000 needs at least about 175 TiB of memory, more than the 4 GiB that ulimit -v allows: lower --chains or --steps"},
		{"a few steps beyond ulimit -v", fourGiB, []string{"--task", "gaussian20", "--chains", "3000000", "--steps", "2"},
			"needs at least about 5.36 GiB of memory, more than the 4 GiB that ulimit -v allows"},
		{"hidden beyond any width", "", []string{"--task", "piano-gru", "--hidden", "10000000"}, "--hidden must be between 1 and 1048576, got 10000000"},
		{"negative hidden", "", []string{"--task", "piano-gru", "--hidden", "-5"}, "--hidden must be between 1 and 1048576, got -5"},
		{"negative network width", "", []string{"--task", "gaussian20", "--q-hidden", "-3"}, "--q-hidden: widths must be between 1 and 1048576, got [-3]"},
		{"network width beyond any", "", []string{"--task", "gaussian20", "--d-hidden", "100000000"}, "--d-hidden: widths must be between 1 and 1048576, got [100000000]"},
		{"networks beyond ulimit -v", fourGiB, []string{"--task", "gaussian20", "--q-hidden", "100000,100000"},
			"NNSGHMC with --q-hidden [100000 100000] and --d-hidden [40 40] on --chains 50 of gaussian20 (20 dimensions) needs at least about 76 GiB of memory, more than the 4 GiB that ulimit -v allows: narrow --q-hidden or --d-hidden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			code, stderr := commandUnder(t, tc.limit, append(tc.args, "--quiet", "--out", out)...)
			clitest.CheckUsageError(t, "sample", tc.args, code, stderr, tc.want)
			// the networks are refused when the sampler is built, after
			// --out is made: a usage error that leaves an empty --out
			// behind is issue 18's item 7, not checked here
			nets := slices.Contains(tc.args, "--q-hidden") || slices.Contains(tc.args, "--d-hidden")
			if _, err := os.Stat(out); err == nil && !nets {
				t.Errorf("the refused run left %s behind", out)
			}
		})
	}
}

// commandUnder runs the command with args as command does, under ulimit -v
// limit (KiB) unless limit is "".
func commandUnder(t *testing.T, limit string, args ...string) (int, string) {
	t.Helper()
	if limit == "" {
		return clitest.Command(t, args...)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to set ulimit -v with")
	}
	cmd := exec.Command(bash, append([]string{"-c", `ulimit -v "$1" && shift && exec "$0" "$@"`, os.Args[0], limit}, args...)...)
	cmd.Env = append(os.Environ(), clitest.RunMainEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// TestGRUWidthBeyondMemoryIsRefused is the regression test of "sample
// --task piano-gru --hidden 1000000", a fatal out-of-memory error with a
// stack trace: it is refused with the estimate before anything is
// allocated.
func TestGRUWidthBeyondMemoryIsRefused(t *testing.T) {
	dir := datatest.Need(t, "music/Piano_midi.mat")
	out := filepath.Join(t.TempDir(), "run")
	code, stderr := clitest.Command(t, "--task", "piano-gru", "--hidden", "1000000", "--data-dir", dir, "--quiet", "--out", out)
	const want = "sample: error: --chains 20 on piano-gru (1000000 hidden units, 3000355000088 dimensions) needs at least about 4.26 PiB of memory, more than the "
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); code != 2 || len(lines) != 1 || !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, "lower --chains, or --hidden\n") {
		t.Errorf("status %d, stderr %q; want status 2 and one line starting %q", code, stderr, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the refused run left %s behind", out)
	}
}
