package samplers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers/diag"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/gaussian"
)

// The correlated 2-D Gaussian every sampler must reproduce.
var (
	corrMean = []float64{1, -1}
	corrCov  = []float64{1, 0.8, 0.8, 2}
)

// momentRun describes one sampler run for the moment tests.
type momentRun struct {
	name         string
	chains       int
	steps, thin  int
	burn         int // steps discarded before the statistics
	newKernel    func(tasks.Target) (Kernel, error)
	momentum     bool    // start momenta at their stationary N(0, I)
	noise        float64 // injected gradient noise σ
	expectBiased bool    // an invalid sampler whose bias the test must detect
}

// moments returns, per statistic, the chains of its summand: x₁, x₂,
// (x₁−μ₁)², (x₂−μ₂)² and (x₁−μ₁)(x₂−μ₂), whose expectations are μ₁, μ₂,
// Σ₁₁, Σ₂₂ and Σ₁₂.
var momentNames = []string{"mean 1", "mean 2", "variance 1", "variance 2", "covariance"}
var momentTruth = []float64{corrMean[0], corrMean[1], corrCov[0], corrCov[3], corrCov[1]}

// runMoments samples and returns |estimate − truth| / MCSE per statistic.
func runMoments(t *testing.T, r momentRun) []float64 {
	t.Helper()
	g, err := gaussian.New(corrMean, mat.NewSymDense(2, corrCov))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := tasks.Compile(g, r.chains, graph.Float64)
	if err != nil {
		t.Fatal(err)
	}
	var target tasks.Target = ev
	if r.noise > 0 {
		target = tasks.GradientNoise{Target: ev, Sigma: r.noise}
	}
	kern, err := r.newKernel(target)
	if err != nil {
		t.Fatal(err)
	}
	// start at exact draws from the target so no burn-in is needed
	rng := rand.New(rand.NewPCG(2024, 11))
	var chol mat.Cholesky
	chol.Factorize(mat.NewSymDense(2, corrCov))
	var l mat.TriDense
	chol.LTo(&l)
	theta := make([]float64, 2*r.chains)
	var p []float64
	for k := 0; k < r.chains; k++ {
		z0, z1 := rng.NormFloat64(), rng.NormFloat64()
		theta[k] = corrMean[0] + l.At(0, 0)*z0
		theta[r.chains+k] = corrMean[1] + l.At(1, 0)*z0 + l.At(1, 1)*z1
	}
	if r.momentum {
		p = make([]float64, 2*r.chains)
		for i := range p {
			p[i] = rng.NormFloat64()
		}
	}
	st, err := kern.Init(theta, p)
	if err != nil {
		t.Fatal(err)
	}
	n := (r.steps - r.burn) / r.thin
	stats := make([][][]float64, len(momentNames))
	for s := range stats {
		stats[s] = make([][]float64, r.chains)
		for k := range stats[s] {
			stats[s][k] = make([]float64, 0, n)
		}
	}
	for step := 1; step <= r.steps; step++ {
		if err := kern.Step(rng, st); err != nil {
			t.Fatal(err)
		}
		if step <= r.burn || (step-r.burn)%r.thin != 0 {
			continue
		}
		for k := 0; k < r.chains; k++ {
			x1, x2 := st.Theta[k], st.Theta[r.chains+k]
			d1, d2 := x1-corrMean[0], x2-corrMean[1]
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
		est /= float64(r.chains * n)
		z[s] = math.Abs(est-momentTruth[s]) / mcse
		t.Logf("%s %s: estimate %.4f, truth %.4f, MCSE %.4f, |error|/MCSE %.2f", r.name, momentNames[s], est, momentTruth[s], mcse, z[s])
	}
	return z
}

// stateDependentNets are random networks scaled up so that Q_f and D_f
// vary strongly with the energy and the momentum on this target.
func stateDependentNets(cfg *NNConfig) {
	rng := rand.New(rand.NewPCG(5, 8))
	cfg.RandomNets([]int{10}, []int{10}, rng)
	for _, w := range [][]float64{cfg.Q.W[0], cfg.D.W[0]} {
		for i := range w {
			w[i] *= 3
		}
	}
}

func nnKernel(gamma Gamma) func(tasks.Target) (Kernel, error) {
	return func(t tasks.Target) (Kernel, error) {
		cfg := NNConfig{NNSettings: NNSettings{StepSize: 0.01, Beta: 1, C: 0.5, ClampQ: 5, DMax: 20, DScale: 1,
			EnergyScale: 1, GradScale: 1, MomentumScale: 1, Gamma: gamma}}
		stateDependentNets(&cfg)
		return NewNNSGHMC(t, cfg)
	}
}

// TestSamplersHitGaussianMoments runs each sampler on a correlated 2-D
// Gaussian, from exact draws, and checks the mean, both variances and the
// covariance in BlackJAX's style: |estimate − truth| / MCSE < 2.33, with the
// Monte-Carlo standard error from the effective sample size over all chains.
// NNSGHMC without Γ (an invalid sampler) must fail the same check clearly.
func TestSamplersHitGaussianMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("long-running sampler test")
	}
	runs := []momentRun{
		{name: "SGLD", chains: 500, steps: 3000, thin: 10, newKernel: func(t tasks.Target) (Kernel, error) { return NewSGLD(t, 0.002) }},
		{name: "SGHMC", chains: 500, steps: 3000, thin: 10, momentum: true, newKernel: func(t tasks.Target) (Kernel, error) { return NewSGHMC(t, 0.01, 1) }},
		// pSGLD drops the Γ term of its state-dependent preconditioner and
		// is biased when the preconditioner follows the position (for
		// example near the mode with exact gradients and decay 0.99). With
		// a long memory, ρ = 0.9999, and a burn-in over which the moving
		// average settles, the preconditioner is nearly constant.
		{name: "pSGLD", chains: 200, steps: 40000, burn: 15000, thin: 25, newKernel: func(t tasks.Target) (Kernel, error) {
			return NewPSGLD(t, PSGLDConfig{StepSize: 0.004, Decay: 0.9999, Lambda: 1e-5})
		}},
		{name: "NNSGHMC exact Γ", chains: 300, steps: 5000, thin: 10, momentum: true, newKernel: nnKernel(GammaExact)},
		{name: "NNSGHMC finite-difference Γ", chains: 300, steps: 5000, thin: 10, momentum: true, newKernel: nnKernel(GammaFD)},
		{name: "NNSGHMC without Γ", chains: 300, steps: 5000, thin: 10, momentum: true, newKernel: nnKernel(GammaNone), expectBiased: true},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			z := runMoments(t, r)
			worst := 0.0
			for _, v := range z {
				worst = math.Max(worst, v)
			}
			switch {
			case r.expectBiased && worst < 5:
				t.Errorf("the bias of %s went undetected: worst |error|/MCSE %.2f < 5", r.name, worst)
			case !r.expectBiased && worst >= 2.33:
				t.Errorf("%s misses a moment: worst |error|/MCSE %.2f ≥ 2.33 (%s)", r.name, worst, fmt.Sprint(z))
			}
		})
	}
}
