package gaussian

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// test20 is the paper's test target of NewTest20 for a valid scale.
func test20(t *testing.T, seed uint64, scale float64) *Gaussian {
	t.Helper()
	g, err := NewTest20(seed, scale)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestEnergyGraphMatchesFormula checks U and ∇U of the compiled graph for
// several chains against the formula evaluated directly, in float64 and
// float32, and ∇U against finite differences of U.
func TestEnergyGraphMatchesFormula(t *testing.T) {
	g := test20(t, 3, 0.5)
	const k = 4
	rng := rand.New(rand.NewPCG(1, 1))
	theta := make([]float64, 20*k)
	for i := range theta {
		theta[i] = 3 + 2*rng.NormFloat64()
	}
	prec := mat.NewDense(20, 20, nil)
	for i := 0; i < 20; i++ {
		for j := 0; j < 20; j++ {
			prec.Set(i, j, g.prec.At(i, j))
		}
	}
	for _, dt := range []struct {
		name string
		dt   graph.Dtype
		tol  float64
	}{{"float64", graph.Float64, 1e-10}, {"float32", graph.Float32, 1e-4}} {
		ev, err := tasks.Compile(g, k, dt.dt)
		if err != nil {
			t.Fatal(err)
		}
		e := samplers.NewEval(20, k)
		if err := ev.Evaluate(rng, theta, e); err != nil {
			t.Fatal(err)
		}
		x := make([]float64, 20)
		for c := 0; c < k; c++ {
			for i := range x {
				x[i] = theta[i*k+c]
			}
			if want := g.Energy(x); math.Abs(e.U[c]-want) > dt.tol*(1+math.Abs(want)) {
				t.Errorf("%s chain %d: U = %v, want %v", dt.name, c, e.U[c], want)
			}
			for i := 0; i < 20; i++ {
				want := 0.0
				for j := 0; j < 20; j++ {
					want += prec.At(i, j) * (x[j] - 3)
				}
				if got := e.Grad[i*k+c]; math.Abs(got-want) > dt.tol*(1+math.Abs(want)) {
					t.Errorf("%s chain %d: ∂U/∂θ_%d = %v, want %v", dt.name, c, i, got, want)
				}
			}
		}
	}
}

func TestTargetsAreSeededAndValid(t *testing.T) {
	a, b, c := Train10(7), Train10(7), Train10(8)
	if !mat.EqualApprox(a.cov, b.cov, 0) || mat.EqualApprox(a.cov, c.cov, 0) {
		t.Error("Train10: the same seed must give the same covariance and another seed another")
	}
	for i := 0; i < 10; i++ {
		if v := a.cov.At(i, i); !(v > 0 && v < 1) {
			t.Errorf("Train10 variance %d = %v, want in (0, 1)", i, v)
		}
		for j := 0; j < i; j++ {
			if a.cov.At(i, j) != 0 {
				t.Errorf("Train10 covariance (%d, %d) = %v, want 0", i, j, a.cov.At(i, j))
			}
		}
		if a.mean[i] != 3 {
			t.Errorf("Train10 mean %d = %v, want 3", i, a.mean[i])
		}
	}
	// NewTest20: Σ = LLᵀ with L = 0.6·N(0,1)^{20×20} has diagonal entries
	// 0.36·χ²₂₀, mean 7.2, almost surely within (1, 25).
	s := test20(t, 1, 0.6)
	for i := 0; i < 20; i++ {
		if v := s.cov.At(i, i); !(v > 1 && v < 25) {
			t.Errorf("NewTest20 variance %d = %v, want about 7", i, v)
		}
	}
}

func TestNewRejectsBadCovariance(t *testing.T) {
	if _, err := New([]float64{0, 0}, mat.NewSymDense(2, []float64{1, 2, 2, 1})); err == nil {
		t.Error("an indefinite covariance was accepted")
	}
	if _, err := New([]float64{0}, mat.NewSymDense(2, []float64{1, 0, 0, 1})); err == nil {
		t.Error("mismatched mean and covariance were accepted")
	}
}

// TestMonitorOnExactDraws feeds the monitor exact draws from the target:
// KL of the fitted Gaussian must be near its sampling value, about
// d(d+3)/(4n) for n draws, the effective sample sizes near n per chain and
// R̂ near 1.
func TestMonitorOnExactDraws(t *testing.T) {
	g, _ := New([]float64{1, -1}, mat.NewSymDense(2, []float64{1, 0.5, 0.5, 2}))
	const k, steps = 10, 500
	m := g.NewMonitor(k)
	var chol mat.Cholesky
	chol.Factorize(g.cov)
	var l mat.TriDense
	chol.LTo(&l)
	rng := rand.New(rand.NewPCG(4, 4))
	theta := make([]float64, 2*k)
	for s := 1; s <= steps; s++ {
		for c := 0; c < k; c++ {
			z0, z1 := rng.NormFloat64(), rng.NormFloat64()
			theta[c] = 1 + l.At(0, 0)*z0
			theta[k+c] = -1 + l.At(1, 0)*z0 + l.At(1, 1)*z1
		}
		if err := m.Observe(s, theta); err != nil {
			t.Fatal(err)
		}
	}
	got := summaryValues(t, m)
	n := float64(k * steps)
	// E[KL] ≈ d(d+3)/(4n) = 2.5/n for d = 2; allow a factor of 5 either way
	if kl := got["kl"]; kl > 5*2.5/n || kl < 2.5/n/5 {
		t.Errorf("kl = %v, want about %v", kl, 2.5/n)
	}
	if ess := got["ess"]; ess < 0.7*steps || ess > 1.3*steps {
		t.Errorf("pooled ess per chain = %v, want about %d", ess, steps)
	}
	if ess := got["ess_min"]; ess < 0.7*n {
		t.Errorf("ess_min = %v, want about %v", ess, n)
	}
	if r := got["rhat_max"]; r > 1.02 {
		t.Errorf("rhat_max = %v, want about 1", r)
	}
	// the rank-normalised diagnostics of Stan and ArviZ beside them
	if r := got["rhat_rank_max"]; r < 0.98 || r > 1.02 {
		t.Errorf("rhat_rank_max = %v, want about 1", r)
	}
	for _, key := range []string{"ess_bulk_min", "ess_tail_min"} {
		if ess := got[key]; ess < 0.7*n || ess > 1.3*n {
			t.Errorf("%s = %v, want about %v", key, ess, n)
		}
	}
}

// TestMonitorStopsARunawayChainBeforeScoring is the regression test of a
// diverging chain surfacing as "covHat: covariance is not positive
// definite": one chain of three grows fourfold a step, and the monitor must
// name it and the step where it passes the limit, while every score before
// that succeeds.
func TestMonitorStopsARunawayChainBeforeScoring(t *testing.T) {
	g, _ := New([]float64{1, -1}, mat.NewSymDense(2, []float64{1, 0.5, 0.5, 2}))
	const k = 3
	m := g.NewMonitor(k)
	if want := RunawaySDs * math.Sqrt(2); m.limit != want {
		t.Fatalf("limit %v, want %v (the largest standard deviation is √2)", m.limit, want)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	theta := make([]float64, 2*k)
	runaway := 1.0
	var err error
	step := 0
	for step < 40 && err == nil {
		step++
		runaway *= 4
		for c := 0; c < k; c++ {
			theta[c], theta[k+c] = 1+rng.NormFloat64(), -1+rng.NormFloat64()
		}
		theta[1] = 1 + runaway // chain 1, coordinate 0
		if err = m.Observe(step, theta); err == nil && step%2 == 0 {
			if _, serr := m.Metrics(); serr != nil {
				t.Fatalf("step %d: scoring failed before the divergence was reported: %v", step, serr)
			}
		}
	}
	var de *samplers.DivergenceError
	if !errors.As(err, &de) || !errors.Is(err, samplers.ErrDiverged) {
		t.Fatalf("want a divergence error, got %v after %d steps", err, step)
	}
	// 4¹⁰ ≈ 1.05e6 is within the limit of 1.41e6, 4¹¹ is not
	if de.Chain != 1 || de.Step != 11 || de.What != "position" {
		t.Errorf("%v: want chain 1, step 11, position", err)
	}
	for _, want := range []string{"chain 1 diverged at step 11: its position is 4.19e+06 from the target's mean in coordinate 0", "try a smaller step size"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	// the bad step was not recorded: the run so far still scores
	if _, err := m.Summary(); err != nil {
		t.Errorf("summary of the 10 good steps: %v", err)
	}
}

// TestMonitorNeedsMoreSamplesThanDimensions checks the message of a score
// asked for before the fit has more samples than dimensions.
func TestMonitorNeedsMoreSamplesThanDimensions(t *testing.T) {
	g, _ := New([]float64{0, 0, 0}, mat.NewSymDense(3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}))
	for _, tc := range []struct {
		chains, steps int
		ok            bool
	}{{1, 1, false}, {1, 3, false}, {2, 1, false}, {2, 2, true}, {4, 1, true}} {
		m := g.NewMonitor(tc.chains)
		rng := rand.New(rand.NewPCG(1, uint64(tc.chains)))
		theta := make([]float64, 3*tc.chains)
		for s := 1; s <= tc.steps; s++ {
			for i := range theta {
				theta[i] = rng.NormFloat64()
			}
			if err := m.Observe(s, theta); err != nil {
				t.Fatal(err)
			}
		}
		_, err := m.Metrics()
		if tc.ok != (err == nil) {
			t.Errorf("%d chains × %d steps: error %v", tc.chains, tc.steps, err)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("needs more than 3 samples (chains × steps), have %d", tc.chains*tc.steps)) {
			t.Errorf("%d chains × %d steps: message %q", tc.chains, tc.steps, err)
		}
	}
}

// TestScoreIsMinusTheEnergyGradient checks Score against central
// differences of Energy.
func TestScoreIsMinusTheEnergyGradient(t *testing.T) {
	g := test20(t, 1, 0.6)
	x := make([]float64, 20)
	for i := range x {
		x[i] = float64(i%5) - 1
	}
	score := make([]float64, 20)
	g.Score(x, score)
	for i := range x {
		h := 1e-5
		xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
		xp[i] += h
		xm[i] -= h
		if want := -(g.Energy(xp) - g.Energy(xm)) / (2 * h); math.Abs(score[i]-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("coordinate %d: score %v, want %v", i, score[i], want)
		}
	}
}
