// Package samplers runs stochastic-gradient MCMC on K parallel chains:
// SGLD, SGHMC and preconditioned SGLD here, the meta-learned NNSGHMC of
// Gong, Li & Hernández-Lobato (ICLR 2019) in package nnsghmc, and any
// kernel written elsewhere. Beside them, as references, it runs three
// optimisers as kernels of the same shape, each chain an independent
// optimisation from its own start whose positions are point estimates:
// Adam (Kingma & Ba, 2015), SGD with heavy-ball momentum, and Santa
// (Chen et al., 2016), which anneals SG-MCMC with thermostats and an
// RMSprop preconditioner to zero temperature. It imports no Gorgonia: a
// user's model needs this package, diag and nnsghmc only.
//
// # Targets
//
// A Target evaluates the stochastic energy Ũ(θ) = −log π̃(θ), prior
// included, and its gradient for K chains at once. NewTarget makes one
// from a Posterior written for one position: the log-prior and the
// log-likelihood of a minibatch, with their gradients. It draws the
// minibatches (a fresh permutation of the data each pass) and scales the
// likelihood by N/n, once, in one place; with TargetSettings.NoiseEstimate
// it also estimates the variance of the minibatch gradient's noise. Package
// tasks compiles targets from Gorgonia graphs.
//
// # Samplers
//
// Each sampler is a Kernel in the style of BlackJAX's init/step kernels,
// made by one constructor shape, NewX(target, XSettings), with
// DefaultXSettings(): Init builds a State from initial positions and Step
// advances every chain by one update, evaluating the target once. The step
// size is a setting, a Schedule of the step (Constant, Warmup). All
// randomness comes from the *rand.Rand passed to Step, so the same seed
// gives bit-identical chains. Run steps a kernel in a loop, with a Hook
// after each step (a Collector keeps the draws, in the (chain, draw, dim)
// order of diag.Draws) and a context to interrupt it.
//
// # Tuning and checking
//
// TuneStepSize chooses a step size by the kernel Stein discrepancy of
// short pilot runs (diag.KSD), which measures bias, not only mixing;
// diag.Summary gives the per-coordinate mean, sd, Monte-Carlo error, bulk
// and tail ESS and R̂ of the draws, as ArviZ's az.summary. Kernels say once,
// through Warn, when they run outside what they were made for: SGHMC where
// the estimated gradient noise exceeds its friction, NNSGHMC where its
// networks see inputs far from those of their training.
//
// # Kernels of your own
//
// A sampler can be written in any package: a Kernel keeps its own memory
// of the chains (a thermostat, a moving average) in State.Aux, and uses
// InitState, EvaluateState and CheckState, as the SGNHT example does (a
// kernel whose Step returns CheckState's error itself can say so,
// SelfChecking, and Run does not check its states again). Save
// and Restore turn a State into a Snapshot that JSON writes and reads
// exactly, the kernel's memory included, so a run can stop and continue
// bit for bit (cmd/sample --resume).
//
// Positions and momenta of K chains in D dimensions are stored
// coordinate-major: coordinate i of chain k is at i·K + k.
package samplers

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/internal/vec"
)

