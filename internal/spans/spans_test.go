package spans

import (
	"sync/atomic"
	"testing"
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
