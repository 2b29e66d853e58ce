package nnkernel_test

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
	"github.com/metasgmcmc/metasgmcmc/train"
)

// benchToy times one NNSGHMC step on the paper's toy
// (samplerstest.BenchToy), as package samplers' BenchmarkToy* time the
// other samplers: the 20-D test Gaussian (a samplers.Posterior evaluated by
// samplers.NewTarget) with 50 chains, injected gradient noise σ = 1,
// η = 0.025 and random networks of the toy's size (two hidden layers of
// 40).
//
//	go test ./internal/nnkernel -run '^$' -bench Toy -benchtime 200x
func benchToy(b *testing.B, gamma nnkernel.Gamma) {
	samplerstest.BenchToy(b, func(target samplers.Target) (samplers.Kernel, error) {
		cfg := nnkernel.Config{Settings: nnkernel.DefaultSettings(0.025)}
		cfg.Gamma = gamma
		cfg.RandomNets([]int{40, 40}, []int{40, 40}, rand.New(rand.NewPCG(2, 2)))
		return nnkernel.New(target, cfg)
	})
}

func BenchmarkToyNNSGHMCExact(b *testing.B) { benchToy(b, nnkernel.GammaExact) }
func BenchmarkToyNNSGHMCFD(b *testing.B)    { benchToy(b, nnkernel.GammaFD) }
func BenchmarkToyNNSGHMCNone(b *testing.B)  { benchToy(b, nnkernel.GammaNone) }

// BenchmarkNNSGHMCUpdate times NNSGHMC's update alone (no energy) on
// 2^20 coordinates, about a quarter of a 200-unit GRU's 20 chains, with the
// trained networks' size (one hidden layer of 10): the graph-free exact
// step (generic, and fused as Step and Update run it), the generic
// finite-difference step (the first; Step fuses the later ones) and the
// Γ-free step, and as the reference the same exact
// step computed by Gorgonia's autodiff on the step graph (train.BuildStep)
// in blocks of StepChunk coordinates (what the sampler ran before the
// graph-free path).
//
//	go test ./internal/nnkernel -run '^$' -bench NNSGHMCUpdate -benchtime 5x
func BenchmarkNNSGHMCUpdate(b *testing.B) {
	const n = 1 << 20
	newCfg := func(gamma nnkernel.Gamma) nnkernel.Config {
		cfg := gammaConfig(gamma)
		cfg.ClampQ, cfg.DMax = 1.5, 2.5
		return cfg
	}
	theta, p, f, grad, noise := randomState(rand.New(rand.NewPCG(1, 2)), n)
	for _, c := range []struct {
		name  string
		gamma nnkernel.Gamma
		fused bool
	}{{"exact", nnkernel.GammaExact, false}, {"exact-fused", nnkernel.GammaExact, true}, {"fd", nnkernel.GammaFD, false}, {"none", nnkernel.GammaNone, false}} {
		b.Run(c.name, func(b *testing.B) {
			s := nnkernel.NewBare(newCfg(c.gamma), n, f)
			st := &samplers.State{Theta: append([]float64(nil), theta...), P: append([]float64(nil), p...),
				Eval: &samplers.Eval{Grad: grad}, Aux: nnkernel.NewMemory(noise)}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if c.fused {
					s.StepFusedExact(st)
				} else {
					s.StepPlain(st)
				}
			}
		})
	}
	b.Run("exact-graph", func(b *testing.B) {
		cfg := newCfg(nnkernel.GammaExact)
		c, err := graph.NewChunked(n, nnkernel.StepChunk, func(rows int) (in, out, sum G.Nodes, err error) {
			sg, err := train.BuildStep(cfg, rows, graph.Float64)
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
