package samplers

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/samplers/diag"
)

// Hook is called by Run after every step with the state after it, whose
// step number is step = s.Steps. It may read s, record it or evaluate it;
// it must not change s. A non-nil error stops the run: Run returns it
// unchanged, except ErrStop (or an error wrapping it), which stops the run
// without an error.
type Hook func(step int, s *State) error

// ErrStop is an error a Hook returns to end a run early: Run then returns
// nil.
var ErrStop = errors.New("samplers: stop the run")

// Run advances s by steps steps of kernel k, drawing all randomness from
// rng, and calls hook, unless it is nil, after each step. It is the loop of
// cmd/sample, so the same kernel, state, rng and steps give the same chains
// bit for bit whether they are run by Run or by calling k.Step.
//
// Steps are numbered as in the metrics of cmd/sample and in
// DivergenceError: the state after n steps since Init is step n, which is
// s.Steps, so a kernel's Step must add one to s.Steps (Run returns an error
// otherwise); a run resumed from a state at step m numbers its steps m+1,
// m+2, and so on.
//
// Run stops at the first error and returns it:
//   - the error of k.Step, unchanged: a *DivergenceError when the chains
//     diverge, with the step of the first bad state;
//   - a *DivergenceError when a kernel defined outside this package leaves a
//     position or momentum that is not finite or beyond ±Runaway, named as
//     the kernels of this package name it (they check their own states);
//   - the hook's error, unchanged (nil for ErrStop);
//   - an error wrapping context.Cause(ctx) and ctx.Err() when ctx is done
//     before a step, which says after how many steps, as in "samplers: run
//     interrupted after 120 steps: context canceled". Run checks ctx before
//     every step, not during one.
//
// After an error, s holds the state the failing step or hook left.
func Run(ctx context.Context, k Kernel, rng *rand.Rand, s *State, steps int, hook Hook) error {
	switch {
	case k == nil:
		return errors.New("samplers: Run: nil kernel")
	case s == nil:
		return errors.New("samplers: Run: nil state")
	case rng == nil:
		return errors.New("samplers: Run: nil random number generator")
	case steps < 0:
		return fmt.Errorf("samplers: Run: %d steps, want 0 or more", steps)
	}
	_, checked := k.(SelfChecking)
	for i := 0; i < steps; i++ {
		if ctx.Err() != nil {
			return &interruptError{steps: s.Steps, cause: context.Cause(ctx), err: ctx.Err()}
		}
		before := s.Steps
		if err := k.Step(rng, s); err != nil {
			return err
		}
		if s.Steps != before+1 {
			return fmt.Errorf("samplers: Run: %T.Step took the state from step %d to %d, want %d", k, before, s.Steps, before+1)
		}
		if !checked {
			if err := checkState(s); err != nil {
				return err
			}
		}
		if hook != nil {
			if err := hook(s.Steps, s); err != nil {
				if errors.Is(err, ErrStop) {
					return nil
				}
				return err
			}
		}
	}
	return nil
}

// SelfChecking is implemented by a kernel whose Step returns what
// CheckState returns for the state it leaves (the kernels of this package
// do): Run checks the states of other kernels after each of their steps.
type SelfChecking interface{ ChecksState() }

// ChecksState marks the kernels of this package as SelfChecking.
func (base) ChecksState() {}

// checkState is base.check for a kernel Run knows nothing of: the number of
// chains K, which names the chain of a bad coordinate i as i mod K, is the
// number of energies in s.Eval (with no Eval, Run names the index i).
func checkState(s *State) error {
	k := len(s.Theta)
	if s.Eval != nil && len(s.Eval.U) > 0 {
		k = len(s.Eval.U)
	}
	return CheckState(s, k)
}

// interruptError is Run's error when its context is done.
type interruptError struct {
	steps      int
	cause, err error // context.Cause(ctx) and ctx.Err()
}

