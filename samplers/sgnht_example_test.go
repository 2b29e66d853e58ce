package samplers_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/diag"
)

// SGNHT is the stochastic gradient Nosé–Hoover thermostat (Ding et al.,
// 2014), a sampler with memory written outside package samplers. Each
// chain has a thermostat ξ, a friction that adapts until the momenta have
// unit temperature, which makes the sampler robust to unknown gradient
// noise. With step size η and diffusion A, one step of a chain in D
// dimensions is
//
//	p ← p − η·ξ·p − η·∇Ũ(θ) + √(2Aη)·N(0, I)
//	θ ← θ + η·p
//	ξ ← ξ + η·(pᵀp/D − 1),
//
// and ξ starts at A. The thermostats are the kernel's own memory, kept in
// State.Aux. It validates, evaluates and checks its states with
// samplers.InitState, EvaluateState and CheckState, as the package's own
// kernels do, and says so (samplers.SelfChecking).
type SGNHT struct {
	Target samplers.Target
	Eta    float64 // step size η
	A      float64 // diffusion A
}

// thermostat is SGNHT's State.Aux.
type thermostat struct {
	xi      []float64 // ξ per chain
	kinetic []float64 // scratch: pᵀp per chain
}

// Init implements samplers.Kernel.
func (s *SGNHT) Init(theta0, p0 []float64) (*samplers.State, error) {
	th := &thermostat{xi: make([]float64, s.Target.Chains()), kinetic: make([]float64, s.Target.Chains())}
	for c := range th.xi {
		th.xi[c] = s.A
	}
	// copies and checks the positions and momenta (zeros when p0 is nil)
	return samplers.InitState(s.Target, theta0, p0, true, th)
}

// Step implements samplers.Kernel.
func (s *SGNHT) Step(rng *rand.Rand, st *samplers.State) error {
	th, ok := st.Aux.(*thermostat)
	if !ok {
		return errors.New("SGNHT: the state was not made by SGNHT.Init")
	}
	d, k := s.Target.Dim(), s.Target.Chains()
	// evaluates the target into st.Eval, refusing a non-finite energy or
	// gradient with a *samplers.DivergenceError
	if err := samplers.EvaluateState(s.Target, rng, st); err != nil {
		return err
	}
	sd := math.Sqrt(2 * s.A * s.Eta)
	clear(th.kinetic)
	for i, g := range st.Eval.Grad { // coordinate i of chain i mod K
		c := i % k
		p := st.P[i] - s.Eta*th.xi[c]*st.P[i] - s.Eta*g + sd*rng.NormFloat64()
		st.P[i] = p
		st.Theta[i] += s.Eta * p
		th.kinetic[c] += p * p
	}
	for c := range th.xi {
		th.xi[c] += s.Eta * (th.kinetic[c]/float64(d) - 1)
	}
	st.Steps++ // Run checks that a step adds one
	// a *samplers.DivergenceError for a position or momentum that is not
	// finite or runs away
	return samplers.CheckState(st, k)
}

// ChecksState implements samplers.SelfChecking: Step returns CheckState's
// error itself, so Run need not check the state again.
func (s *SGNHT) ChecksState() {}

// correlated returns the 2-D Gaussian with mean (1, −1) and covariance
// [[1, 0.8], [0.8, 2]], a density without data written for one position,
// as a target of the given number of chains, and its mean and covariance.
func correlated(chains int) (samplers.Target, []float64, []float64, error) {
	mean, cov := []float64{1, -1}, []float64{1, 0.8, 0.8, 2}
	det := cov[0]*cov[3] - cov[1]*cov[2]
	prec := []float64{cov[3] / det, -cov[1] / det, -cov[2] / det, cov[0] / det}
	t, err := samplers.NewTarget(samplers.Posterior{
		Dim: 2,
		LogPrior: func(theta, grad []float64) float64 {
			r0, r1 := theta[0]-mean[0], theta[1]-mean[1]
			g0, g1 := prec[0]*r0+prec[1]*r1, prec[2]*r0+prec[3]*r1 // Σ⁻¹(θ − μ)
			grad[0] -= g0
			grad[1] -= g1
			return -(r0*g0 + r1*g1) / 2
		},
	}, samplers.TargetSettings{Chains: chains})
	return t, mean, cov, err
}

// noisy adds independent N(0, σ²) noise to every coordinate of its
// target's gradient: stochastic gradients of known noise.
type noisy struct {
	samplers.Target
	sigma float64
}

func (n noisy) Evaluate(rng *rand.Rand, theta []float64, e *samplers.Eval) error {
	if err := n.Target.Evaluate(rng, theta, e); err != nil {
		return err
	}
	for i := range e.Grad {
		e.Grad[i] += n.sigma * rng.NormFloat64()
	}
	return nil
}

