package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
)

// TestSizesBeyondMemoryAreRefused is the regression test of sizes that
// crashed with a stack trace (a panic or a fatal out-of-memory error, both
// exit status 2): a run that cannot fit is refused up front with one line
// giving the estimate and status 2, leaving no --out directory behind.
func TestSizesBeyondMemoryAreRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-task", "gaussian10", "-chains", "2000000000000000"},
			"--chains 2000000000000000 on gaussian10 (10 dimensions) with --steps 100 and --window 20 needs at least about 55.6 EiB of memory, more than the "},
		{[]string{"-task", "gaussian10", "-steps", "2000000000000000000"}, "lower --chains, --steps or --window"},
		{[]string{"-task", "gaussian20", "-target-scale", "NaN"}, "--target-scale must be a finite number, got NaN"},
	} {
		out := filepath.Join(t.TempDir(), "run")
		code, stderr := clitest.Command(t, append(tc.args, "-quiet", "-out", out)...)
		if lines := strings.Split(strings.TrimSpace(stderr), "\n"); code != 2 || len(lines) != 1 || !strings.HasPrefix(stderr, "train: error: ") || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: status %d, stderr %q; want status 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: the refused run left %s behind", tc.args, out)
		}
	}
}
