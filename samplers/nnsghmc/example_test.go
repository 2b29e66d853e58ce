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

// meanOfData is the posterior of the mean θ of the data y, each from
// N(θ, 1), under a flat prior, for k chains, each evaluation on a
// minibatch of nb data drawn with replacement: gradient noise that is
// independent from step to step.
type meanOfData struct {
	y     []float64
	k, nb int
}

func (t meanOfData) Dim() int          { return 1 }
func (t meanOfData) Chains() int       { return t.k }
func (t meanOfData) DataSize() float64 { return float64(len(t.y)) }
func (t meanOfData) Evaluate(rng *rand.Rand, theta []float64, e *samplers.Eval) error {
	scale := float64(len(t.y)) / float64(t.nb)
	for c := range t.k {
		e.U[c], e.Grad[c], e.Prior[c], e.PriorGrad[c] = 0, 0, 0, 0
	}
	for range t.nb {
		yi := t.y[rng.IntN(len(t.y))]
		for c, x := range theta {
			e.U[c] += scale * (x - yi) * (x - yi) / 2
			e.Grad[c] += scale * (x - yi)
		}
	}
	return nil
}

// The adaptive friction on a posterior sampled with small minibatches:
// the mean θ of 400 data from N(1, 1), flat prior, minibatches of 10,
// whose gradient noise heats a sampler of constant Q_f = 1 and D_f = c =
// 20 (networks that output 0) well beyond its friction. The draws'
// variance over the run's second half, as a multiple of the exact
// posterior's 1/400: with minibatches drawn with replacement, about 3
// without the adaptive friction (1 + B̂/D_f, the gradient noise's heat)
// and about 1 with it. With the shuffled minibatches of samplers.NewTarget
// (each datum once per pass) the noise sums to nearly nothing over a pass
// of 40 steps: the positions, which move slowly, feel less of it than the
// momenta, which the adaptive friction reads, so it cools them to about
// half the posterior's variance.
func ExampleSettings_adaptiveFriction() {
	const chains, steps, n, batch = 50, 8000, 400, 10
	rng := rand.New(rand.NewPCG(1, 2))
	y := make([]float64, n)
	mean := 0.0
	for i := range y {
		y[i] = 1 + rng.NormFloat64()
		mean += y[i] / n
	}
	shuffled, err := samplers.NewTarget(samplers.Posterior{
		Dim: 1, Data: n,
		LogPrior: func(_, _ []float64) float64 { return 0 },
		LogLik: func(theta []float64, idx []int, grad []float64) float64 {
			lp := 0.0
			for _, i := range idx {
				lp -= (theta[0] - y[i]) * (theta[0] - y[i]) / 2
				grad[0] -= theta[0] - y[i]
			}
			return lp
		},
	}, samplers.TargetSettings{Chains: chains, Batch: batch})
	if err != nil {
		panic(err)
	}
	zero := func(inputs int) *coordnet.Weights {
		return &coordnet.Weights{Inputs: inputs, Hidden: []int{1}, Activation: coordnet.ReLU,
			W: [][]float64{make([]float64, inputs), {0}}, B: [][]float64{{0}, {0}}}
	}
	tr := &nnsghmc.Trained{Q: zero(2), D: zero(3), DScale: 1, Inputs: nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 1}}
	for _, target := range []struct {
		name string
		samplers.Target
	}{{"drawn with replacement", meanOfData{y, chains, batch}}, {"shuffled", shuffled}} {
		for _, kappa := range []float64{0, 0.01} {
			s := nnsghmc.Settings{StepSize: samplers.Constant(0.005), Beta: 1, C: 20, Gamma: nnsghmc.GammaExact, AdaptiveFriction: kappa,
				Warn: func(string) {}}
			kern, err := nnsghmc.New(target, tr, s)
			if err != nil {
				panic(err)
			}
			start := make([]float64, chains)
			for i := range start {
				start[i] = mean
			}
			state, err := kern.Init(start, nil)
			if err != nil {
				panic(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			sum, m := 0.0, 0
			for step := 1; step <= steps; step++ {
				if err := kern.Step(rng, state); err != nil {
					panic(err)
				}
				if step > steps/2 {
					for _, x := range state.Theta {
						sum += (x - mean) * (x - mean)
						m++
					}
				}
			}
			fmt.Printf("minibatches %s, adaptive friction %v: the draws' variance is %.2f times the posterior's\n", target.name, kappa, sum/float64(m)*n)
		}
	}
	// Output:
	// minibatches drawn with replacement, adaptive friction 0: the draws' variance is 2.82 times the posterior's
	// minibatches drawn with replacement, adaptive friction 0.01: the draws' variance is 0.95 times the posterior's
	// minibatches shuffled, adaptive friction 0: the draws' variance is 1.89 times the posterior's
	// minibatches shuffled, adaptive friction 0.01: the draws' variance is 0.56 times the posterior's
}
