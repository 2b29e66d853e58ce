package samplers_test

import (
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// TestSamplersHitGaussianMoments runs each sampler on a correlated 2-D
// Gaussian, from exact draws, and checks the mean, both variances and the
// covariance in BlackJAX's style (samplerstest.CheckMoments): |estimate −
// truth| / MCSE < 2.33, with the Monte-Carlo standard error from the
// effective sample size over all chains. (Package samplers/nnsghmc runs
// the same check on NNSGHMC, and requires NNSGHMC without Γ, an invalid
// sampler, to fail it clearly.)
func TestSamplersHitGaussianMoments(t *testing.T) {
	samplerstest.CheckMoments(t, []samplerstest.MomentRun{
		{Name: "SGLD", Chains: 500, Steps: 3000, Thin: 10, NewKernel: func(t samplers.Target) (samplers.Kernel, error) {
			return samplers.NewSGLD(t, samplers.SGLDSettings{StepSize: samplers.Constant(0.002)})
		}},
		{Name: "SGHMC", Chains: 500, Steps: 3000, Thin: 10, Momentum: true, NewKernel: func(t samplers.Target) (samplers.Kernel, error) {
			return samplers.NewSGHMC(t, samplers.SGHMCSettings{StepSize: samplers.Constant(0.01), Friction: 1})
		}},
		// pSGLD drops the Γ term of its state-dependent preconditioner and
		// is biased when the preconditioner follows the position (for
		// example near the mode with exact gradients and decay 0.99). With
		// a long memory, ρ = 0.9999, and a burn-in over which the moving
		// average settles, the preconditioner is nearly constant.
		{Name: "pSGLD", Chains: 200, Steps: 40000, Burn: 15000, Thin: 25, NewKernel: func(t samplers.Target) (samplers.Kernel, error) {
			return samplers.NewPSGLD(t, samplers.PSGLDSettings{StepSize: samplers.Constant(0.004), Decay: 0.9999, Lambda: 1e-5})
		}},
	})
}
