package catalog

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/train"
)

// benchDtypes are the dtypes the benchmarks time, each a sub-benchmark named
// by the dtype ("float64", "float32").
var benchDtypes = []graph.Dtype{graph.Float64, graph.Float32}

// BenchmarkMNISTNTStep times one step of SGHMC and of NNSGHMC with
// finite-difference and exact Γ on mnist-nt (784-40-40-10, 20 chains, batch
// 500): the energy and its gradient plus the update. NNSGHMC uses random
// networks of the trained sampler's shape. The paper's figure is about 1.5×
// SGHMC for NNSGHMC with finite differences.
//
//	METASGMCMC_DATA=… go test ./cmd/internal/catalog -run '^$' -bench MNISTNTStep -benchtime 20x
//	(add -tags openblas for OpenBLAS)
func BenchmarkMNISTNTStep(b *testing.B) {
	haveData(b, "mnist/train-labels-idx1-ubyte.gz")
	for _, dt := range benchDtypes {
		task, target := mnistNT(b, dt)
		d := task.Defaults
		kernels := []struct {
			name string
			make func() (samplers.Kernel, error)
		}{
			{"sghmc", func() (samplers.Kernel, error) {
				return samplers.NewSGHMC(target, samplers.SGHMCSettings{StepSize: samplers.Constant(d.StepSize["sghmc"]), Friction: d.SGHMCAlpha / d.StepSize["sghmc"]})
			}},
			{"nnsghmc-fd", func() (samplers.Kernel, error) { return nn(task, target, nnsghmc.GammaFD) }},
			{"nnsghmc-exact", func() (samplers.Kernel, error) { return nn(task, target, nnsghmc.GammaExact) }},
		}
		for _, k := range kernels {
			b.Run(dt.String()+"/"+k.name, func(b *testing.B) {
				kern, err := k.make()
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 1))
				st, err := kern.Init(task.Init(rng, 20), nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := kern.Step(rng, st); err != nil { // warm up
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := kern.Step(rng, st); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/step")
			})
		}
	}
}

// mnistNT returns the mnist-nt task in dtype dt and its target for 20 chains.
func mnistNT(b *testing.B, dt graph.Dtype) (*Task, samplers.Target) {
	b.Helper()
	task := mnistNTTask(b, dt)
	target, err := task.NewTarget(20, 0)
	if err != nil {
		b.Fatal(err)
	}
	return task, target
}

// mnistNTTask returns the mnist-nt task in dtype dt.
func mnistNTTask(b *testing.B, dt graph.Dtype) *Task {
	b.Helper()
	o := DefaultOptions
	o.Dtype = dt
	task, err := New("mnist-nt", o)
	if err != nil {
		b.Fatal(err)
	}
	return task
}

// nn is NNSGHMC with the task's settings, Γ gamma and random networks
// (of the training network's dimension).
func nn(task *Task, target samplers.Target, gamma nnsghmc.Gamma) (samplers.Kernel, error) {
	d := task.Defaults
	s := d.NN
	s.Gamma, s.StepSize = gamma, samplers.Constant(d.StepSize["nnsghmc"])
	s.Alpha = d.AlphaCoef / d.WarmupStepSize
	tr := nnsghmc.RandomTrained(d.QHidden, d.DHidden, d.NNInputs, d.NNDScale, rand.New(rand.NewPCG(2, 2)))
	tr.Domain.Dim = 15910
	return nnsghmc.New(target, tr, s)
}

// BenchmarkMNISTNTStepRatio alternates blocks of SGHMC steps and NNSGHMC
// steps with finite-difference Γ on mnist-nt, so that both see the same
// machine load (timings here vary by 2× from round to round), and reports the
// median of each and the median ratio NNSGHMC/SGHMC.
//
//	METASGMCMC_DATA=… go test ./cmd/internal/catalog -run '^$' -bench MNISTNTStepRatio -benchtime 10x
func BenchmarkMNISTNTStepRatio(b *testing.B) {
	haveData(b, "mnist/train-labels-idx1-ubyte.gz")
	for _, dt := range benchDtypes {
		b.Run(dt.String(), func(b *testing.B) {
			task := mnistNTTask(b, dt)
			stepRatio(b, task, func(t samplers.Target) (samplers.Kernel, error) {
				return nn(task, t, nnsghmc.GammaFD)
			}, 2, "nnsghmc-fd-ms")
		})
	}
}

// BenchmarkPianoGRUStepRatio is BenchmarkMNISTNTStepRatio for the GRU
// evaluations: one step of SGHMC and of NNSGHMC with exact Γ (the
// evaluations' setting) on piano-gru with 200 hidden units and 20 chains
// (3.8 million coordinates), one step per block.
//
//	METASGMCMC_DATA=… go test ./cmd/internal/catalog -run '^$' -bench PianoGRUStepRatio -benchtime 4x
func BenchmarkPianoGRUStepRatio(b *testing.B) {
	haveData(b, "music/Piano_midi.mat")
	o := DefaultOptions
	o.Hidden = 200
	task, err := New("piano-gru", o)
	if err != nil {
		b.Fatal(err)
	}
	d := task.Defaults
	s := d.NN
	s.Gamma, s.StepSize = nnsghmc.GammaExact, samplers.Constant(d.StepSize["nnsghmc"])
	s.Alpha = d.AlphaCoef / d.StepSize["nnsghmc"]
	tr := nnsghmc.RandomTrained(d.QHidden, d.DHidden, d.NNInputs, d.NNDScale, rand.New(rand.NewPCG(2, 2)))
	stepRatio(b, task, func(t samplers.Target) (samplers.Kernel, error) {
		return nnsghmc.New(t, tr, s)
	}, 1, "nnsghmc-exact-ms")
}

