// Package ctxtest holds a context for tests that interrupt a long run at a
// chosen point, as a signal would.
package ctxtest

import (
	"context"
	"sync/atomic"
)

// CancelAfter returns a context whose Err returns nil on its first n calls
// and context.Canceled from then on. Code that asks Err once per unit of
// work (the trainer asks once per sampler step) is thus interrupted after
// exactly n units, for example in the middle of an unroll.
func CancelAfter(n int) context.Context {
	c := &afterCalls{Context: context.Background()}
	c.n.Store(int64(n))
	return c
}

type afterCalls struct {
	context.Context
	n, calls atomic.Int64
}

func (c *afterCalls) Err() error {
	if c.calls.Add(1) > c.n.Load() {
		return context.Canceled
	}
	return nil
}