// A sampler of one's own: SGNHT, written above outside package samplers,
// samples a correlated Gaussian through samplers.Run, its thermostats kept
// in State.Aux.
func Example_sgnht() {
	const chains = 500
	target, _, _, err := correlated(chains)
	if err != nil {
		panic(err)
	}
	var kernel samplers.Kernel = &SGNHT{Target: target, Eta: 0.02, A: 1}
	state, err := kernel.Init(make([]float64, 2*chains), nil)
	if err != nil {
		panic(err)
	}
	samples := &samplers.Collector{Burn: 1000, Thin: 10}
	rng := rand.New(rand.NewPCG(3, 4))
	if err := samplers.Run(context.Background(), kernel, rng, state, 5000, samples.Hook); err != nil {
		panic(err)
	}
	var sum, sq [2]float64
	draws := samples.Draws() // (chain, draw, dim)
	for c := 0; c < chains; c++ {
		x := draws.Chain(c) // draw t of chain c is (x[2t], x[2t+1])
		for j, v := range x {
			sum[j%2] += v
			sq[j%2] += v * v
		}
	}
	n := float64(samples.Len() * chains)
	for i := range sum {
		m := sum[i] / n
		fmt.Printf("θ%d: mean %.1f, variance %.1f\n", i+1, m, sq[i]/n-m*m)
	}
	// Output:
	// θ1: mean 1.0, variance 1.0
	// θ2: mean -1.0, variance 2.0
}

// TestSGNHTHitsGaussianMoments runs the SGNHT of Example_sgnht, a kernel
// outside the package, through samplers.Run on a correlated 2-D Gaussian
// from exact draws, and checks both means, both variances and the covariance
// as TestSamplersHitGaussianMoments checks the package's own samplers:
// |estimate − truth| / MCSE < 2.33, with the Monte-Carlo standard error from
// the effective sample size over all chains. With injected gradient noise the
// thermostats must absorb it.
func TestSGNHTHitsGaussianMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("long-running sampler test")
	}
	for _, c := range []struct {
		name  string
		eta   float64
		noise float64 // σ of the gradient noise
	}{
		{name: "exact gradients", eta: 0.01},
		{name: "noisy gradients", eta: 0.01, noise: 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			const chains, steps, thin = 500, 3000, 10
			target, mean, cov, err := correlated(chains)
			if err != nil {
				t.Fatal(err)
			}
			if c.noise > 0 {
				target = noisy{Target: target, sigma: c.noise}
			}
			kernel := &SGNHT{Target: target, Eta: c.eta, A: 1}
			// exact draws from the target and its momenta
			rng := rand.New(rand.NewPCG(2024, 11))
			l10, l11 := cov[1], math.Sqrt(cov[3]-cov[1]*cov[1])
			theta, p := make([]float64, 2*chains), make([]float64, 2*chains)
			for k := 0; k < chains; k++ {
				z0, z1 := rng.NormFloat64(), rng.NormFloat64()
				theta[k], theta[chains+k] = mean[0]+z0, mean[1]+l10*z0+l11*z1
				p[k], p[chains+k] = rng.NormFloat64(), rng.NormFloat64()
			}
			state, err := kernel.Init(theta, p)
			if err != nil {
				t.Fatal(err)
			}
			// per statistic and chain, the draws of x₁, x₂, (x₁−μ₁)²,
			// (x₂−μ₂)² and (x₁−μ₁)(x₂−μ₂)
			names := []string{"mean 1", "mean 2", "variance 1", "variance 2", "covariance"}
			truth := []float64{mean[0], mean[1], cov[0], cov[3], cov[1]}
			stats := make([][][]float64, len(names))
			for s := range stats {
				stats[s] = make([][]float64, chains)
			}
			hook := func(step int, st *samplers.State) error {
				if step%thin != 0 {
					return nil
				}
				for k := 0; k < chains; k++ {
					d1, d2 := st.Theta[k]-mean[0], st.Theta[chains+k]-mean[1]
					for s, v := range []float64{st.Theta[k], st.Theta[chains+k], d1 * d1, d2 * d2, d1 * d2} {
						stats[s][k] = append(stats[s][k], v)
					}
				}
				return nil
			}
			if err := samplers.Run(context.Background(), kernel, rng, state, steps, hook); err != nil {
				t.Fatal(err)
			}
			for s, draws := range stats {
				mcse, err := diag.MCSE(draws)
				if err != nil {
					t.Fatal(err)
				}
				est, n := 0.0, 0
				for _, d := range draws {
					for _, v := range d {
						est += v
					}
					n += len(d)
				}
				est /= float64(n)
				z := math.Abs(est-truth[s]) / mcse
				t.Logf("%s: estimate %.4f, truth %.4f, MCSE %.4f, |error|/MCSE %.2f", names[s], est, truth[s], mcse, z)
				if z >= 2.33 {
					t.Errorf("SGNHT misses the %s: |error|/MCSE %.2f ≥ 2.33", names[s], z)
				}
			}
		})
	}
}
