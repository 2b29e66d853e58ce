// Package gru is the Bayesian recurrent network of the paper's §5.3 as a
// target for the samplers: a GRU 88 → H → 88 with Bernoulli outputs over
// polyphonic piano rolls (package music), with a N(0, I) prior, whose
// stochastic energy on one training sequence (batch size 1, appendix D.4)
//
//	Ũ(θ) = −(N/M)·Σ_t log p(x_t | x_<t, θ) + Σ_i θ_i²/2 + (D/2)·log 2π
//
// (N the frames of the training split, M those of the sequence) and its
// gradient are computed for K chains at once (Energy, a samplers.Target). The
// parameters θ are laid out as Layout describes.
//
// A sequence of up to ~3,900 frames cannot be one Gorgonia graph, so one
// segment graph of S steps (Config.Segment) is compiled once and chained in
// Go: forward over the sequence keeping the state entering each segment,
// then backward in reverse order carrying the adjoint of the state into the
// segment's vector-Jacobian product. Any length is exact. The K chains share
// the work: the input projections of a segment for all chains are one
// batched product of the frames, and so are the gradients of the weights.
//
// Scorer and Monitor evaluate the predictive of the K chains on a split:
// the ensemble's negative log-likelihood per frame (test_nll) and the
// chains' average (test_nll_chain).
//
// The graphs are float64 or float32 (Config.Dtype). Besides Gorgonia's ops
// (through package graph where it has replacements), the recurrence of a
// segment is one op of this package forward and two backward, hand-built
// from the gate activations kept from the forward pass
// (Config.ActivationMemory), each running the S steps chain by chain with
// one Dgemv per product (gonum's Dgemm is 2–3× slower on one-row products)
// while the chain's recurrent weights are in the cache, where a graph of S
// steps ran 11 ops per step and its gradient 29 (before commit 87d2627),
// each over every chain's weights; the weights' gradients are one matrix
// product per segment. The other gradients come from Gorgonia's
// differentiation of the output layer and loss.
package gru

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks/music"
)

// Energy is the stochastic energy of the Bayesian GRU on a training split
// for K chains; it implements samplers.Target. Each evaluation takes the next
// training sequence in an order shuffled afresh every data epoch with the
// random source passed to Evaluate, and scales its log-likelihood by N/M.
//
// An Energy is not safe for concurrent use.
type Energy struct {
	*Model
	train   music.Split
	n       int
	batches *samplers.Batches
	nll     []float64
	last    int
}

var _ samplers.Target = (*Energy)(nil)

// NewEnergy compiles the energy of a GRU configured by cfg on the training
// sequences train.
func NewEnergy(train music.Split, cfg Config) (*Energy, error) {
	if len(train) == 0 {
		return nil, fmt.Errorf("gru: no training sequences")
	}
	for i, s := range train {
		if err := checkSequence(s); err != nil {
			return nil, fmt.Errorf("gru: training sequence %d: %w", i, err)
		}
	}
	m, err := NewModel(cfg)
	if err != nil {
		return nil, err
	}
	batches, err := samplers.NewBatches(len(train), 1)
	if err != nil {
		return nil, err
	}
	return &Energy{Model: m, train: train, n: train.Frames(), batches: batches, nll: make([]float64, m.Chains()), last: -1}, nil
}

// DataSize implements samplers.Target: N, the number of frames of the training
// split.
func (e *Energy) DataSize() float64 { return float64(e.n) }

// Batches implements samplers.Batched: the order in which evaluations visit
// the training sequences, one per evaluation (batch size 1).
func (e *Energy) Batches() *samplers.Batches { return e.batches }

// Evaluate implements samplers.Target: the energy of the next training
// sequence, drawn with rng, at theta (D·K, coordinate-major).
func (e *Energy) Evaluate(rng *rand.Rand, theta []float64, ev *samplers.Eval) error {
	i := e.batches.Next(rng)[0]
	e.last = i
	return e.SequenceEnergy(theta, e.train[i], ev)
}

// SequenceEnergy computes into ev the energy of the sequence seq (as a
// minibatch of the training split: the log-likelihood scaled by N/M) and
// its gradient, with the prior parts apart, at theta (D·K, coordinate-major).
func (e *Energy) SequenceEnergy(theta []float64, seq music.Sequence, ev *samplers.Eval) error {
	d, k := e.Dim(), e.Chains()
	if len(theta) != d*k {
		return fmt.Errorf("gru: %d positions for %d parameters × %d chains", len(theta), d, k)
	}
	ev.U = resize(ev.U, k)
	ev.Prior = resize(ev.Prior, k)
	ev.Grad = resize(ev.Grad, d*k)
	ev.PriorGrad = resize(ev.PriorGrad, d*k)
	scale := float64(e.n) / float64(seq.T)
	if err := e.NLLGrad(theta, seq, scale, e.nll, ev.Grad); err != nil {
		return err
	}
	Prior(theta, k, ev.Prior, ev.PriorGrad)
	for c := range ev.U {
		ev.U[c] = scale*e.nll[c] + ev.Prior[c]
	}
	for i, g := range ev.PriorGrad {
		ev.Grad[i] += g
	}
	return nil
}

// Prior writes the N(0, I) prior energy −log p(θ_k) = Σ_i θ_ik²/2 +
// (D/2)·log 2π of each of the k chains of theta (D·k, coordinate-major) into
// u and its gradient θ into grad.
func Prior(theta []float64, k int, u, grad []float64) {
	d := len(theta) / k
	c := 0.5 * math.Log(2*math.Pi) * float64(d)
	for j := range u[:k] {
		u[j] = c
	}
	for i, v := range theta {
		u[i%k] += 0.5 * v * v
	}
	copy(grad, theta)
}

func resize(x []float64, n int) []float64 {
	if cap(x) < n {
		return make([]float64, n)
	}
	return x[:n]
}
