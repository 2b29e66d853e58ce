package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Signals are the signals that NotifyContext turns into a cancellation:
// SIGINT (Ctrl-C), SIGTERM (sent by batch schedulers and kill) and SIGHUP
// (the terminal or SSH session closed).
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// SignalError is the cause of a context cancelled by NotifyContext.
type SignalError struct {
	Signal os.Signal
}

// Error names the signal, as in "interrupted by SIGTERM".
func (e *SignalError) Error() string { return "interrupted by " + SignalName(e.Signal) }

// SignalName returns the conventional name of a signal, as SIGINT or
// SIGTERM.
func SignalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// signalStatus returns the exit status of a program stopped by s: 128 plus
// the signal's number, as a shell reports it (130 for SIGINT, 143 for
// SIGTERM, 129 for SIGHUP).
func signalStatus(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

// NotifyContext returns a copy of parent that is cancelled at the first
// signal of Signals, with a *SignalError as its cause (see Signal), and a
// function that stops the notification. After the first signal the default
// action of each is restored, so a second one ends the program at once.
func NotifyContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, Signals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(&SignalError{Signal: s})
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
		cancel(context.Canceled)
	}
}

// Main is the main function of a command that stops cleanly on a signal: it
// calls run with the command line's arguments and a context from
// NotifyContext, and exits by Exit with run's error, as an *InterruptError
// if a signal cancelled the context (see Interrupted).
func Main(prog string, run func(context.Context, []string) error) {
	ctx, stop := NotifyContext(context.Background())
	defer stop()
	Exit(prog, Interrupted(ctx, run(ctx, os.Args[1:])))
}

// Signal returns the signal that cancelled ctx (see NotifyContext), or nil.
func Signal(ctx context.Context) os.Signal {
	var se *SignalError
	if errors.As(context.Cause(ctx), &se) {
		return se.Signal
	}
	return nil
}

// InterruptError is an error of a run stopped by a signal. Exit reports it
// with status 128 plus the signal's number.
type InterruptError struct {
	Signal os.Signal
	Err    error
}

// Error returns the message of the underlying error.
func (e *InterruptError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *InterruptError) Unwrap() error { return e.Err }

// Interrupted returns err as an *InterruptError if a signal cancelled ctx
// (see NotifyContext), and err itself otherwise, nil included: a run that
// finished in spite of the signal succeeded.
func Interrupted(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if s := Signal(ctx); s != nil {
		return &InterruptError{Signal: s, Err: err}
	}
	return err
}
