package samplers_test

import (
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// The BenchmarkToy* time one step of each sampler on the paper's toy
// (samplerstest.BenchToy): the 20-D test Gaussian with 50 chains, injected
// gradient noise σ = 1 and η = 0.025. (NNSGHMC's benchmarks are in
// internal/nnkernel.)
//
//	go test ./samplers -run '^$' -bench Toy -benchtime 200x

func BenchmarkToySGLD(b *testing.B) {
	samplerstest.BenchToy(b, func(t samplers.Target) (samplers.Kernel, error) {
		return samplers.NewSGLD(t, samplers.SGLDSettings{StepSize: samplers.Constant(0.025)})
	})
}
func BenchmarkToySGHMC(b *testing.B) {
	samplerstest.BenchToy(b, func(t samplers.Target) (samplers.Kernel, error) {
		return samplers.NewSGHMC(t, samplers.SGHMCSettings{StepSize: samplers.Constant(0.025), Friction: 1})
	})
}
func BenchmarkToyPSGLD(b *testing.B) {
	samplerstest.BenchToy(b, func(t samplers.Target) (samplers.Kernel, error) {
		return samplers.NewPSGLD(t, samplers.PSGLDSettings{StepSize: samplers.Constant(0.025), Decay: 0.99, Lambda: 1e-5})
	})
}
