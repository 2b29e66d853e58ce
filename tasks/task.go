// Package tasks defines target densities π(θ) ∝ exp(−U(θ)) as Gorgonia
// graphs, as the paper's tasks are written: an energy is a graph of U for
// K chains at once (Energy), and Compile turns it into a samplers.Target
// that evaluates Ũ and ∇Ũ numerically, the gradient by reverse-mode
// differentiation. (A model written for one position in plain Go needs no
// graph: samplers.NewTarget.) Monitors measure runs on the tasks.
//
// Positions of K chains in D dimensions are held together, coordinate-major:
// a (D, K) matrix stored row-major, so coordinate i of chain k is at i·K + k.
// This makes every parameter block of a model a contiguous row range and lets
// energies share the work of all chains (one matrix product for all of them).
package tasks

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// Energy defines a target density π(θ) ∝ exp(−U(θ)) by building U as a graph.
// Implementations build through package graph.
type Energy interface {
	// Dim is the dimension D of θ.
	Dim() int
	// Build adds the energy of K chains to g. theta is the (D, K) input node
	// of positions, one column per chain.
	Build(g *G.ExprGraph, theta *G.Node) (*Model, error)
}

// Model is an energy built into a graph by Energy.Build.
type Model struct {
	// Lik is the data term of the (stochastic) energy Ũ per chain, shape
	// (K); for targets without data it is the whole energy.
	Lik *G.Node
	// Prior is −log p(θ) per chain, shape (K), or nil when the energy has
	// no separate prior term.
	Prior *G.Node
	// DataSize is N, the number of data the likelihood sums over (for
	// sequences, the number of frames); 1 for targets without data.
	DataSize float64
	// Next, when not nil, loads the next minibatch into the graph's data
	// inputs before an evaluation.
	Next func(rng *rand.Rand) error
	// Batches, when not nil, is the order in which Next visits the data.
	Batches *samplers.Batches
}

// Reevaluator is a target that can evaluate again on the minibatch of its
// last evaluation.
type Reevaluator interface {
	samplers.Target
	EvaluateAgain(theta []float64, e *samplers.Eval) error
}

// Evaluator is a compiled Energy: it implements Target and Reevaluator.
type Evaluator struct {
	d, k       int
	model      *Model
	theta      *G.Node
	lik, prior *G.Node          // the terms of Ũ per chain
	grad       []graph.RowBlock // the data term's gradient, by row blocks of θ
	pgr        *G.Node          // the prior's gradient
	prog       *graph.Program
}

// Compile builds e for k chains in dtype dt (float64 or float32) together
// with ∇U by reverse-mode differentiation, and compiles it.
func Compile(e Energy, k int, dt tensor.Dtype) (*Evaluator, error) {
	d := e.Dim()
	if d < 1 || k < 1 {
		return nil, fmt.Errorf("tasks.Compile: dimension %d and %d chains must be positive", d, k)
	}
	g := G.NewGraph()
	theta := graph.Input(g, dt, "theta", d, k)
	m, err := e.Build(g, theta)
	if err != nil {
		return nil, err
	}
	if m.Lik == nil || !m.Lik.Shape().Eq(tensor.Shape{k}) {
		return nil, fmt.Errorf("tasks.Compile: the energy's data term must have shape (%d)", k)
	}
	if m.DataSize <= 0 {
		return nil, fmt.Errorf("tasks.Compile: data size %v must be positive", m.DataSize)
	}
	if m.Prior != nil && !m.Prior.Shape().Eq(tensor.Shape{k}) {
		return nil, fmt.Errorf("tasks.Compile: the energy's prior term must have shape (%d)", k)
	}
	// The data term and the prior are differentiated separately and their
	// sums formed in Go: differentiating Lik + Prior would add two (D, K)
	// gradients in the graph (a copy and an allocation per evaluation) and
	// differentiate the prior twice, as its gradient is an output too. The
	// data term's gradient comes by row blocks where the energy uses θ
	// through row slices (graph.GradRows), and is assembled in Go too.
	ev := &Evaluator{d: d, k: k, model: m, theta: theta, lik: m.Lik, prior: m.Prior}
	sum, err := G.Sum(m.Lik)
	if err != nil {
		return nil, err
	}
	if ev.grad, err = graph.GradRows(sum, theta); err != nil {
		return nil, err
	}
	outs := G.Nodes{ev.lik}
	for _, b := range ev.grad {
		outs = append(outs, b.Grad)
	}
	if m.Prior != nil {
		if ev.pgr, err = sumGrad(m.Prior, theta); err != nil {
			return nil, err
		}
		outs = append(outs, ev.prior, ev.pgr)
	}
	if ev.prog, err = graph.Compile(outs...); err != nil {
		return nil, err
	}
	return ev, nil
}

// sumGrad returns the gradient of Σ_k term_k with respect to theta.
func sumGrad(term, theta *G.Node) (*G.Node, error) {
	s, err := G.Sum(term)
	if err != nil {
		return nil, err
	}
	gr, err := graph.Grad(s, theta)
	if err != nil {
		return nil, err
	}
	return gr[0], nil
}

// Dim implements Target.
func (ev *Evaluator) Dim() int { return ev.d }

// Chains implements Target.
func (ev *Evaluator) Chains() int { return ev.k }

// DataSize implements Target.
func (ev *Evaluator) DataSize() float64 { return ev.model.DataSize }

