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
// error, not a usage error). The evaluation at step 10, the last before,
// has already warned of a runaway chain.
func TestGaussianDivergenceNamesChainAndStep(t *testing.T) {
	out := t.TempDir()
	code, stderr := clitest.Command(t, "--task", "gaussian20", "--sampler", "sghmc", "--step-size", "0.5", "--steps", "2000",
		"--eval-every", "10", "--quiet", "--out", out)
	const want = "sample: error: chain 5 diverged at step 11: its position is 3.92e+06 from the target's mean in coordinate 0"
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := lines[len(lines)-1]; code != 1 || len(lines) != 2 || !strings.HasPrefix(last, want) ||
		!strings.Contains(last, "(try a smaller step size) after 10 steps") ||
		!strings.HasPrefix(lines[0], "sample: warning: chain 42's kinetic temperature (its mean squared momentum) is 7.82e+12 at step 10,") {
		t.Errorf("status %d, stderr %q; want status 1, the runaway warning of step 10 and one error line starting %q", code, stderr, want)
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

// TestNNSGHMCDivergenceExplainsTheFriction: where NNSGHMC's D_f may exceed
// 2/η, its explicit friction step overshoots, and a divergence says so and
// names what prevents it; where D_f is clamped below 2/η, or under the
// exponential step whatever D_f is, the same run keeps every chain.
func TestNNSGHMCDivergenceExplainsTheFriction(t *testing.T) {
	args := []string{"--task", "gaussian20", "--sampler", "nnsghmc", "--step-size", "0.01", "--c", "1000",
		"--steps", "200", "--eval-every", "10", "--quiet"}
	for _, tc := range []struct {
		friction, dMax string
		code           int
		wantHint       string
	}{
		{"explicit", "0", 1, "and here D_f has no upper clamp (d_max 0): --friction-step exponential, or a --d-max below 2/η = 200, prevents that"},
		{"explicit", "250", 1, "and here D_f may reach d_max = 250 (η·d_max = 2.5 at η = 0.01): --friction-step exponential, or a --d-max below 2/η = 200, prevents that"},
		{"explicit", "150", 0, ""},
		{"exponential", "0", 0, ""},
	} {
		out := t.TempDir()
		code, stderr := clitest.Command(t, append(args, "--friction-step", tc.friction, "--d-max", tc.dMax, "--out", out)...)
		if code != tc.code {
			t.Errorf("--d-max %s: status %d, want %d; stderr %q", tc.dMax, code, tc.code, stderr)
			continue
		}
		s, _ := os.ReadFile(filepath.Join(out, "summary.json"))
		if tc.wantHint == "" {
			if strings.Contains(stderr, "friction") || strings.Contains(string(s), `"hint"`) {
				t.Errorf("--d-max %s: a hint without a divergence: %q", tc.dMax, stderr)
			}
			continue
		}
		if !strings.Contains(stderr, "diverged at step") || !strings.HasSuffix(strings.TrimSpace(stderr), tc.wantHint) {
			t.Errorf("--d-max %s: stderr %q does not end with %q", tc.dMax, stderr, tc.wantHint)
		}
		if !strings.Contains(string(s), tc.wantHint) {
			t.Errorf("--d-max %s: summary.json has no hint:\n%s", tc.dMax, s)
		}
	}
}
