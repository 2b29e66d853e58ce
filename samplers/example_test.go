package samplers_test

import (
	"context"
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
	nn := samplers.NNConfig{NNSettings: samplers.NNSettings{StepSize: 0.05, ClampQ: 5, DMax: 5, DScale: 1,
		EnergyScale: 1, GradScale: 1, MomentumScale: 1, Gamma: samplers.GammaExact}}
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

// banana is a user's own target, a banana-shaped density in 2-D: x₁ is
// N(0, 1) and x₂ given x₁ is N(x₁², 1), so U(x) = x₁²/2 + (x₂ − x₁²)²/2 and
// E[x₂] = E[x₁²] = 1. It implements tasks.Target for K chains, with the
// gradient by hand; positions are coordinate-major (x₁ of chain c at c,
// x₂ at K+c).
type banana struct{ chains int }

func (b banana) Dim() int          { return 2 }
func (b banana) Chains() int       { return b.chains }
func (b banana) DataSize() float64 { return 1 }

func (b banana) Evaluate(_ *rand.Rand, x []float64, e *tasks.Eval) error {
	k := b.chains
	for c := 0; c < k; c++ {
		x1, r := x[c], x[k+c]-x[c]*x[c]
		e.U[c] = x1*x1/2 + r*r/2
		e.Grad[c], e.Grad[k+c] = x1-2*x1*r, r
	}
	return nil
}

// Sampling a user-defined target with SGHMC through Run, a Collector
// keeping every 10th position after a burn-in of 500 steps.
func ExampleRun() {
	const chains = 1000
	kernel, err := samplers.NewSGHMC(banana{chains}, 0.1, 1)
	if err != nil {
		panic(err)
	}
	state, err := kernel.Init(make([]float64, 2*chains), nil)
	if err != nil {
		panic(err)
	}
	samples := &samplers.Collector{Burn: 500, Thin: 10}
	rng := rand.New(rand.NewPCG(1, 2))
	if err := samplers.Run(context.Background(), kernel, rng, state, 5000, samples.Hook); err != nil {
		panic(err)
	}
	var x2, x1sq float64 // E[x₂] and E[x₁²], both 1
	for _, x := range samples.Positions() {
		for c := 0; c < chains; c++ {
			x1sq += x[c] * x[c]
			x2 += x[chains+c]
		}
	}
	n := float64(samples.Len() * chains)
	fmt.Printf("%d draws: E[x₂] ≈ %.1f, E[x₁²] ≈ %.1f\n", samples.Len()*chains, x2/n, x1sq/n)
	// Output:
	// 450000 draws: E[x₂] ≈ 1.0, E[x₁²] ≈ 1.0
}
