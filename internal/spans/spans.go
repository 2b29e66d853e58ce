// Package spans shares a range of indices out among goroutines in spans of
// a fixed size. It is the scheduler of this module's parallel kernels: the
// fused per-coordinate networks, the samplers' element-wise updates, the
// energies' per-chain and per-column products and the standard normal
// draws of a step. Kernels that reduce add partial results in span order,
// and Normals ties each span's draws to the span, so that results do not
// depend on the number of workers.
package spans

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Share cuts [0, n) into spans of the given size and shares them out
// among at most GOMAXPROCS goroutines, which take the next span as they
// finish one. Each goroutine calls newWorker once for the function f it
// calls on its spans [lo, hi), and done, when not nil, after its last span.
// f must touch only its span (or its worker's own state); which goroutine
// gets which span varies from run to run. Share returns when every span is
// done.
//
// The calling goroutine is one of the workers; the others are helpers
// that wait between calls, spinning for a while (Spin) before they sleep,
// so that the short serial stretches between a step's parallel kernels do
// not cost an operating-system wake-up per kernel. A Share called while
// another runs (from a worker, or from another goroutine) starts
// goroutines of its own instead.
func Share(n, span int, newWorker func() (f func(lo, hi int), done func())) {
	spans := (n + span - 1) / span
	workers := min(runtime.GOMAXPROCS(0), spans)
	if workers == 1 { // no goroutine for work one core does
		f, done := newWorker()
		for sp := 0; sp < spans; sp++ {
			f(sp*span, min((sp+1)*span, n))
		}
		if done != nil {
			done()
		}
		return
	}
	j := &job{n: n, span: span, spans: int64(spans), helpers: int64(workers - 1), newWorker: newWorker, finished: make(chan struct{}, 1)}
	if !pool.current.CompareAndSwap(nil, j) {
		shareByGoroutines(j, workers)
		return
	}
	defer func() { // also when f panics, so that later calls find no call current
		j.close()
		pool.current.Store(nil)
	}()
	pool.wake(workers - 1)
	j.work()
}

// A job is one call of Share, worked on by its caller and by the helpers
// that join it.
type job struct {
	n, span   int
	spans     int64
	helpers   int64 // how many helpers may join
	newWorker func() (func(lo, hi int), func())
	next      atomic.Int64 // the next span to take
	// state counts the helpers working on the job, with closedBit set once
	// the caller has finished its own spans and joins are refused.
	state    atomic.Int64
	finished chan struct{} // receives when the last helper leaves a closed job
}

const closedBit = 1 << 62

// work takes spans until none is left, as one worker.
func (j *job) work() {
	f, done := j.newWorker()
	for {
		sp := j.next.Add(1) - 1
		if sp >= j.spans {
			break
		}
		lo := int(sp) * j.span
		f(lo, min(lo+j.span, j.n))
	}
	if done != nil {
		done()
	}
}

// join adds a helper to the job unless it is closed or has its helpers.
func (j *job) join() bool {
	for {
		s := j.state.Load()
		if s&closedBit != 0 || s >= j.helpers || j.next.Load() >= j.spans {
			return false
		}
		if j.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

// leave ends a helper's part, telling a waiting caller if it was the last.
func (j *job) leave() {
	if j.state.Add(-1) == closedBit {
		j.finished <- struct{}{}
	}
}

// close refuses further helpers and waits for those working: spinning
// first, as they are at most one span from done, then sleeping.
func (j *job) close() {
	s := j.state.Or(closedBit)
	if s == 0 {
		return
	}
	deadline := time.Now().Add(Spin)
	for i := 0; j.state.Load() != closedBit; i++ {
		if i%64 == 63 && time.Now().After(deadline) {
			<-j.finished
			return
		}
		runtime.Gosched()
	}
}

// shareByGoroutines works on j with workers new goroutines.
func shareByGoroutines(j *job, workers int) {
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j.work()
		}()
	}
	wg.Wait()
}

