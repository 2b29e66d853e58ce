//go:build unix

package cli

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestNotifyContext: SIGINT, SIGTERM and SIGHUP cancel the context with the signal
// as the cause, and Interrupted then marks the run's error with it.
func TestNotifyContext(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(SignalName(sig), func(t *testing.T) {
			ctx, stop := NotifyContext(context.Background())
			defer stop()
			if Signal(ctx) != nil || Interrupted(ctx, errors.New("x")).Error() != "x" {
				t.Fatal("a signal before any was sent")
			}
			if err := syscall.Kill(os.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the context was not cancelled")
			}
			if got := Signal(ctx); got != sig {
				t.Errorf("Signal = %v, want %v", got, sig)
			}
			if err := context.Cause(ctx); err == nil || err.Error() != "interrupted by "+SignalName(sig) {
				t.Errorf("cause %v", err)
			}
			base := errors.New("stopped")
			err := Interrupted(ctx, base)
			var ie *InterruptError
			if !errors.As(err, &ie) || ie.Signal != sig || !errors.Is(err, base) {
				t.Errorf("Interrupted = %#v", err)
			}
			if Interrupted(ctx, nil) != nil {
				t.Error("a run that finished in spite of the signal is an error")
			}
		})
	}
	// stop cancels without a signal
	ctx, stop := NotifyContext(context.Background())
	stop()
	stop()
	if ctx.Err() == nil || Signal(ctx) != nil {
		t.Errorf("after stop: err %v, signal %v", ctx.Err(), Signal(ctx))
	}
}
