package samplers

import "math/rand/v2"

// Eval holds one evaluation of a target at the positions of K chains: the
// stochastic energy Ũ(θ) = −log π̃(θ), an unbiased estimate of
// U(θ) = −log p(θ) − Σ_{i<N} log p(y_i | θ) from a minibatch, prior
// included, and its parts.
type Eval struct {
	U         []float64 // Ũ(θ_k), length K, the prior included
	Prior     []float64 // the prior part of Ũ(θ_k), −log p(θ_k), length K (zeros when none)
	Grad      []float64 // ∇Ũ, length D·K, coordinate-major, the prior's included
	PriorGrad []float64 // ∇ of the prior part, length D·K (zeros when none)
	// NoiseVar, when not nil, estimates the variance of each coordinate of
	// Grad's minibatch noise, V̂ = Var(∇Ũ − ∇U), length D·K: from the
	// spread of the minibatch's per-datum gradients (Chen et al. 2014's
	// B̂ = ½·η·V̂). Targets that cannot estimate it leave it nil.
	NoiseVar []float64
}

// NewEval allocates an Eval for d dimensions and k chains (without
// NoiseVar).
func NewEval(d, k int) *Eval {
	return &Eval{U: make([]float64, k), Prior: make([]float64, k), Grad: make([]float64, d*k), PriorGrad: make([]float64, d*k)}
}

// Target is the energy of K chains that the samplers step on: NewTarget
// makes one from a Posterior written for one position, and package tasks
// compiles one from a Gorgonia graph.
//
// Positions of K chains in D dimensions are one coordinate-major (D, K)
// matrix: coordinate i of chain k is at i·K + k.
type Target interface {
	// Dim is the dimension D of θ.
	Dim() int
	// Chains is the number K of chains evaluated together.
	Chains() int
	// DataSize is N (1 for targets without data).
	DataSize() float64
	// Evaluate computes the stochastic energy and its gradient at theta
	// (length D·K, coordinate-major) into e, overwriting every value of
	// U, Prior, Grad and PriorGrad (and NoiseVar if the target fills it).
	// rng supplies all randomness (minibatch choice, injected gradient
	// noise).
	Evaluate(rng *rand.Rand, theta []float64, e *Eval) error
}

// Batched is a target whose evaluations visit training data in a Batches
// order; training checkpoints save it.
type Batched interface {
	Batches() *Batches
}
