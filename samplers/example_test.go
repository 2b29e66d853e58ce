package samplers_test

import (
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// shifted is a user-defined energy: an isotropic Gaussian centred at 2 in
// D dimensions, U(θ) = ½|θ − 2|², written as a graph for K chains at once.
type shifted struct{ d int }

func (s shifted) Dim() int { return s.d }

func (s shifted) Build(g *G.ExprGraph, theta *G.Node) (*tasks.Model, error) {
	r, err := G.Sub(theta, graph.Scalar(g, theta.Dtype(), 2))
	if err != nil {
		return nil, err
	}
	sq, err := G.Square(r)
	if err != nil {
		return nil, err
	}
	sum, err := G.Sum(sq, 0) // over coordinates: one energy per chain
	if err != nil {
		return nil, err
	}
	u, err := G.Mul(sum, graph.Scalar(g, theta.Dtype(), 0.5))
	return &tasks.Model{Lik: u, DataSize: 1}, err
}

// Sampling a user-defined energy with each sampler: 100 chains of a 3-D
// target, started at 0, and the mean of all coordinates over the second half
// of the run.
func Example() {
	const chains, steps = 100, 2000
	target, err := tasks.Compile(shifted{d: 3}, chains, graph.Float64)
	if err != nil {
		panic(err)
	}
	nn := samplers.NNConfig{StepSize: 0.05, ClampQ: 5, DMax: 5, DScale: 1,
		EnergyScale: 1, GradScale: 1, MomentumScale: 1, Gamma: samplers.GammaExact}
	nn.RandomNets([]int{10}, []int{10}, rand.New(rand.NewPCG(1, 2)))

	kernels := []struct {
		name string
		make func() (samplers.Kernel, error)
	}{
		{"SGLD", func() (samplers.Kernel, error) { return samplers.NewSGLD(target, 0.05) }},
		{"SGHMC", func() (samplers.Kernel, error) { return samplers.NewSGHMC(target, 0.05, 1) }},
		{"pSGLD", func() (samplers.Kernel, error) { return samplers.NewPSGLD(target, samplers.DefaultPSGLD(0.05)) }},
		{"NNSGHMC", func() (samplers.Kernel, error) { return samplers.NewNNSGHMC(target, nn) }},
	}
	for _, k := range kernels {
		kern, err := k.make()
		if err != nil {
			panic(err)
		}
		state, err := kern.Init(make([]float64, 3*chains), nil)
		if err != nil {
			panic(err)
		}
		rng := rand.New(rand.NewPCG(7, 7))
		sum, n := 0.0, 0
		for step := 1; step <= steps; step++ {
			if err := kern.Step(rng, state); err != nil {
				panic(err)
			}
			if step > steps/2 {
				for _, x := range state.Theta {
					sum += x
				}
				n += len(state.Theta)
			}
		}
		fmt.Printf("%-8s mean %.1f\n", k.name, sum/float64(n))
	}
	// Output:
	// SGLD     mean 2.0
	// SGHMC    mean 2.0
	// pSGLD    mean 2.0
	// NNSGHMC  mean 2.0
}
