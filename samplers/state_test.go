package samplers_test

import (
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// stateKernels are a kernel of every sampler of the package, pSGLD, with
// memory in State.Aux, among them. (Package samplers/nnsghmc runs the same
// tests on NNSGHMC, whose memory is in State.Aux too.)
var stateKernels = []samplerstest.Kernel{
	{Name: "SGLD", Make: func(t samplers.Target) (samplers.Kernel, error) {
		return samplers.NewSGLD(t, samplers.SGLDSettings{StepSize: samplers.Constant(0.01)})
	}},
	{Name: "SGHMC", Make: func(t samplers.Target) (samplers.Kernel, error) {
		return samplers.NewSGHMC(t, samplers.SGHMCSettings{StepSize: samplers.Constant(0.05), Friction: 1})
	}},
	{Name: "pSGLD", Make: newPSGLD, Memory: true},
}

// newPSGLD is pSGLD with the authors' decay and λ and η = 0.01.
func newPSGLD(t samplers.Target) (samplers.Kernel, error) {
	return samplers.NewPSGLD(t, samplers.PSGLDSettings{StepSize: samplers.Constant(0.01), Decay: 0.99, Lambda: 1e-5})
}

// foreignMemory is the memory of a kernel of another package.
type foreignMemory struct{ xi []float64 }

// TestStatesInterleaveOnOneKernel: everything a kernel keeps of the chains
// is in the State, so one kernel stepping two states in turn gives the same
// chains, bit for bit, as a kernel for each.
func TestStatesInterleaveOnOneKernel(t *testing.T) {
	samplerstest.StatesInterleaveOnOneKernel(t, stateKernels)
}

// TestKernelsRefuseAnotherKernelsMemory: a kernel with memory refuses a
// state whose Aux another kernel made, rather than misreading it. (Package
// samplers/nnsghmc checks that NNSGHMC refuses pSGLD's memory.)
func TestKernelsRefuseAnotherKernelsMemory(t *testing.T) {
	psgld := samplerstest.Kernel{Name: "pSGLD", Make: newPSGLD}
	samplerstest.RefusesMemory(t, psgld, &foreignMemory{}, "pSGLD cannot step a state whose Aux is a *samplers_test.foreignMemory")
}
