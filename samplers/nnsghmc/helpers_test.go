package nnsghmc_test

import (
	"math/rand/v2"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// linearNet returns a one-hidden-unit ReLU network f(x) = c·(a·x + b0) + d,
// linear wherever a·x + b0 > 0 (b0 is large, so everywhere the tests go).
func linearNet(a []float64, c, d float64) *coordnet.Weights {
	return &coordnet.Weights{
		Inputs: len(a), Hidden: []int{1}, Activation: coordnet.ReLU,
		W: [][]float64{append([]float64(nil), a...), {c}},
		B: [][]float64{{10}, {d}},
	}
}

// rawInputs are the networks' inputs unscaled: u = Ũ, m = 1, s_g = 1.
var rawInputs = nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 1}

// stateDependent returns random networks scaled up so that Q_f and D_f
// vary strongly with the energy and the momentum on the tests' targets,
// with raw inputs and s_D = 1.
func stateDependent() *nnsghmc.Trained {
	tr := nnsghmc.RandomTrained([]int{10}, []int{10}, rawInputs, 1, rand.New(rand.NewPCG(5, 8)))
	for _, w := range [][]float64{tr.Q.W[0], tr.D.W[0]} {
		for i := range w {
			w[i] *= 3
		}
	}
	return tr
}

// nnKernel returns the maker of an NNSGHMC with the state-dependent
// networks, η = 0.01, β = 1, c = 0.5, f_Q clamped to ±5 and D_f to
// [0, 20], and Γ computed by gamma.
func nnKernel(gamma nnsghmc.Gamma) func(samplers.Target) (samplers.Kernel, error) {
	return func(t samplers.Target) (samplers.Kernel, error) {
		return nnsghmc.New(t, stateDependent(), nnsghmc.Settings{StepSize: samplers.Constant(0.01), Beta: 1, C: 0.5,
			ClampQ: 5, DMax: 20, Gamma: gamma})
	}
}

// overheating is nnKernel at η = 0.6, where η·Q_f passes the stable limit
// on the harnesses' targets, under the thermostat τ = 2, which cools
// coordinates from the first steps on.
func overheating(t samplers.Target) (samplers.Kernel, error) {
	return nnsghmc.New(t, stateDependent(), nnsghmc.Settings{StepSize: samplers.Constant(0.6), Beta: 1, C: 0.5,
		ClampQ: 5, DMax: 20, Gamma: nnsghmc.GammaFD, Thermostat: 2, Warn: func(string) {}})
}

// nnKernels are NNSGHMC with each Γ, for the harnesses of package
// samplerstest: NNSGHMC keeps its memory in State.Aux with every Γ (the
// finite-difference one follows the chain in it).
var nnKernels = []samplerstest.Kernel{
	{Name: "exact Γ", Make: nnKernel(nnsghmc.GammaExact), Memory: true},
	{Name: "finite-difference Γ", Make: nnKernel(nnsghmc.GammaFD), Memory: true},
	{Name: "without Γ", Make: nnKernel(nnsghmc.GammaNone), Memory: true},
	// the thermostat's running means are state too
	{Name: "finite-difference Γ, cooled by the thermostat", Make: overheating, Memory: true},
}

// lostAt steps kern from st for up to 200 steps and returns the step at
// which it lost a chain, logging why (what names the sampler), or 0.
func lostAt(t *testing.T, kern samplers.Kernel, st *samplers.State, what string) int {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	for step := 1; step <= 200; step++ {
		if err := kern.Step(rng, st); err != nil {
			t.Logf("%s: %v", what, err)
			return step
		}
	}
	return 0
}
