package ctxtest

import (
	"context"
	"errors"
	"testing"
)

func TestCancelAfter(t *testing.T) {
	for _, n := range []int{0, 1, 5} {
		ctx := CancelAfter(n)
		for i := range n {
			if err := ctx.Err(); err != nil {
				t.Fatalf("n = %d: call %d: %v, want nil", n, i+1, err)
			}
		}
		for range 2 {
			if err := ctx.Err(); !errors.Is(err, context.Canceled) {
				t.Fatalf("n = %d: call after n: %v, want context.Canceled", n, err)
			}
		}
	}
}
