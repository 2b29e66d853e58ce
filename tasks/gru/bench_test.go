package gru

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/graph"
)

const benchT, benchK = 870, 20

func BenchmarkNLLGrad(b *testing.B) {
	for _, H := range []int{100, 200} {
		for _, dt := range []graph.Dtype{graph.Float64, graph.Float32} {
			for _, S := range []int{32, 64} {
				b.Run(fmt.Sprintf("graph/H=%d/%v/S=%d", H, dt, S), func(b *testing.B) {
					rng := rand.New(rand.NewPCG(1, 2))
					seq := randomSequence(rng, benchT, 0.05)
					theta := randomTheta(rng, H, benchK, 0.1)
					m, err := NewModel(Config{Hidden: H, Chains: benchK, Segment: S, Dtype: dt})
					if err != nil {
						b.Fatal(err)
					}
					defer m.Close()
					nll := make([]float64, benchK)
					grad := make([]float64, len(theta))
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if err := m.NLLGrad(theta, seq, 1, nll, grad); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
		b.Run(fmt.Sprintf("oracle/H=%d", H), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			seq := randomSequence(rng, benchT, 0.05)
			theta := randomTheta(rng, H, benchK, 0.1)
			o := newOracle(H, benchK)
			nll := make([]float64, benchK)
			grad := make([]float64, len(theta))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o.nllGrad(theta, seq, 1, nll, grad)
			}
		})
	}
}