func (e *interruptError) Error() string {
	return fmt.Sprintf("samplers: run interrupted after %d steps: %v", e.steps, e.cause)
}

// Unwrap makes errors.Is and errors.As see both the context's cause and
// its error (context.Canceled or context.DeadlineExceeded).
func (e *interruptError) Unwrap() []error {
	if e.cause == e.err {
		return []error{e.err}
	}
	return []error{e.cause, e.err}
}

// Collector keeps the positions of a run as draws, given its Hook method
// as Run's hook: the positions after the steps past Burn whose distance
// from Burn is a multiple of Thin (steps Burn+Thin, Burn+2·Thin, …), every
// chain's. Its zero value keeps every step.
//
// Memory: every kept step holds 8·D·K bytes for K chains in D dimensions,
// so a run of n steps keeps (n−Burn)/Thin of them: 10⁴ steps of 100 chains
// of a 1,000-dimensional target with Thin 10 take 800 MB. Thin and Burn
// are how to bound it. To keep less (some chains, some coordinates, or
// running sums), write a Hook that keeps just that.
type Collector struct {
	// Thin keeps every Thin-th step; 0 and 1 keep every step.
	Thin int
	// Burn is the number of steps discarded at the start of the run: steps
	// up to Burn are not kept.
	Burn int

	steps []int
	draws *diag.Draws
}

// Hook implements Hook: pass c.Hook to Run. It returns an error if Thin or
// Burn is negative, or if the state has no evaluation (the number of
// chains is that of its energies, s.Eval.U).
func (c *Collector) Hook(step int, s *State) error {
	thin := max(c.Thin, 1)
	switch {
	case c.Thin < 0:
		return fmt.Errorf("samplers: Collector.Thin is %d, want 0 or more", c.Thin)
	case c.Burn < 0:
		return fmt.Errorf("samplers: Collector.Burn is %d, want 0 or more", c.Burn)
	case step <= c.Burn || (step-c.Burn)%thin != 0:
		return nil
	case s.Eval == nil || len(s.Eval.U) == 0:
		return errors.New("samplers: Collector: the state has no evaluation to count its chains by")
	}
	if c.draws == nil {
		k := len(s.Eval.U)
		c.draws = diag.NewDraws(k, 0, len(s.Theta)/k)
	}
	if err := c.draws.AppendCoordinateMajor(s.Theta); err != nil {
		return fmt.Errorf("samplers: Collector: %w", err)
	}
	c.steps = append(c.steps, step)
	return nil
}

// Len returns the number of steps kept.
func (c *Collector) Len() int { return len(c.steps) }

// Steps returns the step numbers of the draws kept, in order. The slice
// is the collector's own: do not modify it.
func (c *Collector) Steps() []int { return c.steps }

// Draws returns the draws kept, in (chain, draw, dim) order, for diag's
// Summary and KSD; nil before the first. They are the collector's own.
func (c *Collector) Draws() *diag.Draws { return c.draws }

// Reset drops the draws kept, keeping Thin and Burn.
func (c *Collector) Reset() { c.steps, c.draws = nil, nil }

// Sample runs kernel k from the positions theta0 for steps steps, its
// randomness drawn from a PCG generator seeded with seed, and returns the
// draws of every chain after the first burn steps: Init, Run and a
// Collector in one call.
func Sample(ctx context.Context, k Kernel, theta0 []float64, steps, burn int, seed uint64) (*diag.Draws, error) {
	st, err := k.Init(theta0, nil)
	if err != nil {
		return nil, err
	}
	c := &Collector{Burn: burn}
	if err := Run(ctx, k, rand.New(rand.NewPCG(seed, 0x73616d706c65)), st, steps, c.Hook); err != nil { // "sample"
		return nil, err
	}
	if c.Len() == 0 {
		return nil, fmt.Errorf("samplers: Sample: no draws after %d steps with %d burnt", steps, burn)
	}
	return c.Draws(), nil
}
