package gru

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
	"github.com/metasgmcmc/metasgmcmc/tasks/music"
)

// Energy plus gradient of one Piano-length sequence (870 synthetic frames,
// 5% of the keys on) for K = 20 chains: the segment-chained graphs
// (SequenceEnergy, float64 and float32) against the hand-written oracle
// (float64, gonum's blas64, the prior added the same way). The timings of
// the sub-benchmarks Energy/graph/H=…/float64 and Energy/oracle/H=… compare
// directly on one CPU (-cpu 1); with more, the graphs evaluate groups of
// chains in parallel (see NewModel) and the oracle does not:
//
//	go test ./tasks/gru -run '^$' -bench Energy -benchtime 5x -cpu 1,2
//
// Scoring the Piano test split (25 sequences, 19,036 frames) for K = 20, H =
// 200, when the data are present ($METASGMCMC_DATA):
//
//	METASGMCMC_DATA=/work/shared/data go test ./tasks/gru -run '^$' -bench ScorePiano -benchtime 1x
const (
	benchT = 870
	benchK = 20
)

func benchSetup(h int) (music.Split, []float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	seq := randomSequence(rng, benchT, 0.05)
	return music.Split{seq}, randomTheta(rng, h, benchK, 0.1)
}

func BenchmarkEnergy(b *testing.B) {
	for _, h := range []int{100, 200} {
		for _, dt := range []graph.Dtype{graph.Float64, graph.Float32} {
			b.Run(fmt.Sprintf("graph/H=%d/%v", h, dt), func(b *testing.B) {
				train, theta := benchSetup(h)
				e, err := NewEnergy(train, Config{Hidden: h, Chains: benchK, Dtype: dt})
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				ev := tasks.NewEval(e.Dim(), benchK)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := e.SequenceEnergy(theta, train[0], ev); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("oracle/H=%d", h), func(b *testing.B) {
			train, theta := benchSetup(h)
			o := newOracle(h, benchK)
			ev := tasks.NewEval(Layout{H: h}.Dim(), benchK)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o.nllGrad(theta, train[0], 1, ev.U, ev.Grad)
				Prior(theta, benchK, ev.Prior, ev.PriorGrad)
				for c := range ev.U {
					ev.U[c] += ev.Prior[c]
				}
				for j, g := range ev.PriorGrad {
					ev.Grad[j] += g
				}
			}
		})
	}
}

func BenchmarkScorePiano(b *testing.B) {
	d, err := music.Load("", "piano")
	if err != nil {
		datatest.Skip(b, err.Error())
	}
	const h = 200
	theta := randomTheta(rand.New(rand.NewPCG(1, 2)), h, benchK, 0.1)
	for _, dt := range []graph.Dtype{graph.Float64, graph.Float32} {
		b.Run(dt.String(), func(b *testing.B) {
			sc, err := NewScorer(Config{Hidden: h, Chains: benchK, Dtype: dt}, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer sc.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := sc.Score(theta, d.Test); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
