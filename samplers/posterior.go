package samplers

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// Posterior is a user's target density, written for one position θ of
// dimension Dim:
//
//	log π(θ) = log p(θ) + Σ_{i<Data} log p(y_i | θ)   (up to a constant).
//
// LogPrior and LogLik return their terms and add their gradients with
// respect to θ into grad, which the caller has zeroed. LogLik sums over the
// data indices in batch only: the minibatch scaling N/n is NewTarget's, in
// one place, and a Posterior never sees it. A density without data (Data
// 0) puts its whole log-density in LogPrior and leaves LogLik nil; its
// target then reports it as the energy's data term (Eval.Prior zero), as
// the samplers read an energy without data (pSGLD's preconditioner,
// NNSGHMC's prior correction).
//
// The functions are called from one goroutine at a time, with θ in a
// buffer of the caller's that they must not keep.
type Posterior struct {
	// Dim is the dimension D of θ.
	Dim int
	// Data is the number N of data the likelihood sums over; 0 for a
	// density without data.
	Data int
	// LogPrior returns log p(θ) and adds ∇ log p(θ) into grad.
	LogPrior func(theta, grad []float64) float64
	// LogLik returns Σ_{i ∈ batch} log p(y_i | θ) and adds its gradient
	// into grad.
	LogLik func(theta []float64, batch []int, grad []float64) float64
}

// check reports the first thing that makes p unusable.
func (p *Posterior) check() error {
	switch {
	case p.Dim < 1:
		return fmt.Errorf("samplers: Posterior.Dim is %d, want at least 1", p.Dim)
	case p.Data < 0:
		return fmt.Errorf("samplers: Posterior.Data is %d, want 0 (no data) or more", p.Data)
	case p.LogPrior == nil:
		return errors.New("samplers: Posterior.LogPrior is nil (a density without data is all LogPrior)")
	case p.Data > 0 && p.LogLik == nil:
		return fmt.Errorf("samplers: Posterior.LogLik is nil with %d data", p.Data)
	case p.Data == 0 && p.LogLik != nil:
		return errors.New("samplers: Posterior.LogLik is given but Data is 0: set Data to the number of data it sums over")
	}
	return nil
}

// LogDensity returns log π(θ) on all the data and writes its gradient,
// the score ∇ log π(θ), into score (length Dim): what a full-batch method,
// or a kernel Stein discrepancy (diag.KSD), needs at a position.
func (p *Posterior) LogDensity(theta, score []float64) float64 {
	clear(score)
	lp := p.LogPrior(theta, score)
	if p.Data > 0 {
		lp += p.LogLik(theta, allIndices(p.Data), score)
	}
	return lp
}

