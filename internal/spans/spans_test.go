package spans

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestShareCoversEachIndexOnce checks that the spans cover [0, n) exactly
// once, for sizes that do and do not divide n, and that every worker that
// started is done.
func TestShareCoversEachIndexOnce(t *testing.T) {
	for _, c := range []struct{ n, span int }{{0, 4}, {1, 4}, {4, 4}, {10, 3}, {1000, 7}, {1000, 1000}} {
		hits := make([]int32, c.n)
		var started, done atomic.Int32
		Share(c.n, c.span, func() (func(lo, hi int), func()) {
			started.Add(1)
			return func(lo, hi int) {
				if hi-lo > c.span || lo%c.span != 0 {
					t.Errorf("n = %d, span %d: got [%d, %d)", c.n, c.span, lo, hi)
				}
				for i := lo; i < hi; i++ {
					atomic.AddInt32(&hits[i], 1)
				}
			}, func() { done.Add(1) }
		})
		for i, h := range hits {
			if h != 1 {
				t.Fatalf("n = %d, span %d: index %d visited %d times", c.n, c.span, i, h)
			}
		}
		if started.Load() != done.Load() {
			t.Errorf("n = %d, span %d: %d workers started, %d done", c.n, c.span, started.Load(), done.Load())
		}
	}
}

// Normals gives the same draws on one core and on several, from rng alone
// up to ElementSpan draws, and standard normal ones.
func TestNormalsIndependentOfTheCores(t *testing.T) {
	for _, n := range []int{10, ElementSpan, 5*ElementSpan + 17} {
		var got [2][]float64
		for i, procs := range []int{1, 4} {
			old := runtime.GOMAXPROCS(procs)
			got[i] = make([]float64, n)
			Normals(rand.New(rand.NewPCG(3, 4)), got[i])
			runtime.GOMAXPROCS(old)
		}
		for i := range got[0] {
			if got[0][i] != got[1][i] {
				t.Fatalf("n = %d: draw %d is %v on one core and %v on four", n, i, got[0][i], got[1][i])
			}
		}
		rng := rand.New(rand.NewPCG(3, 4))
		if n <= ElementSpan {
			for i, x := range got[0] {
				if want := rng.NormFloat64(); x != want {
					t.Fatalf("n = %d: draw %d is %v, want %v from the generator itself", n, i, x, want)
				}
			}
		} else { // span s from PCG(seed s, s), the seeds drawn from rng in order
			seeds := make([]uint64, (n+ElementSpan-1)/ElementSpan)
			for s := range seeds {
				seeds[s] = rng.Uint64()
			}
			for i, x := range got[0] {
				s := i / ElementSpan
				if i%ElementSpan == 0 {
					rng = rand.New(rand.NewPCG(seeds[s], uint64(s)))
				}
				if want := rng.NormFloat64(); x != want {
					t.Fatalf("n = %d: draw %d is %v, want %v from span %d's generator", n, i, x, want, s)
				}
			}
		}
		var m, v float64
		for _, x := range got[0] {
			m += x
			v += x * x
		}
		m /= float64(n)
		v = v/float64(n) - m*m
		if se := 1 / math.Sqrt(float64(n)); math.Abs(m) > 5*se || math.Abs(v-1) > 5*math.Sqrt2*se {
			t.Errorf("n = %d: mean %.4f, variance %.4f of standard normals", n, m, v)
		}
	}
}

// First finds the smallest index reported, wherever the spans end.
func TestFirst(t *testing.T) {
	n := 3*ElementSpan + 5
	for _, want := range []int{-1, 0, ElementSpan - 1, ElementSpan, n - 1} {
		got := First(n, func(lo, hi int) int {
			for i := lo; i < hi; i++ {
				if i >= want && want >= 0 && (i == want || i%ElementSpan == 3) {
					return i
				}
			}
			return -1
		})
		if got != want {
			t.Errorf("First = %d, want %d", got, want)
		}
	}
}

// Share works when called from one of its own workers and from several
// goroutines at once (the calls beside the current one start goroutines of
// their own), on any number of cores.
func TestShareNestedAndConcurrent(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		const outer, inner = 12, 1000
		var wg sync.WaitGroup
		sums := make([]int64, 3)
		for g := range sums {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var sum atomic.Int64
				for range 20 {
					Share(outer, 1, func() (func(lo, hi int), func()) {
						return func(lo, _ int) {
							For(inner, func(a, b int) {
								for i := a; i < b; i++ {
									sum.Add(int64(lo*inner + i))
								}
							})
						}, nil
					})
				}
				sums[g] = sum.Load()
			}()
		}
		wg.Wait()
		runtime.GOMAXPROCS(old)
		n := int64(outer * inner)
		for g, s := range sums {
			if want := 20 * n * (n - 1) / 2; s != want {
				t.Errorf("GOMAXPROCS %d, goroutine %d: the sum of the indices is %d, want %d", procs, g, s, want)
			}
		}
	}
}

// Share's helpers go to sleep once no call comes for a while, and wake
// for the next call.
func TestShareHelpersSleepAndWake(t *testing.T) {
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	var hits atomic.Int64
	call := func() {
		Share(4*ElementSpan, ElementSpan, func() (func(lo, hi int), func()) {
			return func(lo, hi int) { hits.Add(int64(hi - lo)) }, nil
		})
	}
	call()
	deadline := time.Now().Add(5 * time.Second)
	for pool.sleeping.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no helper sleeps %v after the last call (Spin is %v)", 5*time.Second, Spin)
		}
		time.Sleep(Spin)
	}
	call()
	if got := hits.Load(); got != 8*ElementSpan {
		t.Errorf("two calls covered %d indices, want %d", got, 8*ElementSpan)
	}
}

// BenchmarkShareSteps times what a sampler's step asks of Share: forty
// element-wise kernels of 4 spans each (64k coordinates, tens of
// microseconds) one after another, with Share's helpers and, for the
// ratio pool/goroutines, with new goroutines for every kernel as a Share
// called beside another gets. Run with -cpu 2: on one core both are the
// same loop.
func BenchmarkShareSteps(b *testing.B) {
	x := make([]float64, 4*ElementSpan)
	y := make([]float64, len(x))
	kernel := func() (func(lo, hi int), func()) {
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				y[i] = 0.5*y[i] + x[i]
			}
		}, nil
	}
	step := func(share func()) time.Duration {
		start := time.Now()
		for range 40 {
			share()
		}
		return time.Since(start)
	}
	viaPool := func() { Share(len(x), ElementSpan, kernel) }
	viaGoroutines := func() {
		j := &job{n: len(x), span: ElementSpan, spans: 4, newWorker: kernel}
		shareByGoroutines(j, min(runtime.GOMAXPROCS(0), 4))
	}
	var pool, goroutines time.Duration
	for range b.N {
		pool += step(viaPool)
		goroutines += step(viaGoroutines)
	}
	b.ReportMetric(float64(pool.Nanoseconds())/float64(b.N)/40, "pool-ns/kernel")
	b.ReportMetric(float64(goroutines.Nanoseconds())/float64(b.N)/40, "goroutines-ns/kernel")
	b.ReportMetric(float64(goroutines)/float64(pool), "goroutines/pool")
}