// Spin is how long Share's helpers look for the next call before they
// sleep, and its caller waits for the helpers before it sleeps: long
// enough to bridge most of the serial stretches between the kernels of a
// sampler's step, short because a spinning thread takes its core from
// whatever else runs, this program's other threads included
// (BenchmarkShareSteps; its figures with another process busy are in
// experiments/BENCHMARKS.md).
const Spin = 50 * time.Microsecond

// pool is Share's helpers.
var pool = newHelpers()

// helpers are the goroutines that join Share's calls: current is the call
// they work on (nil between calls); sleeping counts those waiting on
// wakeup for the next call, and started those that exist (read and
// written only by the caller whose call is current).
type helpers struct {
	current  atomic.Pointer[job]
	sleeping atomic.Int64
	mu       sync.Mutex
	wakeup   *sync.Cond
	started  int
}

func newHelpers() *helpers {
	h := &helpers{}
	h.wakeup = sync.NewCond(&h.mu)
	return h
}

// wake makes sure that at least want helpers exist and wakes the sleeping
// ones, after a call was made current.
func (h *helpers) wake(want int) {
	if h.sleeping.Load() == 0 && h.started >= want {
		return
	}
	h.mu.Lock()
	for ; h.started < want; h.started++ {
		go h.run()
	}
	if h.sleeping.Load() > 0 {
		h.wakeup.Broadcast()
	}
	h.mu.Unlock()
}

// run is a helper: it joins each new call it finds, spinning for Spin
// after its last one, then sleeps until the next.
func (h *helpers) run() {
	var last *job
	for {
		deadline := time.Now().Add(Spin)
		for i := 1; ; i++ {
			if j := h.current.Load(); j != nil && j != last {
				last = j
				if j.join() {
					j.work()
					j.leave()
				}
				deadline, i = time.Now().Add(Spin), 0
				continue
			}
			if i%64 == 0 && time.Now().After(deadline) {
				break
			}
			runtime.Gosched()
		}
		h.mu.Lock()
		h.sleeping.Add(1)
		for j := h.current.Load(); j == nil || j == last; j = h.current.Load() {
			h.wakeup.Wait()
		}
		h.sleeping.Add(-1)
		h.mu.Unlock()
	}
}

// ElementSpan is the span of For and Normals: enough element-wise work
// (tens of microseconds) to outweigh handing a span out.
const ElementSpan = 1 << 14

// For runs f over [0, n) in spans of ElementSpan shared out among the
// cores: for element-wise work, whose result does not depend on how it is
// shared out.
func For(n int, f func(lo, hi int)) {
	Share(n, ElementSpan, func() (func(lo, hi int), func()) { return f, nil })
}

// First returns the smallest index that f reports, or -1: f returns the
// first index of [lo, hi) it looks for, or -1, and runs on the spans of
// For shared out among the cores.
func First(n int, f func(lo, hi int) int) int {
	found := make([]int, (n+ElementSpan-1)/ElementSpan)
	For(n, func(lo, hi int) { found[lo/ElementSpan] = f(lo, hi) })
	for _, i := range found {
		if i >= 0 {
			return i
		}
	}
	return -1
}

// Normals fills x with standard normal draws that depend on rng and len(x)
// alone, not on the number of cores. Up to ElementSpan draws come from rng
// itself, in order. More are drawn in spans of ElementSpan shared out among
// the cores, each from a PCG generator of its own seeded with a draw from
// rng, taken in the spans' order.
func Normals(rng *rand.Rand, x []float64) {
	if len(x) <= ElementSpan {
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return
	}
	seeds := make([]uint64, (len(x)+ElementSpan-1)/ElementSpan)
	for i := range seeds {
		seeds[i] = rng.Uint64()
	}
	For(len(x), func(lo, hi int) {
		sp := lo / ElementSpan
		g := pcgNormal{hi: seeds[sp], lo: uint64(sp)}
		g.fill(x[lo:hi])
	})
}
