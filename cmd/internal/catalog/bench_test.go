package catalog

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

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
	for _, dt := range []struct {
		name string
		dt   graph.Dtype
	}{{"float64", graph.Float64}, {"float32", graph.Float32}} {
		task, target := mnistNT(b, dt.dt)
		d := task.Defaults
		kernels := []struct {
			name string
			make func() (samplers.Kernel, error)
		}{
			{"sghmc", func() (samplers.Kernel, error) {
				return samplers.NewSGHMC(target, d.StepSize["sghmc"], d.SGHMCAlpha/d.StepSize["sghmc"])
			}},
			{"nnsghmc-fd", func() (samplers.Kernel, error) { return nn(task, target, samplers.GammaFD) }},
			{"nnsghmc-exact", func() (samplers.Kernel, error) { return nn(task, target, samplers.GammaExact) }},
		}
		for _, k := range kernels {
			b.Run(dt.name+"/"+k.name, func(b *testing.B) {
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
func mnistNT(b *testing.B, dt graph.Dtype) (*Task, tasks.Target) {
	b.Helper()
	o := DefaultOptions
	o.Dtype = dt
	task, err := New("mnist-nt", o)
	if err != nil {
		b.Fatal(err)
	}
	target, err := task.NewTarget(20, 0)
	if err != nil {
		b.Fatal(err)
	}
	return task, target
}

func nn(task *Task, target tasks.Target, gamma samplers.Gamma) (samplers.Kernel, error) {
	d := task.Defaults
	cfg := d.NN
	d.TuneNN(&cfg)
	cfg.Gamma, cfg.StepSize = gamma, d.StepSize["nnsghmc"]
	cfg.Alpha = d.AlphaCoef / d.WarmupStepSize
	cfg.TrainDim = 15910
	cfg.RandomNets(d.QHidden, d.DHidden, rand.New(rand.NewPCG(2, 2)))
	return samplers.NewNNSGHMC(target, cfg)
}

// BenchmarkMNISTNTStepRatio alternates blocks of SGHMC steps and NNSGHMC
// steps with finite-difference Γ on mnist-nt, so that both see the same
// machine load (timings here vary by 2× from round to round), and reports the
// median of each and the median ratio NNSGHMC/SGHMC.
//
//	METASGMCMC_DATA=… go test ./cmd/internal/catalog -run '^$' -bench MNISTNTStepRatio -benchtime 10x
func BenchmarkMNISTNTStepRatio(b *testing.B) {
	haveData(b, "mnist/train-labels-idx1-ubyte.gz")
	for _, dt := range []struct {
		name string
		dt   graph.Dtype
	}{{"float64", graph.Float64}, {"float32", graph.Float32}} {
		b.Run(dt.name, func(b *testing.B) {
			task, target := mnistNT(b, dt.dt)
			d := task.Defaults
			sg, err := samplers.NewSGHMC(target, d.StepSize["sghmc"], d.SGHMCAlpha/d.StepSize["sghmc"])
			if err != nil {
				b.Fatal(err)
			}
			nnk, err := nn(task, target, samplers.GammaFD)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 1))
			var states [2]*samplers.State
			kernels := [2]samplers.Kernel{sg, nnk}
			for i, k := range kernels {
				if states[i], err = k.Init(task.Init(rng, 20), nil); err != nil {
					b.Fatal(err)
				}
				if err := k.Step(rng, states[i]); err != nil {
					b.Fatal(err)
				}
			}
			const block = 2
			var ts [2][]float64
			var ratios []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var t [2]float64
				for j, k := range kernels {
					start := time.Now()
					for s := 0; s < block; s++ {
						if err := k.Step(rng, states[j]); err != nil {
							b.Fatal(err)
						}
					}
					t[j] = time.Since(start).Seconds() * 1000 / block
					ts[j] = append(ts[j], t[j])
				}
				ratios = append(ratios, t[1]/t[0])
			}
			b.ReportMetric(median(ts[0]), "sghmc-ms")
			b.ReportMetric(median(ts[1]), "nnsghmc-fd-ms")
			b.ReportMetric(median(ratios), "ratio-median")
		})
	}
}

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	return s[len(s)/2]
}
