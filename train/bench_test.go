package train

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/gaussian"
)

// peakRSSMiB is the process's peak resident memory (Linux VmHWM).
func peakRSSMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return math.NaN()
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return math.NaN()
}

// benchUnrolls times whole unrolls (forward, losses, back-propagation and
// the optimiser steps) and reports seconds per unroll and per unrolled step
// and the process's peak memory. Run one benchmark per process for a
// meaningful peak:
//
//	go test ./train -run '^$' -bench UnrollToy -benchtime 3x
//	go test ./train -run '^$' -bench UnrollMLPSize -benchtime 2x
func benchUnrolls(b *testing.B, cfg Config, prob Problem, nn nnkernel.Config) {
	cfg.Epochs = b.N
	cfg.SubEpochs = 0
	tr, err := newTrainer(cfg, prob, nn, 1, false)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	if err := tr.Run(context.Background(), nil, nil); err != nil {
		b.Fatal(err)
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(sec, "s/unroll")
	b.ReportMetric(sec/float64(cfg.Steps), "s/step")
	b.ReportMetric(peakRSSMiB(), "peak-MiB")
}

// BenchmarkUnrollToy is one unroll of the toy's meta-training: 50 chains
// of the 10-D Gaussian, 100 steps in windows of 20, both losses, networks
// with two hidden layers of 40.
func BenchmarkUnrollToy(b *testing.B) {
	ev, err := tasks.Compile(gaussian.Train10(1), 50, graph.Float64)
	if err != nil {
		b.Fatal(err)
	}
	adam := AdamConfig{LR: 5e-4, Beta1: 0.5, Beta2: 0.99, Eps: 1e-8}
	cfg := Config{Chains: 50, Steps: 100, Window: 20,
		Cross:   &CrossChain{Every: 2, Lambda: 0.03, Weight: 1},
		InChain: &InChain{Burn: 50, Thin: 3, FirstChain: [2]int{0, 9}, Stride: [2]int{5, 9}, Lambda: 0.03, Weight: 1},
		QAdam:   adam, DAdam: adam, MomentumSD: 1}
	nn := nnkernel.Config{Settings: nnkernel.Settings{StepSize: 0.01, ClampQ: 5, DMax: 5, DScale: 1, EnergyScale: 1, GradScale: 1, MomentumScale: 1}}
	nn.RandomNets([]int{40, 40}, []int{40, 40}, rand.New(rand.NewPCG(1, 1)))
	prob := Problem{Target: tasks.GradientNoise{Target: ev, Sigma: 1}, LossTarget: ev,
		Init: func(rng *rand.Rand, k int) []float64 {
			x := make([]float64, 10*k)
			for i := range x {
				x[i] = 6 * rng.Float64()
			}
			return x
		}}
	benchUnrolls(b, cfg, prob, nn)
}

// isotropic is a cheap synthetic energy of any dimension, ½|θ|² per chain,
// standing in for the MLP's energy so that the benchmark measures the
// sampler's unroll, not the network.
type isotropic struct{ d int }

func (e isotropic) Dim() int { return e.d }

func (e isotropic) Build(g *G.ExprGraph, theta *G.Node) (*tasks.Model, error) {
	s, err := G.Sum(G.Must(G.Square(theta)), 0)
	if err != nil {
		return nil, err
	}
	u, err := G.Mul(s, graph.Scalar(g, theta.Dtype(), 0.5))
	return &tasks.Model{Lik: u, DataSize: 60000}, err
}

// BenchmarkUnrollMLPSize is one unroll at the size of the MNIST
// meta-training: 20 chains of 15,910 coordinates (784-20-10), f-nets with one
// hidden layer of 10, 99 steps in windows of 15, the cross-chain loss every
// 3 steps, the authors' MNIST settings (η = √(0.007/60000), α = 0.01/η,
// D scale 50, gradient scale 70).
func BenchmarkUnrollMLPSize(b *testing.B) {
	const d, k = 15910, 20
	ev, err := tasks.Compile(isotropic{d: d}, k, graph.Float64)
	if err != nil {
		b.Fatal(err)
	}
	adam := AdamConfig{LR: 3e-3, Beta1: 0.5, Beta2: 0.9, Eps: 1e-8}
	cfg := Config{Chains: k, Steps: 99, Window: 15,
		Cross: &CrossChain{Every: 3, Lambda: 0.05, Weight: 1},
		QAdam: adam, DAdam: adam}
	eta := math.Sqrt(0.007 / 60000)
	nn := nnkernel.Config{Settings: nnkernel.Settings{StepSize: eta, Alpha: 0.01 / eta, ClampQ: 5, DMax: 1000, DScale: 50,
		EnergyScale: -1, GradScale: 70, MomentumScale: 1}}
	nn.RandomNets([]int{10}, []int{10}, rand.New(rand.NewPCG(1, 1)))
	prob := Problem{Target: ev, Init: func(rng *rand.Rand, k int) []float64 {
		x := make([]float64, d*k)
		for i := range x {
			x[i] = 0.2 * rng.NormFloat64()
		}
		return x
	}}
	benchUnrolls(b, cfg, prob, nn)
}