// allIndices returns 0, 1, …, n−1.
func allIndices(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// TargetSettings say how NewTarget evaluates a Posterior.
type TargetSettings struct {
	// Chains is the number K of chains evaluated together.
	Chains int
	// Batch is the minibatch size n: each evaluation takes the next n
	// data of a random permutation, a fresh one each pass over the data
	// (see Batches), the same minibatch for every chain, and scales the
	// likelihood by N/n. 0, or Data or more, evaluates all the data.
	Batch int
	// NoiseEstimate makes every evaluation estimate the variance of the
	// minibatch gradient's noise (Eval.NoiseVar) from the spread of the
	// minibatch's per-datum gradients, for the samplers' noise correction
	// (SGHMCSettings.NoiseCorrection). It calls LogLik once per datum
	// instead of once per minibatch.
	NoiseEstimate bool
}

// PosteriorTarget is a Posterior evaluated for K chains: a Target that
// draws the minibatches itself (made by NewTarget).
type PosteriorTarget struct {
	p       Posterior
	s       TargetSettings
	batches *Batches // nil on all the data
	all     []int    // the indices of all the data
	// scratch: one chain's position and gradients, one datum's index
	theta, gp, gl, g1 []float64
	one               []int
	mean, m2          []float64 // per-coordinate running moments of the per-datum gradients
}

// NewTarget returns the target of K chains that p and s describe.
func NewTarget(p Posterior, s TargetSettings) (*PosteriorTarget, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if s.Chains < 1 {
		return nil, fmt.Errorf("samplers: TargetSettings.Chains is %d, want at least 1", s.Chains)
	}
	if s.Batch < 0 {
		return nil, fmt.Errorf("samplers: TargetSettings.Batch is %d, want 0 (all the data) or more", s.Batch)
	}
	d := p.Dim
	t := &PosteriorTarget{p: p, s: s, theta: make([]float64, d), gp: make([]float64, d), gl: make([]float64, d),
		g1: make([]float64, d), one: make([]int, 1), mean: make([]float64, d), m2: make([]float64, d)}
	if p.Data > 0 {
		t.all = allIndices(p.Data)
		if s.Batch > 0 && s.Batch < p.Data {
			b, err := NewBatches(p.Data, s.Batch)
			if err != nil {
				return nil, err
			}
			t.batches = b
		}
	}
	return t, nil
}

// Dim implements Target.
func (t *PosteriorTarget) Dim() int { return t.p.Dim }

// Chains implements Target.
func (t *PosteriorTarget) Chains() int { return t.s.Chains }

// DataSize implements Target: N, or 1 without data.
func (t *PosteriorTarget) DataSize() float64 { return float64(max(t.p.Data, 1)) }

// Batches implements Batched: the minibatch order, nil on all the data.
func (t *PosteriorTarget) Batches() *Batches { return t.batches }

// Posterior returns the posterior the target evaluates.
func (t *PosteriorTarget) Posterior() Posterior { return t.p }

// Evaluate implements Target: for every chain, Ũ = −log p(θ) − (N/n)·Σ_{i
// in the minibatch} log p(y_i | θ) and its gradient, drawing the next
// minibatch from rng; with TargetSettings.NoiseEstimate, NoiseVar too.
func (t *PosteriorTarget) Evaluate(rng *rand.Rand, theta []float64, e *Eval) error {
	d, k := t.p.Dim, t.s.Chains
	if len(theta) != d*k {
		return fmt.Errorf("samplers: %d positions for %d dimensions × %d chains", len(theta), d, k)
	}
	batch := t.all
	if t.batches != nil {
		batch = t.batches.Next(rng)
	}
	scale := 0.0
	if len(batch) > 0 {
		scale = float64(t.p.Data) / float64(len(batch))
	}
	e.U, e.Prior = resize(e.U, k), resize(e.Prior, k)
	e.Grad, e.PriorGrad = resize(e.Grad, d*k), resize(e.PriorGrad, d*k)
	if t.s.NoiseEstimate {
		e.NoiseVar = resize(e.NoiseVar, d*k)
	}
	for c := 0; c < k; c++ {
		for i := 0; i < d; i++ {
			t.theta[i] = theta[i*k+c]
		}
		clear(t.gp)
		prior := t.p.LogPrior(t.theta, t.gp)
		lik := 0.0
		clear(t.gl)
		if len(batch) > 0 {
			lik = t.p.LogLik(t.theta, batch, t.gl)
		}
		e.U[c] = -(prior + scale*lik)
		e.Prior[c] = -prior
		for i := 0; i < d; i++ {
			e.PriorGrad[i*k+c] = -t.gp[i]
			e.Grad[i*k+c] = -(t.gp[i] + scale*t.gl[i])
		}
		if t.p.Data == 0 {
			// a density without data is all "data term", as the
			// samplers read Eval: no prior part
			e.Prior[c] = 0
			for i := 0; i < d; i++ {
				e.PriorGrad[i*k+c] = 0
			}
		}
		if t.s.NoiseEstimate {
			t.noiseVar(batch, scale, e.NoiseVar[c:], k)
		}
	}
	return nil
}

// noiseVar writes V̂ for the chain at t.theta into v[0], v[k], …: the
// variance of ∇Ũ's likelihood part, (N/n)²·n·s², from the sample variance
// s² of the n per-datum gradients of the minibatch (0 for n < 2 or on all
// the data, where the gradient is exact).
func (t *PosteriorTarget) noiseVar(batch []int, scale float64, v []float64, k int) {
	n := len(batch)
	if n < 2 || t.batches == nil {
		for i := range t.mean {
			v[i*k] = 0
		}
		return
	}
	clear(t.mean)
	clear(t.m2)
	for j, idx := range batch {
		t.one[0] = idx
		clear(t.g1)
		t.p.LogLik(t.theta, t.one, t.g1)
		// Welford's running mean and sum of squared deviations
		for i, g := range t.g1 {
			delta := g - t.mean[i]
			t.mean[i] += delta / float64(j+1)
			t.m2[i] += delta * (g - t.mean[i])
		}
	}
	for i := range t.mean {
		v[i*k] = scale * scale * float64(n) * t.m2[i] / float64(n-1)
	}
}

// resize returns x with length n, reallocated if too short.
func resize(x []float64, n int) []float64 {
	if cap(x) < n {
		return make([]float64, n)
	}
	return x[:n]
}

// finite reports whether v is neither NaN nor infinite: v − v is 0, not
// NaN as for ±Inf and NaN.
func finite(v float64) bool { return v-v == 0 }
