// Package samplers implements stochastic-gradient MCMC samplers over K
// parallel chains held together: SGLD, SGHMC, preconditioned SGLD and the
// meta-learned NNSGHMC of Gong, Li & Hernández-Lobato (ICLR 2019).
//
// Each sampler is a Kernel in the style of BlackJAX's init/step kernels:
// Init builds a State from initial positions and Step advances every chain by
// one update, evaluating the target's stochastic gradient once. All
// randomness comes from the *rand.Rand passed to Step, so the same seed gives
// bit-identical chains. Run steps a kernel in a loop, with a Hook after each
// step to record or evaluate the chains (a Collector keeps their positions)
// and a context to interrupt it.
//
// Save and Restore turn a State into a Snapshot that JSON writes and reads
// exactly, the kernel's memory included, so a run can stop and continue
// bit for bit (cmd/sample --resume).
//
// A sampler can be written in any package: a Kernel keeps its own memory of
// the chains (a thermostat, a moving average) in State.Aux, as the SGNHT
// example does.
//
// Positions and momenta of K chains in D dimensions are stored
// coordinate-major, as in package tasks: coordinate i of chain k is at i·K+k.
package samplers

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// State is the state of K chains.
type State struct {
	Theta []float64 // positions θ, length D·K
	P     []float64 // momenta p, length D·K (nil for first-order samplers)
	// Eval is the target's evaluation at the positions the last step
	// started from (nil before the first step).
	Eval *tasks.Eval
	// Steps counts the steps taken since Init.
	Steps int
	// Aux is the kernel's own memory of the chains beyond positions and
	// momenta, nil for a kernel without one (SGLD, SGHMC). The kernel that
	// made the state sets it in Init and type-asserts it to its own type in
	// Step: pSGLD keeps its moving average of squared gradients here and
	// NNSGHMC its finite-difference memory, and a kernel written in another
	// package keeps its own the same way (see the SGNHT example). Other
	// code should treat it as opaque; a copy of a State made with = shares
	// it.
	Aux any
}

// Kernel is an SG-MCMC transition kernel over K chains.
//
// Everything a kernel knows of the chains is in the State: its positions,
// momenta and the kernel's own memory, State.Aux. A kernel may be written in
// any package: implement Init and Step, keep the kernel's memory in Aux, and
// Run checks its states for divergence.
//
// Kernel values are not safe for concurrent use: Step evaluates the
// target, and a compiled target (tasks.Compile) computes in buffers of its
// own, and NNSGHMC keeps scratch space in the kernel. Give each goroutine
// its own kernel and target. Several states may be stepped by one kernel in
// turn (each state carries its own memory), and a state may be passed on to
// another kernel of the same type, settings and target.
type Kernel interface {
	// Init returns the state at positions theta0 (length D·K) with momenta
	// p0, or zero momenta when p0 is nil. The slices are copied.
	Init(theta0, p0 []float64) (*State, error)
	// Step advances every chain of s by one update and adds one to
	// s.Steps. It returns a *DivergenceError if the new state, or the
	// energy at the old one, is not finite or runs away (see Runaway).
	Step(rng *rand.Rand, s *State) error
}

// Runaway is the magnitude beyond which a position or momentum counts as
// diverged (tasks.Runaway).
const Runaway = tasks.Runaway

// DivergenceError reports a chain whose state or energy became non-finite,
// or whose position or momentum exceeded Runaway in magnitude. Its Step is
// the number of steps after which the state is bad, as cmd/sample numbers
// the rows of metrics.csv: a step that turns the state after n−1 steps into
// a bad one reports step n, and a bad energy at the positions after n steps
// reports step n (0 for the initial state).
type DivergenceError = tasks.DivergenceError

// ErrDiverged matches any *DivergenceError with errors.Is.
var ErrDiverged = tasks.ErrDiverged

// base holds what every kernel shares: the target and scratch space.
type base struct {
	target tasks.Target
	d, k   int
}

func newBase(t tasks.Target) (base, error) {
	if t == nil {
		return base{}, errors.New("samplers: nil target")
	}
	d, k := t.Dim(), t.Chains()
	if d < 1 || k < 1 {
		return base{}, fmt.Errorf("samplers: target of dimension %d with %d chains", d, k)
	}
	return base{target: t, d: d, k: k}, nil
}

// init validates and copies the initial state and gives it aux as the
// kernel's memory, State.Aux (nil for a kernel without one).
func (b base) init(theta0, p0 []float64, momentum bool, aux any) (*State, error) {
	n := b.d * b.k
	if len(theta0) != n {
		return nil, fmt.Errorf("samplers: %d initial positions, want %d dimensions × %d chains = %d", len(theta0), b.d, b.k, n)
	}
	s := &State{Theta: append([]float64(nil), theta0...)}
	if momentum {
		s.P = make([]float64, n)
		if p0 != nil {
			if len(p0) != n {
				return nil, fmt.Errorf("samplers: %d initial momenta, want %d", len(p0), n)
			}
			copy(s.P, p0)
		}
	}
	if err := b.check(s); err != nil {
		return nil, err
	}
	s.Aux = aux
	return s, nil
}

// evaluate evaluates the target at s.Theta into s.Eval.
func (b base) evaluate(rng *rand.Rand, s *State) error {
	if s.Eval == nil {
		s.Eval = tasks.NewEval(b.d, b.k)
	}
	if err := b.target.Evaluate(rng, s.Theta, s.Eval); err != nil {
		return err
	}
	for k, u := range s.Eval.U {
		if math.IsNaN(u) || math.IsInf(u, 0) {
			return &DivergenceError{Step: s.Steps, Chain: k, What: "energy"}
		}
	}
	for i, g := range s.Eval.Grad {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return &DivergenceError{Step: s.Steps, Chain: i % b.k, What: "energy gradient"}
		}
	}
	return nil
}

// check returns a DivergenceError if a position or momentum is not finite
// or runs away, naming the step s.Steps that produced it.
func (b base) check(s *State) error { return checkRunaway(s, b.k) }

// checkRunaway reports the first position, then momentum, that is not
// finite or beyond ±Runaway, naming coordinate i's chain as i mod k.
func checkRunaway(s *State, k int) error {
	for i, x := range s.Theta {
		if !(math.Abs(x) <= Runaway) {
			return &DivergenceError{Step: s.Steps, Chain: i % k, What: "position"}
		}
	}
	for i, x := range s.P {
		if !(math.Abs(x) <= Runaway) {
			return &DivergenceError{Step: s.Steps, Chain: i % k, What: "momentum"}
		}
	}
	return nil
}

func positive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("samplers: %s must be a positive number, got %v", name, v)
	}
	return nil
}

func nonNegative(name string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return fmt.Errorf("samplers: %s must be a non-negative number, got %v", name, v)
	}
	return nil
}

func errorf(format string, args ...any) error { return fmt.Errorf("samplers: "+format, args...) }

// Bounded reports whether every entry of x is finite and within ±Runaway.
func Bounded(x []float64) bool {
	for _, v := range x {
		if !(math.Abs(v) <= Runaway) {
			return false
		}
	}
	return true
}
