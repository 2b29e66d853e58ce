package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
)

// TestGaussianDivergenceNamesChainAndStep is the regression test of issue
// 18's "sample --task gaussian20 --sampler sghmc --step-size 0.5 --steps 2000
// --eval-every 10", which stopped with "diag: KLGaussian: covHat:
// covariance is not positive definite": the run must stop with the chain
// and step, numbered as metrics.csv numbers its rows, and exit 1 (a runtime
// error, not a usage error).
func TestGaussianDivergenceNamesChainAndStep(t *testing.T) {
	out := t.TempDir()
	code, stderr := clitest.Command(t, "--task", "gaussian20", "--sampler", "sghmc", "--step-size", "0.5", "--steps", "2000",
		"--eval-every", "10", "--quiet", "--out", out)
	const want = "sample: error: chain 5 diverged at step 11: its position is 3.92e+06 from the target's mean in coordinate 0"
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); code != 1 || len(lines) != 1 || !strings.HasPrefix(stderr, want) ||
		!strings.Contains(stderr, "(try a smaller step size) after 10 steps") {
		t.Errorf("status %d, stderr %q; want status 1 and one line starting %q", code, stderr, want)
	}
	m, err := os.ReadFile(filepath.Join(out, "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(m)), "\n")
	if last := rows[len(rows)-1]; !strings.HasPrefix(last, "10,") {
		t.Errorf("metrics.csv's last row %q is not step 10, the last good step", last)
	}
	s, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if !strings.Contains(string(s), `"error": "chain 5 diverged at step 11`) || !strings.Contains(string(s), `"steps": 10`) {
		t.Errorf("summary.json does not record the divergence after 10 steps:\n%s", s)
	}
}