// stepRatio alternates blocks of SGHMC steps (the task's settings) and of
// steps of the kernel newNN makes, and reports the median time of each and
// the median ratio. Each kernel has its own target and generator, seeded
// alike, so both see the same minibatches (on the GRU tasks one sequence of
// random length, which sets the step's cost).
func stepRatio(b *testing.B, task *Task, newNN func(samplers.Target) (samplers.Kernel, error), block int, nnName string) {
	d := task.Defaults
	var kernels [2]samplers.Kernel
	var rngs [2]*rand.Rand
	var states [2]*samplers.State
	for i := range kernels {
		target, err := task.NewTarget(20, 0)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			kernels[i], err = samplers.NewSGHMC(target, samplers.SGHMCSettings{StepSize: samplers.Constant(d.StepSize["sghmc"]), Friction: d.SGHMCAlpha / d.StepSize["sghmc"]})
		} else {
			kernels[i], err = newNN(target)
		}
		if err != nil {
			b.Fatal(err)
		}
		rngs[i] = rand.New(rand.NewPCG(1, 1))
		if states[i], err = kernels[i].Init(task.Init(rngs[i], 20), nil); err != nil {
			b.Fatal(err)
		}
		if err := kernels[i].Step(rngs[i], states[i]); err != nil {
			b.Fatal(err)
		}
	}
	var ts [2][]float64
	var ratios []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var t [2]float64
		for j, k := range kernels {
			start := time.Now()
			for s := 0; s < block; s++ {
				if err := k.Step(rngs[j], states[j]); err != nil {
					b.Fatal(err)
				}
			}
			t[j] = time.Since(start).Seconds() * 1000 / float64(block)
			ts[j] = append(ts[j], t[j])
		}
		ratios = append(ratios, t[1]/t[0])
	}
	b.ReportMetric(median(ts[0]), "sghmc-ms")
	b.ReportMetric(median(ts[1]), nnName)
	b.ReportMetric(median(ratios), "ratio-median")
}

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// BenchmarkPianoGRUUnroll times one fresh unroll of the Piano GRU
// meta-training, the main job's (experiments/piano-gru/train.flags: 100
// hidden units, 20 chains, 70 steps in windows of 10, the cross-chain loss
// every 3 steps), on one core and on GOMAXPROCS cores (benchUnroll).
//
//	METASGMCMC_DATA=… go test ./cmd/internal/catalog -run '^$' -bench PianoGRUUnroll -benchtime 1x -cpu 2 -timeout 30m
//	(add -tags openblas for OpenBLAS)
func BenchmarkPianoGRUUnroll(b *testing.B) {
	haveData(b, "music/Piano_midi.mat")
	o := DefaultOptions
	o.Hidden = 100
	benchUnroll(b, "piano-gru", o)
}

// BenchmarkMNISTUnroll times one fresh unroll of the NT/AF sampler's
// meta-training (mnist-relu, experiments/mnist-nt/train.flags: a Bayesian
// MLP 784-20-10 on MNIST, 20 chains, 99 steps in windows of 15, the
// cross-chain loss every 3 steps), on one core and on GOMAXPROCS cores
// (benchUnroll): train.BenchmarkUnrollMLPSize's shapes with the task's own
// energy and data in place of its synthetic one.
//
//	METASGMCMC_DATA=… go test ./cmd/internal/catalog -run '^$' -bench MNISTUnroll -benchtime 1x -cpu 2
//	(add -tags openblas for OpenBLAS)
func BenchmarkMNISTUnroll(b *testing.B) {
	haveData(b, "mnist/train-labels-idx1-ubyte.gz")
	benchUnroll(b, "mnist-relu", DefaultOptions)
}

// benchUnroll times one fresh unroll of the task's meta-training set-up:
// the unrolled steps, the losses, back-propagation through time and the
// optimiser steps. It runs the unroll on one core and on GOMAXPROCS cores
// in turn, each with its problem built at that core count (the GRU's chain
// groups follow it), and reports the median of each over the b.N rounds
// and their ratio, cores-x: run several rounds (-benchtime 3x) where the
// machine's speed drifts.
func benchUnroll(b *testing.B, name string, o Options) {
	cores := runtime.GOMAXPROCS(0)
	for _, dt := range benchDtypes {
		b.Run(dt.String(), func(b *testing.B) {
			o.Dtype = dt
			task, err := New(name, o)
			if err != nil {
				b.Fatal(err)
			}
			t := task.Training
			cfg := t.Config
			cfg.Epochs, cfg.SubEpochs = 1, 0
			unroll := func(procs int) float64 {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				tr := newTrainer(b, task, cfg)
				began := time.Now()
				if err := tr.Run(context.Background(), nil, nil); err != nil {
					b.Fatal(err)
				}
				return time.Since(began).Seconds()
			}
			var one, all []float64
			for i := 0; i < b.N; i++ {
				one, all = append(one, unroll(1)), append(all, unroll(cores))
			}
			b.ReportMetric(median(one), "s/unroll-1-core")
			b.ReportMetric(median(all), "s/unroll")
			b.ReportMetric(median(one)/median(all), "cores-x")
		})
	}
}

// newTrainer builds a trainer of the task's meta-training set-up with
// cfg, at the current core count (the GRU's chain groups follow it),
// failing tb on an error.
func newTrainer(tb testing.TB, task *Task, cfg train.Config) *train.Trainer {
	tb.Helper()
	t := task.Training
	start, s, err := t.Sampler(t.StepSize, 1, "")
	if err != nil {
		tb.Fatal(err)
	}
	prob, err := task.TrainingProblem(cfg.Chains)
	if err != nil {
		tb.Fatal(err)
	}
	tr, err := train.New(cfg, prob, start, s, 1)
	if err != nil {
		tb.Fatal(err)
	}
	return tr
}
