// Package spans shares a range of indices out among goroutines in spans of
// a fixed size. It is the scheduler of this module's parallel row-wise
// kernels (the fused per-coordinate networks of graph and samplers), which
// add partial results in span order so that their results do not depend on
// the number of workers.
package spans

import (
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
