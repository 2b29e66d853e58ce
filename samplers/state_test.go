package samplers

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// stateKernels are a kernel of every sampler of the package, those with
// memory in State.Aux (pSGLD, NNSGHMC) among them.
var stateKernels = []struct {
	name string
	make func(tasks.Target) (Kernel, error)
}{
	{"SGLD", func(t tasks.Target) (Kernel, error) { return NewSGLD(t, 0.01) }},
	{"SGHMC", func(t tasks.Target) (Kernel, error) { return NewSGHMC(t, 0.05, 1) }},
	{"pSGLD", func(t tasks.Target) (Kernel, error) { return NewPSGLD(t, DefaultPSGLD(0.01)) }},
	{"NNSGHMC exact Γ", nnKernel(GammaExact)},
	{"NNSGHMC finite-difference Γ", nnKernel(GammaFD)},
	{"NNSGHMC without Γ", nnKernel(GammaNone)},
}

// TestStatesInterleaveOnOneKernel: everything a kernel keeps of the chains
// is in the State, so one kernel stepping two states in turn gives the same
// chains, bit for bit, as a kernel for each.
func TestStatesInterleaveOnOneKernel(t *testing.T) {
	const k, steps = 3, 20
	for _, c := range stateKernels {
		t.Run(c.name, func(t *testing.T) {
			target := standardTarget(t, k)
			inits := [2][]float64{make([]float64, 2*k), make([]float64, 2*k)}
			for i := range inits[1] {
				inits[0][i], inits[1][i] = 0.1*float64(i), -0.2*float64(i)
			}
			var want [2]*State
			for j := range want {
				kern, err := c.make(target)
				if err != nil {
					t.Fatal(err)
				}
				if want[j], err = kern.Init(inits[j], nil); err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(uint64(j), 9))
				for range steps {
					if err := kern.Step(rng, want[j]); err != nil {
						t.Fatal(err)
					}
				}
			}
			kern, err := c.make(target)
			if err != nil {
				t.Fatal(err)
			}
			var got [2]*State
			rngs := [2]*rand.Rand{rand.New(rand.NewPCG(0, 9)), rand.New(rand.NewPCG(1, 9))}
			for j := range got {
				if got[j], err = kern.Init(inits[j], nil); err != nil {
					t.Fatal(err)
				}
			}
			for range steps {
				for j := range got {
					if err := kern.Step(rngs[j], got[j]); err != nil {
						t.Fatal(err)
					}
				}
			}
			for j := range got {
				if !slices.Equal(got[j].Theta, want[j].Theta) || !slices.Equal(got[j].P, want[j].P) {
					t.Errorf("state %d stepped in turn with another differs from state %d stepped alone", j, j)
				}
			}
		})
	}
}

// TestKernelsRefuseAnotherKernelsMemory: a kernel with memory refuses a
// state whose Aux another kernel made, rather than misreading it.
func TestKernelsRefuseAnotherKernelsMemory(t *testing.T) {
	const k = 2
	target := standardTarget(t, k)
	for _, c := range []struct {
		name, want string
		kernel     func(tasks.Target) (Kernel, error)
		aux        any
	}{
		{"pSGLD", "pSGLD cannot step a state whose Aux is a *samplers.nnMemory", func(t tasks.Target) (Kernel, error) { return NewPSGLD(t, DefaultPSGLD(0.01)) }, &nnMemory{}},
		{"NNSGHMC", "NNSGHMC state was not made by NNSGHMC.Init", nnKernel(GammaExact), &psgldMemory{}},
		{"NNSGHMC without memory", "NNSGHMC state was not made by NNSGHMC.Init", nnKernel(GammaFD), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			kern, err := c.kernel(target)
			if err != nil {
				t.Fatal(err)
			}
			st, err := kern.Init(make([]float64, 2*k), nil)
			if err != nil {
				t.Fatal(err)
			}
			st.Aux = c.aux
			if err := kern.Step(rand.New(rand.NewPCG(1, 1)), st); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}