// State is the state of K chains.
type State struct {
	Theta []float64 // positions θ, length D·K
	P     []float64 // momenta p, length D·K (nil for first-order samplers)
	// Eval is the target's evaluation at the positions the last step
	// started from (nil before the first step).
	Eval *Eval
	// Steps counts the steps taken since Init.
	Steps int
	// Aux is the kernel's own memory of the chains beyond positions and
	// momenta, nil for a kernel without one (SGLD, SGHMC, SGD-M, whose
	// velocity is P). The kernel that made the state sets it in Init and
	// type-asserts it to its own type in Step: pSGLD keeps its moving
	// average of squared gradients here, Adam its moments, Santa its
	// thermostats and NNSGHMC its finite-difference memory, and a kernel
	// written in another package keeps its own the same way (see the SGNHT
	// example). Other code should treat it as opaque; a copy of a State
	// made with = shares it.
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
// target, which computes in buffers of its own (NewTarget's and package
// tasks' compiled targets do), and NNSGHMC keeps scratch space in the
// kernel. Give each goroutine
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

// base holds what every kernel shares: the target and scratch space.
type base struct {
	target Target
	d, k   int
	xi     *[]float64 // a step's normal draws, shared by copies of the kernel value
}

// normals draws n standard normals from rng into the kernel's scratch
// (spans.Normals: the same draws on any number of cores): a step draws its
// noise first and updates the coordinates in parallel after.
func (b base) normals(rng *rand.Rand, n int) []float64 {
	x := resize(*b.xi, n)
	*b.xi = x
	spans.Normals(rng, x)
	return x
}

// update runs f, which updates the coordinates [lo, hi) of st.Theta and
// st.P, over spans shared out among the cores, counts the step and returns
// what CheckState returns after it, from a scan of each span just after its
// update, while it is in cache.
func (b base) update(st *State, f func(lo, hi int)) error {
	n := len(st.Theta)
	bad := make([][2]int, (n+spans.ElementSpan-1)/spans.ElementSpan)
	spans.For(n, func(lo, hi int) {
		f(lo, hi)
		bad[lo/spans.ElementSpan] = [2]int{firstUnbounded(st.Theta[lo:hi]), -1}
		if st.P != nil {
			bad[lo/spans.ElementSpan][1] = firstUnbounded(st.P[lo:hi])
		}
	})
	st.Steps++
	for what, name := range [2]string{"position", "momentum"} {
		for sp, i := range bad {
			if i[what] >= 0 {
				return &DivergenceError{Step: st.Steps, Chain: (sp*spans.ElementSpan + i[what]) % b.k, What: name}
			}
		}
	}
	return nil
}

func newBase(t Target) (base, error) {
	if t == nil {
		return base{}, errors.New("samplers: nil target")
	}
	d, k := t.Dim(), t.Chains()
	if d < 1 || k < 1 {
		return base{}, fmt.Errorf("samplers: target of dimension %d with %d chains", d, k)
	}
	return base{target: t, d: d, k: k, xi: new([]float64)}, nil
}

// init validates and copies the initial state and gives it aux as the
// kernel's memory, State.Aux (nil for a kernel without one).
func (b base) init(theta0, p0 []float64, momentum bool, aux any) (*State, error) {
	return InitState(b.target, theta0, p0, momentum, aux)
}

// InitState returns a state of t's chains at positions theta0 with momenta
// p0 (zeros when p0 is nil) if momentum, both copied, and aux as the
// kernel's memory: what a kernel's Init does. It refuses positions or
// momenta of the wrong length or that are not finite. A kernel written in
// another package calls it.
func InitState(t Target, theta0, p0 []float64, momentum bool, aux any) (*State, error) {
	d, k := t.Dim(), t.Chains()
	n := d * k
	if len(theta0) != n {
		return nil, fmt.Errorf("samplers: %d initial positions, want %d dimensions × %d chains = %d", len(theta0), d, k, n)
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
	if err := CheckState(s, k); err != nil {
		return nil, err
	}
	s.Aux = aux
	return s, nil
}

// evaluate evaluates the target at s.Theta into s.Eval.
func (b base) evaluate(rng *rand.Rand, s *State) error { return EvaluateState(b.target, rng, s) }

// EvaluateState evaluates t at s.Theta into s.Eval, allocating it on first
// use, and returns a *DivergenceError naming the chain and the step
// s.Steps if an energy or a gradient is not finite: what every kernel does
// at the start of a step. A kernel written in another package calls it.
func EvaluateState(t Target, rng *rand.Rand, s *State) error {
	d, k := t.Dim(), t.Chains()
	if s.Eval == nil {
		s.Eval = NewEval(d, k)
	}
	if err := t.Evaluate(rng, s.Theta, s.Eval); err != nil {
		return err
	}
	for c, u := range s.Eval.U {
		if !finite(u) {
			return &DivergenceError{Step: s.Steps, Chain: c, What: "energy"}
		}
	}
	if i := firstNotFinite(s.Eval.Grad); i >= 0 {
		return &DivergenceError{Step: s.Steps, Chain: i % k, What: "energy gradient"}
	}
	return nil
}

// firstNotFinite returns the first index of x whose entry is not finite,
// or -1, looking in parallel.
func firstNotFinite(x []float64) int {
	return spans.First(len(x), func(lo, hi int) int {
		if i := vec.FirstUnbounded(x[lo:hi], math.MaxFloat64); i >= 0 {
			return lo + i
		}
		return -1
	})
}

// firstUnbounded returns the first index of x whose entry is not finite
// or is beyond ±Runaway, or -1.
func firstUnbounded(x []float64) int { return vec.FirstUnbounded(x, Runaway) }

// check returns a DivergenceError if a position or momentum is not finite
// or runs away, naming the step s.Steps that produced it.
func (b base) check(s *State) error { return CheckState(s, b.k) }

// CheckState returns a *DivergenceError for the first position, then
// momentum, of s that is not finite or beyond ±Runaway, naming the step
// s.Steps and the chain of coordinate i as i mod k: what every kernel does
// at the end of a step (Run does it for kernels of other packages too).
func CheckState(s *State, k int) error {
	for _, x := range []struct {
		v    []float64
		name string
	}{{s.Theta, "position"}, {s.P, "momentum"}} {
		if i := spans.First(len(x.v), func(lo, hi int) int {
			if i := firstUnbounded(x.v[lo:hi]); i >= 0 {
				return lo + i
			}
			return -1
		}); i >= 0 {
			return &DivergenceError{Step: s.Steps, Chain: i % k, What: x.name}
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
