package bnn

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// Energy plus gradient of the network-topology test net (784-40-40-10 ReLU)
// for K = 20 chains on minibatches of M = 500 synthetic examples: the
// compiled graph (tasks.Compile + Evaluate: minibatch loading, θ in, U,
// ∇U, prior and ∇prior out) against the hand-written gonum oracle (the same
// pure-Go BLAS, minibatch loading included), in float64 and float32.
//
//	go test ./tasks/bnn -run '^$' -bench 'Energy(Graph|Oracle)' -benchtime 20x -count 3
//
// On a shared machine the two are best compared by BenchmarkEnergyRatio,
// which alternates them.
const (
	benchK     = 20
	benchBatch = 500
	benchN     = 1000
)

var benchNet = MLP{Sizes: []int{784, 40, 40, 10}, Activation: ReLU}

func BenchmarkEnergyGraph(b *testing.B) {
	for _, dt := range []graph.Dtype{graph.Float64, graph.Float32} {
		b.Run(dt.String(), func(b *testing.B) {
			_, ev, rng, theta, eval := benchGraph(b, dt)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := ev.Evaluate(rng, theta, eval); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEnergyOracle(b *testing.B) {
	b.Run("float64", func(b *testing.B) { benchOracle[float64](b) })
	b.Run("float32", func(b *testing.B) { benchOracle[float32](b) })
}

func benchOracle[T float](b *testing.B) {
	data := synthetic(b, benchN, 784, 10, 1)
	rng := rand.New(rand.NewPCG(1, 1))
	ob := newOracleBench[T](b, data, benchNet.Init(rng, benchK, 0.05))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ob.eval(b, rng)
	}
}

// oracleBench is the hand-written oracle with its minibatches and buffers.
type oracleBench[T float] struct {
	o       *oracle[T]
	bt      *batcher
	theta   []T
	x64     []float64
	x       []T
	y       []int
	u, grad []T
}

func newOracleBench[T float](b *testing.B, data *Matrix, theta64 []float64) *oracleBench[T] {
	theta := make([]T, len(theta64))
	for i, v := range theta64 {
		theta[i] = T(v)
	}
	return &oracleBench[T]{
		o: newOracle[T](benchNet, benchK, benchBatch), bt: mustBatcher(b, data, benchBatch), theta: theta,
		x64: make([]float64, benchBatch*784), x: make([]T, benchBatch*784), y: make([]int, benchBatch),
		u: make([]T, benchK), grad: make([]T, len(theta)),
	}
}

// eval draws a minibatch and evaluates the oracle's energy and gradient.
func (ob *oracleBench[T]) eval(b *testing.B, rng *rand.Rand) {
	if _, err := ob.bt.next(rng, ob.x64, ob.y); err != nil {
		b.Fatal(err)
	}
	for j, v := range ob.x64 {
		ob.x[j] = T(v)
	}
	ob.o.eval(ob.theta, ob.x, ob.y, benchN, ob.u, ob.grad)
}

// BenchmarkEnergyRatio alternates blocks of graph and oracle evaluations,
// so that both see the same machine load, and reports the medians and
// minima of each (per evaluation) and their ratios (graph/oracle).
//
//	go test ./tasks/bnn -run '^$' -bench EnergyRatio -benchtime 30x
func BenchmarkEnergyRatio(b *testing.B) {
	b.Run("float64", func(b *testing.B) { benchRatio[float64](b, graph.Float64) })
	b.Run("float32", func(b *testing.B) { benchRatio[float32](b, graph.Float32) })
}

// benchGraph compiles the benchmark's energy in dt (closed when b ends) and
// returns its data, the compiled target, the random source, the chains'
// start θ and the evaluation to fill.
func benchGraph(b *testing.B, dt graph.Dtype) (*Matrix, *tasks.Evaluator, *rand.Rand, []float64, *samplers.Eval) {
	data := synthetic(b, benchN, 784, 10, 1)
	ev := compiled(b, benchNet, data, benchBatch, benchK, dt)
	rng := rand.New(rand.NewPCG(1, 1))
	return data, ev, rng, benchNet.Init(rng, benchK, 0.05), samplers.NewEval(benchNet.Dim(), benchK)
}

func benchRatio[T float](b *testing.B, dt graph.Dtype) {
	data, ev, rng, theta64, eval := benchGraph(b, dt)
	ob := newOracleBench[T](b, data, theta64)
	// Each iteration times a block of graph evaluations, then a block of
	// oracle evaluations: within a block, the garbage collection the graph's
	// allocations cause is charged to the graph.
	const block = 3
	var tg, to []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		for j := 0; j < block; j++ {
			if err := ev.Evaluate(rng, theta64, eval); err != nil {
				b.Fatal(err)
			}
		}
		mid := time.Now()
		for j := 0; j < block; j++ {
			ob.eval(b, rng)
		}
		tg = append(tg, float64(mid.Sub(start).Nanoseconds())/block)
		to = append(to, float64(time.Since(mid).Nanoseconds())/block)
	}
	b.StopTimer()
	ratios := make([]float64, len(tg))
	for i := range tg {
		ratios[i] = tg[i] / to[i]
	}
	med := func(v []float64) float64 {
		s := append([]float64(nil), v...)
		sort.Float64s(s)
		return s[len(s)/2]
	}
	b.ReportMetric(med(tg)/1e6, "graph-ms")
	b.ReportMetric(med(to)/1e6, "oracle-ms")
	b.ReportMetric(slices.Min(tg)/1e6, "graph-min-ms")
	b.ReportMetric(slices.Min(to)/1e6, "oracle-min-ms")
	b.ReportMetric(med(ratios), "ratio-median")
	b.ReportMetric(slices.Min(tg)/slices.Min(to), "ratio-of-min")
}

// BenchmarkGEMMSpans times the first layer's two products on mnist-nt (the
// minibatch X of 500 × 784 times the 20 chains' weights, 784 × 800, and Xᵀ
// times the gradient, 500 × 800) in float32 on one core, split into 1, 2,
// 4 and 8 column spans as byColumns splits them, alternately, and reports
// each split's median rate: every GEMM call packs the whole of X again.
//
//	go test -tags openblas ./tasks/bnn -run '^$' -bench GEMMSpans -benchtime 20x -cpu 1
func BenchmarkGEMMSpans(b *testing.B) {
	const r, inner, c = benchBatch, 784, 800
	rng := rand.New(rand.NewPCG(1, 1))
	x, w, g := make([]float32, r*inner), make([]float32, inner*c), make([]float32, r*c)
	for _, v := range [][]float32{x, w, g} {
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
	}
	out, dw := make([]float32, r*c), make([]float32, inner*c)
	splits := []int{1, 2, 4, 8}
	ns := make([][]float64, len(splits))
	for i := 0; i < b.N; i++ {
		for k, n := range splits {
			units := c / gemmUnit
			start := time.Now()
			for s := 0; s < n; s++ {
				lo, hi := s*units/n*gemmUnit, (s+1)*units/n*gemmUnit
				gemm32(blas.NoTrans, blas.NoTrans, r, hi-lo, inner, x, inner, w[lo:], c, out[lo:])
				gemm32(blas.Trans, blas.NoTrans, inner, hi-lo, r, x, inner, g[lo:], c, dw[lo:])
			}
			ns[k] = append(ns[k], float64(time.Since(start).Nanoseconds()))
		}
	}
	for k, n := range splits {
		sort.Float64s(ns[k])
		b.ReportMetric(2*2*r*inner*c/ns[k][len(ns[k])/2], fmt.Sprintf("GFLOP/s-%d-spans", n))
	}
}
