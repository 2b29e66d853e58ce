package nnsghmc_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// The thermostat on a sampler whose learned Q_f grows with the energy, as
// trained ones do (here Q_f = 1 + Ũ/10 by hand): from far out its step is
// unstable, and without the thermostat the chains are thrown out; with it
// they come in, the sampler saying once where it started to cool, and
// sample the target, a standard Gaussian in 2-D centred at 2.
func ExampleSettings_thermostat() {
	const chains = 100
	// U(θ) = ½|θ − 2|², a flat prior and one datum
	target, err := samplers.NewTarget(samplers.Posterior{
		Dim: 2, Data: 1,
		LogPrior: func(_, _ []float64) float64 { return 0 },
		LogLik: func(theta []float64, _ []int, grad []float64) float64 {
			lp := 0.0
			for i, x := range theta {
				lp -= (x - 2) * (x - 2) / 2
				grad[i] -= x - 2
			}
			return lp
		},
	}, samplers.TargetSettings{Chains: chains})
	if err != nil {
		panic(err)
	}
	tr := &nnsghmc.Trained{
		// f_Q(u, p) = (0.1·u + 10) − 9 and f_D = 0.5, one ReLU unit each
		Q:      &coordnet.Weights{Inputs: 2, Hidden: []int{1}, Activation: coordnet.ReLU, W: [][]float64{{0.1, 0}, {1}}, B: [][]float64{{10}, {-9}}},
		D:      &coordnet.Weights{Inputs: 3, Hidden: []int{1}, Activation: coordnet.ReLU, W: [][]float64{{0, 0, 0}, {0}}, B: [][]float64{{10}, {0.5}}},
		DScale: 1, Inputs: nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 1},
	}
	for _, tau := range []float64{0, 16} {
		s := nnsghmc.Settings{StepSize: samplers.Constant(0.02), ClampQ: 100, Gamma: nnsghmc.GammaExact, Thermostat: tau,
			Warn: func(msg string) { fmt.Println("warning:", msg) }}
		kern, err := nnsghmc.New(target, tr, s)
		if err != nil {
			panic(err)
		}
		start := make([]float64, 2*chains)
		for i := range start {
			start[i] = 40
		}
		state, err := kern.Init(start, nil)
		if err != nil {
			panic(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		sum, n := 0.0, 0
		for step := 1; step <= 4000; step++ {
			if err := kern.Step(rng, state); err != nil {
				fmt.Printf("thermostat %v: %v\n", tau, err)
				break
			}
			if step > 2000 {
				for _, x := range state.Theta {
					sum += x
					n++
				}
			}
		}
		if n > 0 {
			fmt.Printf("thermostat %v: every chain kept, mean of the last 2,000 steps %.1f\n", tau, sum/float64(n))
		}
	}
	// Output:
	// thermostat 0: chain 0 diverged at step 465: its position is not finite or beyond ±1e+30 (try a smaller step size)
	// warning: nnsghmc: the thermostat cools coordinate 0 of chain 0 from step 2 on (the running mean of its p² is 116.2, above τ = 16): the learned step was unstable there and shrinks; while it is cooled the chain's moves depend on its past, so check the posterior against another sampler (diag.KSD)
	// thermostat 16: every chain kept, mean of the last 2,000 steps 2.0
}