// Batches implements Batched: the model's minibatch order, or nil when it
// has none.
func (ev *Evaluator) Batches() *samplers.Batches { return ev.model.Batches }

// Evaluate implements Target.
func (ev *Evaluator) Evaluate(rng *rand.Rand, theta []float64, e *samplers.Eval) error {
	if err := ev.positions(theta); err != nil {
		return err
	}
	if ev.model.Next != nil {
		if err := ev.model.Next(rng); err != nil {
			return err
		}
	}
	return ev.run(theta, e)
}

// EvaluateAgain computes the energy and its gradient at theta on the
// minibatch of the last Evaluate (or, before any, on the energy's data as
// built), drawing no new one. It implements Reevaluator.
func (ev *Evaluator) EvaluateAgain(theta []float64, e *samplers.Eval) error {
	if err := ev.positions(theta); err != nil {
		return err
	}
	return ev.run(theta, e)
}

// positions checks that theta holds D·K positions.
func (ev *Evaluator) positions(theta []float64) error {
	if len(theta) != ev.d*ev.k {
		return fmt.Errorf("tasks: %d positions for %d dimensions × %d chains", len(theta), ev.d, ev.k)
	}
	return nil
}

// run evaluates the program at theta on the data it holds.
func (ev *Evaluator) run(theta []float64, e *samplers.Eval) error {
	if err := graph.SetValue(ev.theta, theta); err != nil {
		return err
	}
	if err := ev.prog.Run(); err != nil {
		return err
	}
	var err error
	if e.U, err = graph.Value(ev.lik, e.U); err != nil {
		return err
	}
	if e.Grad, err = ev.gradient(e.Grad); err != nil {
		return err
	}
	if ev.prior == nil {
		e.Prior = zero(e.Prior, ev.k)
		e.PriorGrad = zero(e.PriorGrad, ev.d*ev.k)
		return nil
	}
	if e.Prior, err = graph.Value(ev.prior, e.Prior); err != nil {
		return err
	}
	if e.PriorGrad, err = graph.ValueAndAdd(ev.pgr, e.PriorGrad, e.Grad); err != nil {
		return err
	}
	floats.Add(e.U, e.Prior)
	return nil
}

// gradient copies the data term's gradient into dst (allocated when too
// short), block by block, with zeros in the rows of no block.
func (ev *Evaluator) gradient(dst []float64) ([]float64, error) {
	k := ev.k
	if cap(dst) < ev.d*k {
		dst = make([]float64, ev.d*k)
	}
	dst = dst[:ev.d*k]
	done := 0 // the rows before are set
	for _, b := range ev.grad {
		clear(dst[done*k : b.Lo*k])
		rows := dst[b.Lo*k : b.Hi*k]
		v, err := graph.Value(b.Grad, rows)
		if err != nil {
			return nil, err
		}
		if len(v) != len(rows) || &v[0] != &rows[0] {
			return nil, fmt.Errorf("tasks: the gradient of rows %d:%d has %d values, want %d", b.Lo, b.Hi, len(v), len(rows))
		}
		done = b.Hi
	}
	clear(dst[done*k:])
	return dst, nil
}

// Close releases the compiled program.
func (ev *Evaluator) Close() error { return ev.prog.Close() }

func zero(x []float64, n int) []float64 {
	if cap(x) < n {
		return make([]float64, n)
	}
	x = x[:n]
	clear(x)
	return x
}

// GradientNoise wraps a target so that every gradient evaluation gets
// independent N(0, σ²) noise added to each coordinate — the injected
// stochastic-gradient noise of the paper's toy experiment. The energy values
// are left exact.
type GradientNoise struct {
	samplers.Target
	Sigma float64
}

// Evaluate implements Target.
func (n GradientNoise) Evaluate(rng *rand.Rand, theta []float64, e *samplers.Eval) error {
	if err := n.Target.Evaluate(rng, theta, e); err != nil {
		return err
	}
	if n.Sigma != 0 {
		for i := range e.Grad {
			e.Grad[i] += n.Sigma * rng.NormFloat64()
		}
	}
	return nil
}

// Finite reports whether every entry of x is finite.
func Finite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// Metric is a named value measured on the chains.
type Metric struct {
	Name  string
	Value float64
}

// Monitor measures a run of K chains: it sees the positions after every step
// and reports metrics at evaluation points and at the end.
type Monitor interface {
	// Observe records the positions (length D·K) after step (1-based).
	Observe(step int, theta []float64) error
	// Metrics returns the metrics of the run so far, always in the same
	// order.
	Metrics() ([]Metric, error)
	// Summary returns the final metrics of the run.
	Summary() ([]Metric, error)
}

// Block is a named span [Lo, Hi) of one chain's coordinates: a layer's
// weights, say.
type Block struct {
	Name   string
	Lo, Hi int
}

// Blocker is a Monitor whose task's coordinates fall into named blocks:
// cmd/sample reports each block's kinetic temperature, which the mean over
// all coordinates hides where one small block runs hot.
type Blocker interface {
	Monitor
	Blocks() []Block
}

// Resumer is a Monitor that a run stopped and later resumed (cmd/sample
// --resume) can restore from the positions at the step it stopped at
// alone: Resume puts a fresh monitor into the state it had after observing
// theta at step. A monitor whose metrics accumulate over the run (the
// Gaussian task's running moments) would need its accumulated state saved
// as well, and does not implement it.
type Resumer interface {
	Monitor
	Resume(step int, theta []float64) error
}
