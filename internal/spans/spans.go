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
)

// Share cuts [0, n) into spans of the given size and shares them out
// among at most GOMAXPROCS goroutines, which take the next span as they
// finish one. Each goroutine calls newWorker once for the function f it
// calls on its spans [lo, hi), and done, when not nil, after its last span.
// f must touch only its span (or its worker's own state); which goroutine
// gets which span varies from run to run. Share returns when every span is
// done.
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
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, done := newWorker()
			if done != nil {
				defer done()
			}
			for {
				sp := int(next.Add(1)) - 1
				if sp >= spans {
					return
				}
				f(sp*span, min((sp+1)*span, n))
			}
		}()
	}
	wg.Wait()
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
