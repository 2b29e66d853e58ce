package nnsghmc_test

import (
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// TestNNSGHMCHitsGaussianMoments runs NNSGHMC with state-dependent random
// networks on a correlated 2-D Gaussian, from exact draws, and checks the
// mean, both variances and the covariance in BlackJAX's style, as package
// samplers checks its own samplers: |estimate − truth| / MCSE < 2.33, with
// the Monte-Carlo standard error from the effective sample size over all
// chains. NNSGHMC without Γ (an invalid sampler) must fail the same check
// clearly.
func TestNNSGHMCHitsGaussianMoments(t *testing.T) {
	samplerstest.CheckMoments(t, []samplerstest.MomentRun{
		{Name: "NNSGHMC exact Γ", Chains: 300, Steps: 5000, Thin: 10, Momentum: true, NewKernel: nnKernel(nnsghmc.GammaExact)},
		{Name: "NNSGHMC finite-difference Γ", Chains: 300, Steps: 5000, Thin: 10, Momentum: true, NewKernel: nnKernel(nnsghmc.GammaFD)},
		{Name: "NNSGHMC without Γ", Chains: 300, Steps: 5000, Thin: 10, Momentum: true, NewKernel: nnKernel(nnsghmc.GammaNone), ExpectBiased: true},
	})
}
