package samplers

import (
	"errors"
	"fmt"
)

// Runaway is the magnitude beyond which a position or momentum counts as
// diverged: no posterior this library samples lives there, and a chain that
// grows geometrically passes it well before it overflows to Inf.
const Runaway = 1e30

// DivergenceError reports a chain that diverged: its state or energy became
// non-finite, its position or momentum exceeded Runaway in magnitude, or a
// monitor that knows the target found it beyond any plausible value.
//
// Steps are numbered as the commands number them in their outputs (the
// "step" column of cmd/sample's metrics.csv): the state after n steps is
// step n, and the initial state is step 0. Step is the first step whose
// state is bad.
type DivergenceError struct {
	Step, Chain int
	What        string // "position", "momentum", "energy" or "energy gradient"
	// Why says what is wrong with it; "" stands for "not finite or beyond
	// ±Runaway".
	Why string
}

// Error returns "chain C diverged at step S: its WHAT is WHY (try a smaller
// step size)".
func (e *DivergenceError) Error() string {
	why := e.Why
	if why == "" {
		why = fmt.Sprintf("not finite or beyond ±%g", Runaway)
	}
	return fmt.Sprintf("chain %d diverged at step %d: its %s is %s (try a smaller step size)", e.Chain, e.Step, e.What, why)
}

// ErrDiverged matches any *DivergenceError with errors.Is.
var ErrDiverged = errors.New("chain diverged")

// Is makes errors.Is(err, ErrDiverged) true for divergence errors.
func (e *DivergenceError) Is(target error) bool { return target == ErrDiverged }
