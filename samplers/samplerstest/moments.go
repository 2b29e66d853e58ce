package samplerstest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/diag"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// CorrMean and CorrCov (row-major) are the correlated 2-D Gaussian every
// sampler must reproduce in CheckMoments.
var (
	CorrMean = []float64{1, -1}
	CorrCov  = []float64{1, 0.8, 0.8, 2}
)

// MomentRun describes one sampler run of CheckMoments.
type MomentRun struct {
	Name        string
	Chains      int
	Steps, Thin int
	Burn        int // steps discarded before the statistics
	NewKernel   func(samplers.Target) (samplers.Kernel, error)
	Momentum    bool // start momenta at their stationary N(0, I)
	// Start, when not nil, is where every chain starts instead of exact
	// draws (set Burn to forget it).
	Start        []float64
	Noise        float64 // injected gradient noise σ
	ExpectBiased bool    // an invalid sampler whose bias the check must detect
}

// The statistics of the moment check, per chain the summands x₁, x₂,
// (x₁−μ₁)², (x₂−μ₂)² and (x₁−μ₁)(x₂−μ₂), whose expectations are μ₁, μ₂,
// Σ₁₁, Σ₂₂ and Σ₁₂.
var momentNames = []string{"mean 1", "mean 2", "variance 1", "variance 2", "covariance"}
var momentTruth = []float64{CorrMean[0], CorrMean[1], CorrCov[0], CorrCov[3], CorrCov[1]}

// CheckMoments runs each sampler on a correlated 2-D Gaussian, from exact
// draws, and checks the mean, both variances and the covariance in
// BlackJAX's style: |estimate − truth| / MCSE < 2.33, with the Monte-Carlo
// standard error from the effective sample size over all chains. A run
// with ExpectBiased must instead miss a moment clearly, by 5 MCSE or more.
// The runs are long: CheckMoments skips them in -short mode.
func CheckMoments(t *testing.T, runs []MomentRun) {
	if testing.Short() {
		t.Skip("long-running sampler test")
	}
	for _, r := range runs {
		t.Run(r.Name, func(t *testing.T) {
			z := momentErrors(t, r)
			worst := 0.0
			for _, v := range z {
				worst = math.Max(worst, v)
			}
			switch {
			case r.ExpectBiased && worst < 5:
				t.Errorf("the bias of %s went undetected: worst |error|/MCSE %.2f < 5", r.Name, worst)
			case !r.ExpectBiased && worst >= 2.33:
				t.Errorf("%s misses a moment: worst |error|/MCSE %.2f ≥ 2.33 (%s)", r.Name, worst, fmt.Sprint(z))
			}
		})
	}
}

// momentErrors samples and returns |estimate − truth| / MCSE per statistic.
func momentErrors(t *testing.T, r MomentRun) []float64 {
	t.Helper()
	target := GaussianTarget(t, CorrMean, CorrCov, r.Chains)
	if r.Noise > 0 {
		target = tasks.GradientNoise{Target: target, Sigma: r.Noise}
	}
	kern, err := r.NewKernel(target)
	if err != nil {
		t.Fatal(err)
	}
	// start at exact draws from the target so no burn-in is needed
	rng := rand.New(rand.NewPCG(2024, 11))
	var chol mat.Cholesky
	chol.Factorize(mat.NewSymDense(2, CorrCov))
	var l mat.TriDense
	chol.LTo(&l)
	theta := make([]float64, 2*r.Chains)
	var p []float64
	for k := 0; k < r.Chains; k++ {
		z0, z1 := rng.NormFloat64(), rng.NormFloat64()
		theta[k] = CorrMean[0] + l.At(0, 0)*z0
		theta[r.Chains+k] = CorrMean[1] + l.At(1, 0)*z0 + l.At(1, 1)*z1
		if r.Start != nil {
			theta[k], theta[r.Chains+k] = r.Start[0], r.Start[1]
		}
	}
	if r.Momentum {
		p = make([]float64, 2*r.Chains)
		for i := range p {
			p[i] = rng.NormFloat64()
		}
	}
	st, err := kern.Init(theta, p)
	if err != nil {
		t.Fatal(err)
	}
	n := (r.Steps - r.Burn) / r.Thin
	stats := make([][][]float64, len(momentNames))
	for s := range stats {
		stats[s] = make([][]float64, r.Chains)
		for k := range stats[s] {
			stats[s][k] = make([]float64, 0, n)
		}
	}
	for step := 1; step <= r.Steps; step++ {
		if err := kern.Step(rng, st); err != nil {
			t.Fatal(err)
		}
		if step <= r.Burn || (step-r.Burn)%r.Thin != 0 {
			continue
		}
		for k := 0; k < r.Chains; k++ {
			x1, x2 := st.Theta[k], st.Theta[r.Chains+k]
			d1, d2 := x1-CorrMean[0], x2-CorrMean[1]
			for s, v := range []float64{x1, x2, d1 * d1, d2 * d2, d1 * d2} {
				stats[s][k] = append(stats[s][k], v)
			}
		}
	}
	z := make([]float64, len(stats))
	for s, chains := range stats {
		mcse, err := diag.MCSE(chains)
		if err != nil {
			t.Fatal(err)
		}
		est := 0.0
		for _, c := range chains {
			for _, v := range c {
				est += v
			}
		}
		est /= float64(r.Chains * n)
		z[s] = math.Abs(est-momentTruth[s]) / mcse
		t.Logf("%s %s: estimate %.4f, truth %.4f, MCSE %.4f, |error|/MCSE %.2f", r.Name, momentNames[s], est, momentTruth[s], mcse, z[s])
	}
	return z
}
