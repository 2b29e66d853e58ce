package samplers_test

import (
	"math/rand/v2"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// stateKernels are a kernel of every sampler and optimiser of the package,
// pSGLD, Adam and Santa, with memory in State.Aux, among them; Santa
// switches from exploration to refinement at step 8, within the runs of
// the harnesses. (Package samplers/nnsghmc runs the same tests on NNSGHMC,
// whose memory is in State.Aux too.)
var stateKernels = []samplerstest.Kernel{
	{Name: "SGLD", Make: func(t samplers.Target) (samplers.Kernel, error) {
		return samplers.NewSGLD(t, samplers.SGLDSettings{StepSize: samplers.Constant(0.01)})
	}},
	{Name: "SGHMC", Make: func(t samplers.Target) (samplers.Kernel, error) {
		return samplers.NewSGHMC(t, samplers.SGHMCSettings{StepSize: samplers.Constant(0.05), Friction: 1})
	}},
	{Name: "pSGLD", Make: newPSGLD, Memory: true},
	{Name: "Adam", Make: newAdam, Memory: true},
	{Name: "SGD-M", Make: func(t samplers.Target) (samplers.Kernel, error) {
		return samplers.NewSGDM(t, samplers.SGDMSettings{StepSize: samplers.Constant(0.05), Momentum: 0.9})
	}},
	{Name: "Santa", Make: newSanta, Memory: true},
}

// newAdam is Adam with Kingma & Ba's settings and η = 0.05.
func newAdam(t samplers.Target) (samplers.Kernel, error) {
	s := samplers.DefaultAdamSettings()
	s.StepSize = samplers.Constant(0.05)
	return samplers.NewAdam(t, s)
}

// newSanta is Santa with the authors' music settings, η = 0.05 and 8 steps
// of exploration.
func newSanta(t samplers.Target) (samplers.Kernel, error) {
	s := samplers.DefaultSantaSettings()
	s.StepSize, s.Explore = samplers.Constant(0.05), 8
	return samplers.NewSanta(t, s)
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
	for _, c := range []samplerstest.Kernel{{Name: "pSGLD", Make: newPSGLD}, {Name: "Adam", Make: newAdam}, {Name: "Santa", Make: newSanta}} {
		samplerstest.RefusesMemory(t, c, &foreignMemory{}, c.Name+" cannot step a state whose Aux is a *samplers_test.foreignMemory")
	}
	// and one another's, though both keep a moving average of squared gradients
	adam, santa := samplerstest.Kernel{Name: "Adam", Make: newAdam}, samplerstest.Kernel{Name: "Santa", Make: newSanta}
	tg := samplerstest.StandardTarget(t, 2)
	k, _ := newSanta(tg)
	st, _ := k.Init(make([]float64, 4), nil)
	samplerstest.RefusesMemory(t, adam, st.Aux, "Adam cannot step a state whose Aux is a *samplers.santaMemory")
	k, _ = newAdam(tg)
	st, _ = k.Init(make([]float64, 4), nil)
	samplerstest.RefusesMemory(t, santa, st.Aux, "Santa cannot step a state whose Aux is a *samplers.adamMemory")
}

// TestOptimisersTakeOverAnotherKernelsState: a state another kernel made,
// without memory (Aux nil) and, from a first-order kernel, without momenta,
// is stepped by SGD-M and Santa from zero velocity or a drawn u_0, and by
// Adam from zero moments, rather than refused or misread.
func TestOptimisersTakeOverAnotherKernelsState(t *testing.T) {
	target := samplerstest.StandardTarget(t, 2)
	sgld, _ := samplers.NewSGLD(target, samplers.DefaultSGLDSettings())
	sgdm, _ := samplers.NewSGDM(target, samplers.DefaultSGDMSettings())
	for _, c := range stateKernels {
		if c.Name != "Adam" && c.Name != "SGD-M" && c.Name != "Santa" {
			continue
		}
		k, err := c.Make(target)
		if err != nil {
			t.Fatal(err)
		}
		for _, from := range []samplers.Kernel{sgld, sgdm} {
			st, _ := from.Init(samplerstest.Theta0, nil)
			rng := rand.New(rand.NewPCG(1, 1))
			for range 3 {
				if err := k.Step(rng, st); err != nil {
					t.Fatalf("%s stepping a state of %T: %v", c.Name, from, err)
				}
			}
			if st.Aux == nil && c.Memory {
				t.Errorf("%s left a state of %T without memory", c.Name, from)
			}
		}
	}
}
