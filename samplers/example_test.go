package samplers_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/diag"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// shifted is a user-defined posterior in d dimensions: the mean θ of a
// Gaussian N(θ, I) under a flat prior, from one observation y = (2, …, 2),
// so U(θ) = ½|θ − 2|², written for one position; samplers.NewTarget
// evaluates it for K chains.
func shifted(d int) samplers.Posterior {
	return samplers.Posterior{
		Dim: d, Data: 1,
		LogPrior: func(_, _ []float64) float64 { return 0 }, // flat
		LogLik: func(theta []float64, _ []int, grad []float64) float64 {
			lp := 0.0
			for i, x := range theta {
				r := x - 2
				lp -= r * r / 2
				grad[i] -= r
			}
			return lp
		},
	}
}

// Sampling a user-defined posterior with each sampler: 100 chains of a 3-D
// target, started at 0, and the mean of all coordinates over the second half
// of the run (a Monte-Carlo error of a few hundredths). NNSGHMC's networks are untrained (package samplers/nnsghmc
// loads trained ones).
func Example() {
	const chains, steps = 100, 4000
	target, err := samplers.NewTarget(shifted(3), samplers.TargetSettings{Chains: chains})
	if err != nil {
		panic(err)
	}
	nn := nnsghmc.RandomTrained([]int{10}, []int{10}, nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 1}, 1,
		rand.New(rand.NewPCG(1, 2)))
	nnSettings := nnsghmc.ToySettings()
	nnSettings.StepSize = samplers.Constant(0.05)

	kernels := []struct {
		name string
		make func() (samplers.Kernel, error)
	}{
		{"SGLD", func() (samplers.Kernel, error) {
			return samplers.NewSGLD(target, samplers.SGLDSettings{StepSize: samplers.Constant(0.05)})
		}},
		{"SGHMC", func() (samplers.Kernel, error) {
			return samplers.NewSGHMC(target, samplers.SGHMCSettings{StepSize: samplers.Constant(0.05), Friction: 1})
		}},
		{"pSGLD", func() (samplers.Kernel, error) {
			s := samplers.DefaultPSGLDSettings()
			s.StepSize = samplers.Constant(0.05)
			return samplers.NewPSGLD(target, s)
		}},
		{"NNSGHMC", func() (samplers.Kernel, error) { return nnsghmc.New(target, nn, nnSettings) }},
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
// E[x₂] = E[x₁²] = 1. It implements samplers.Target for K chains directly,
// with the gradient by hand; positions are coordinate-major (x₁ of chain c
// at c, x₂ at K+c).
type banana struct{ chains int }

func (b banana) Dim() int          { return 2 }
func (b banana) Chains() int       { return b.chains }
func (b banana) DataSize() float64 { return 1 }

func (b banana) Evaluate(_ *rand.Rand, x []float64, e *samplers.Eval) error {
	k := b.chains
	clear(e.Prior) // no prior part
	clear(e.PriorGrad)
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
	kernel, err := samplers.NewSGHMC(banana{chains}, samplers.SGHMCSettings{StepSize: samplers.Constant(0.1), Friction: 1})
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

	draws := samples.Draws() // in (chain, draw, dim) order
	for c := 0; c < chains; c++ {
		x := draws.Chain(c) // draw t of chain c is (x[2t], x[2t+1])
		for t := 0; t < len(x); t += 2 {
			x1sq += x[t] * x[t]
			x2 += x[t+1]
		}
	}
	n := float64(samples.Len() * chains)
	fmt.Printf("%d draws: E[x₂] ≈ %.1f, E[x₁²] ≈ %.1f\n", samples.Len()*chains, x2/n, x1sq/n)
	// Output:
	// 450000 draws: E[x₂] ≈ 1.0, E[x₁²] ≈ 1.0
}

// logReg is a user's Bayesian logistic regression, y_i ~ Bernoulli(σ(x_i·w))
// with w ~ N(0, 10²·I), on 400 synthetic data: the model of the README's
// own-model section.
type logReg struct {
	x [][]float64
	y []float64
}

func newLogReg(n int, rng *rand.Rand) *logReg {
	m := &logReg{}
	for i := 0; i < n; i++ {
		z := rng.NormFloat64()
		xi := []float64{1, z, 0.9*z + 0.44*rng.NormFloat64()}
		m.x, m.y = append(m.x, xi), append(m.y, 0)
		if rng.Float64() < 1/(1+math.Exp(-(xi[0]-2*xi[1]+0.5*xi[2]))) {
			m.y[i] = 1
		}
	}
	return m
}

func (m *logReg) logPrior(w, grad []float64) (lp float64) {
	for j := range w {
		lp, grad[j] = lp-w[j]*w[j]/200, grad[j]-w[j]/100
	}
	return lp
}

func (m *logReg) logLik(w []float64, batch []int, grad []float64) (ll float64) {
	for _, i := range batch {
		a := w[0]*m.x[i][0] + w[1]*m.x[i][1] + w[2]*m.x[i][2]
		ll += m.y[i]*a - math.Log1p(math.Exp(a))
		for j := range w {
			grad[j] += (m.y[i] - 1/(1+math.Exp(-a))) * m.x[i][j]
		}
	}
	return ll
}

// Sampling a user's logistic regression on minibatches of 40 with SGHMC and
// the committed toy NNSGHMC, each step size chosen among nine by the kernel
// Stein discrepancy of pilot runs against the full-data score, then the
// posterior means of a longer run.
func ExampleTuneStepSize() {
	m := newLogReg(400, rand.New(rand.NewPCG(1, 1)))
	post := samplers.Posterior{Dim: 3, Data: 400, LogPrior: m.logPrior, LogLik: m.logLik}
	target, err := samplers.NewTarget(post, samplers.TargetSettings{Chains: 4, Batch: 40})
	if err != nil {
		panic(err)
	}
	trained, err := nnsghmc.Load("../experiments/gaussian/sampler.json")
	if err != nil {
		panic(err)
	}
	kernels := []func(eta float64) (samplers.Kernel, error){
		func(eta float64) (samplers.Kernel, error) {
			return samplers.NewSGHMC(target, samplers.SGHMCSettings{StepSize: samplers.Constant(eta), Friction: 1})
		},
		func(eta float64) (samplers.Kernel, error) {
			s := nnsghmc.ToySettings()
			s.StepSize, s.Warn = samplers.Constant(eta), func(string) {} // it warns: η is far from its training's
			return nnsghmc.New(target, trained, s)
		},
	}
	ctx, theta0 := context.Background(), make([]float64, 3*4)
	score := func(w, g []float64) { post.LogDensity(w, g) }
	for _, newKernel := range kernels {
		tuned, err := samplers.TuneStepSize(ctx, target, newKernel, theta0, score, samplers.DefaultTuneSettings(0.01))
		if err != nil {
			panic(err)
		}
		kernel, err := newKernel(tuned.StepSize)
		if err != nil {
			panic(err)
		}
		draws, err := samplers.Sample(ctx, kernel, theta0, 10000, 2000, 1)
		if err != nil {
			panic(err)
		}
		rows, err := diag.Summary(draws)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%T: η = %.3g, mean w = (%.1f, %.1f, %.1f)\n", kernel, tuned.StepSize, rows[0].Mean, rows[1].Mean, rows[2].Mean)
	}
	// Output:
	// *samplers.SGHMC: η = 0.005, mean w = (1.3, -2.2, 0.4)
	// *nnsghmc.NNSGHMC: η = 0.005, mean w = (1.2, -2.2, 0.3)
}

// Checking a run's kinetic temperature: SGHMC on the logistic regression
// above with minibatches of 10, at a step size where the minibatch
// gradient's noise heats the momenta beyond their N(0, I), and the same with
// the noise correction, which takes that noise off the injected noise. The
// chains' mean temperature over the run's second half, 1 for a correct
// sampler: the heated run's posterior is too wide, whatever its mixing.
func ExampleKineticTemperatures() {
	const chains, steps = 50, 4000
	model := newLogReg(400, rand.New(rand.NewPCG(3, 4)))
	target, err := samplers.NewTarget(samplers.Posterior{Dim: 3, Data: 400, LogPrior: model.logPrior, LogLik: model.logLik},
		samplers.TargetSettings{Chains: chains, Batch: 10, NoiseEstimate: true})
	if err != nil {
		panic(err)
	}
	for _, correct := range []bool{false, true} {
		kernel, err := samplers.NewSGHMC(target, samplers.SGHMCSettings{StepSize: samplers.Constant(0.005), Friction: 20,
			NoiseCorrection: correct, Warn: func(string) {}})
		if err != nil {
			panic(err)
		}
		state, err := kernel.Init(make([]float64, 3*chains), nil)
		if err != nil {
			panic(err)
		}
		sum, n := 0.0, 0
		hook := func(step int, s *samplers.State) error {
			if step > steps/2 {
				t, err := samplers.KineticTemperatures(s.P, chains)
				if err != nil {
					return err
				}
				for _, v := range t {
					sum += v / chains
				}
				n++
			}
			return nil
		}
		if err := samplers.Run(context.Background(), kernel, rand.New(rand.NewPCG(5, 6)), state, steps, hook); err != nil {
			panic(err)
		}
		fmt.Printf("noise correction %v: kinetic temperature %.2f\n", correct, sum/float64(n))
	}
	// Output:
	// noise correction false: kinetic temperature 1.21
	// noise correction true: kinetic temperature 0.98
}
