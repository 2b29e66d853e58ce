package gru

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
	"github.com/metasgmcmc/metasgmcmc/tasks/music"
)

// Energy plus gradient of one Piano-length sequence (870 synthetic frames,
// 5% of the keys on) for K = 20 chains: the segment-chained graphs
// (SequenceEnergy, float64 and float32) against the hand-written oracle
// (float64, gonum's blas64, the prior added the same way). The timings of
// the sub-benchmarks Energy/graph/H=…/float64 and Energy/oracle/H=… compare
// directly on one CPU (-cpu 1), where the graphs run their chain groups
// (sized by the cache, see chainGroups) one after another; with more, the
// graphs evaluate the groups in parallel and the oracle does not
// (BenchmarkEnergyRatio alternates the two in one process):
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
				ev := samplers.NewEval(e.Dim(), benchK)
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
			ev := samplers.NewEval(Layout{H: h}.Dim(), benchK)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o.energy(theta, train[0], ev)
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

var groupCache = flag.Int("groupcache", 0, "BenchmarkEnergyRatio: bytes of a chain group's recurrent weights (0: groupCacheBytes)")

// BenchmarkEnergyRatio alternates, in one process, the graph's energy plus
// gradient (SequenceEnergy, float64 and float32 sub-benchmarks) and the
// hand-written float64 oracle's on the same sequence, H = 200 and K = 20:
// one round times each once, so both see the same machine state, and the
// ratio of their medians is reported as graph/oracle (ratio-of-min beside
// it). The ratio of the medians of the process's CPU time (user + system)
// in each, cpu-ratio, is less sensitive to other processes taking the CPU
// in turn. Each round also times the floor: the oracle's matrix products
// alone, for every chain (oracleChain.products: the same BLAS calls on the
// same shapes, no element-wise work), reported as floor-ms, graph/floor,
// oracle/floor and the floor's rate in GFLOP/s (float64 products in both
// sub-benchmarks). The sequence is Piano's first
// training sequence of at least 870 frames cut to 870 when the data are
// present ($METASGMCMC_DATA), else 870 synthetic frames. On one CPU, as the
// oracle runs:
//
//	GOMAXPROCS=1 go test ./tasks/gru -run '^$' -bench EnergyRatio -benchtime 3x -cpu 1 -count 3
//
// -groupcache sets the cache budget of a chain group (groupCacheBytes) to
// compare budgets; -groupcache 1073741824 is one group on one CPU.
func BenchmarkEnergyRatio(b *testing.B) {
	if *groupCache > 0 {
		defer func(c int) { groupCacheBytes = c }(groupCacheBytes)
		groupCacheBytes = *groupCache
	}
	for _, dt := range []graph.Dtype{graph.Float64, graph.Float32} {
		b.Run(dt.String(), func(b *testing.B) { benchEnergyRatio(b, dt) })
	}
}

// cpuTime returns the CPU time (user + system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchEnergyRatio(b *testing.B, dt graph.Dtype) {
	const h = 200
	train, theta := benchSetup(h)
	src := "synthetic"
	if d, err := music.Load("", "piano"); err == nil {
		for _, s := range d.Train {
			if s.T >= benchT {
				train, src = music.Split{{T: benchT, Roll: s.Roll[:benchT*Keys]}}, "piano"
				break
			}
		}
	}
	b.Logf("sequence: %s, %d frames", src, train[0].T)
	e, err := NewEnergy(train, Config{Hidden: h, Chains: benchK, Dtype: dt})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	b.Logf("%d chain groups", len(e.groups))
	ev := samplers.NewEval(e.Dim(), benchK)
	o := newOracle(h, benchK)
	oev := samplers.NewEval(e.Dim(), benchK)
	oracleEval := func() { o.energy(theta, train[0], oev) }
	// One untimed round of each: first-call allocations.
	if err := e.SequenceEnergy(theta, train[0], ev); err != nil {
		b.Fatal(err)
	}
	oracleEval()
	// the floor: the oracle's matrix products alone, for every chain
	floorEval := func() {
		for k := 0; k < benchK; k++ {
			o.c.products(o.x, train[0].T)
		}
	}
	floorEval()
	var gt, ot, gc, oc, ft []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0, c0 := time.Now(), cpuTime()
		if err := e.SequenceEnergy(theta, train[0], ev); err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), cpuTime()
		oracleEval()
		t2, c2 := time.Now(), cpuTime()
		floorEval()
		ft = append(ft, float64(time.Since(t2))/1e6)
		gt = append(gt, float64(t1.Sub(t0))/1e6)
		ot = append(ot, float64(t2.Sub(t1))/1e6)
		gc = append(gc, float64(c1-c0)/1e6)
		oc = append(oc, float64(c2-c1)/1e6)
	}
	b.StopTimer()
	tol := 1e-6
	if dt == graph.Float32 {
		tol = 1e-3
	}
	if r := relErr(ev.Grad, oev.Grad); r > tol {
		b.Fatalf("graph and oracle gradients differ: relative error %g", r)
	}
	median := func(x []float64) float64 {
		s := slices.Clone(x)
		slices.Sort(s)
		if n := len(s); n%2 == 0 {
			return (s[n/2-1] + s[n/2]) / 2
		}
		return s[len(s)/2]
	}
	b.ReportMetric(median(gt), "graph-ms")
	b.ReportMetric(median(ot), "oracle-ms")
	b.ReportMetric(median(gt)/median(ot), "graph/oracle")
	b.ReportMetric(slices.Min(gt)/slices.Min(ot), "ratio-of-min")
	b.ReportMetric(median(gc)/median(oc), "cpu-ratio")
	b.ReportMetric(median(ft), "floor-ms")
	b.ReportMetric(median(gt)/median(ft), "graph/floor")
	b.ReportMetric(median(ot)/median(ft), "oracle/floor")
	b.ReportMetric(float64(benchK)*productFlops(h, train[0].T)/median(ft)/1e6, "floor-GFLOP/s")
}
