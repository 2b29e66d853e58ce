package samplers

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/gaussian"
)

// benchToy times one step of each sampler on the paper's toy: the 20-D test
// Gaussian with 50 chains, injected gradient noise σ = 1, η = 0.025, and for
// NNSGHMC random networks of the toy's size (two hidden layers of 40).
//
//	go test ./samplers -run '^$' -bench Toy -benchtime 200x
func benchToy(b *testing.B, newKernel func(tasks.Target) (Kernel, error)) {
	const k = 50
	ev, err := tasks.Compile(gaussian.Test20(1, 0.6), k, graph.Float64)
	if err != nil {
		b.Fatal(err)
	}
	target := tasks.GradientNoise{Target: ev, Sigma: 1}
	kern, err := newKernel(target)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	theta := make([]float64, 20*k)
	for i := range theta {
		theta[i] = 6 * rng.Float64()
	}
	st, err := kern.Init(theta, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := kern.Step(rng, st); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

func toyNN(gamma Gamma) func(tasks.Target) (Kernel, error) {
	return func(t tasks.Target) (Kernel, error) {
		cfg := toyConfig(0.025, gamma)
		cfg.RandomNets([]int{40, 40}, []int{40, 40}, rand.New(rand.NewPCG(2, 2)))
		return NewNNSGHMC(t, cfg)
	}
}

func BenchmarkToySGLD(b *testing.B) {
	benchToy(b, func(t tasks.Target) (Kernel, error) { return NewSGLD(t, 0.025) })
}
func BenchmarkToySGHMC(b *testing.B) {
	benchToy(b, func(t tasks.Target) (Kernel, error) { return NewSGHMC(t, 0.025, 1) })
}
func BenchmarkToyPSGLD(b *testing.B) {
	benchToy(b, func(t tasks.Target) (Kernel, error) { return NewPSGLD(t, DefaultPSGLD(0.025)) })
}
func BenchmarkToyNNSGHMCExact(b *testing.B) { benchToy(b, toyNN(GammaExact)) }
func BenchmarkToyNNSGHMCFD(b *testing.B)    { benchToy(b, toyNN(GammaFD)) }
func BenchmarkToyNNSGHMCNone(b *testing.B)  { benchToy(b, toyNN(GammaNone)) }

// BenchmarkNNSGHMCUpdate times NNSGHMC's update alone (no energy) on
// 2^20 coordinates, about a quarter of a 200-unit GRU's 20 chains, with the
// trained networks' size (one hidden layer of 10): the graph-free exact
// step (generic, and fused as Step and Update run it), the generic
// finite-difference step (the first; Step fuses the later ones) and the
// Γ-free step, and as the reference the same exact
// step computed by Gorgonia's autodiff on the step graph in blocks of
// StepChunk coordinates (what the sampler ran before the graph-free path).
//
//	go test ./samplers -run '^$' -bench NNSGHMCUpdate -benchtime 5x
func BenchmarkNNSGHMCUpdate(b *testing.B) {
	const n = 1 << 20
	newCfg := func(gamma Gamma) NNConfig {
		cfg := gammaConfig(gamma)
		cfg.ClampQ, cfg.DMax = 1.5, 2.5
		return cfg
	}
	theta, p, f, grad, noise := randomState(rand.New(rand.NewPCG(1, 2)), n)
	for _, c := range []struct {
		name  string
		gamma Gamma
		fused bool
	}{{"exact", GammaExact, false}, {"exact-fused", GammaExact, true}, {"fd", GammaFD, false}, {"none", GammaNone, false}} {
		b.Run(c.name, func(b *testing.B) {
			s := &NNSGHMC{cfg: newCfg(c.gamma), feat: *f}
			st := &State{Theta: append([]float64(nil), theta...), P: append([]float64(nil), p...),
				Eval: &tasks.Eval{Grad: grad}, Aux: &nnMemory{noise: noise}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if c.fused {
					s.stepFusedExact(st)
				} else {
					s.stepPlain(st)
				}
			}
		})
	}
	b.Run("exact-graph", func(b *testing.B) {
		cfg := newCfg(GammaExact)
		c, err := graph.NewChunked(n, StepChunk, func(rows int) (in, out, sum G.Nodes, err error) {
			sg, err := BuildStep(cfg, rows, graph.Float64)
			if err != nil {
				return nil, nil, nil, err
			}
			return sg.Inputs(), G.Nodes{sg.ThetaNext, sg.PNext}, nil, nil
		})
		if err != nil {
			b.Fatal(err)
		}
		th, pp := append([]float64(nil), theta...), append([]float64(nil), p...)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := c.Run([][]float64{th, pp, f.U, f.DU, f.GFeat, grad, noise}, [][]float64{th, pp}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
