package train

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// The losses estimate KL(q‖π) = E_q[Ũ] + E_q[log q] + const in the authors'
// surrogate form, whose φ-gradient is the gradient of the KL: for samples θ
// that depend on φ through the unrolled sampler,
//
//	L = mean over samples of [stopgrad(∇Ũ(θ)) + stopgrad(ĝ(θ))]·θ,
//
// with ĝ the Stein estimate of ∇ log q. What a loss hands the trainer is its
// gradient with respect to each sampled position — the adjoints that
// back-propagation through time carries into φ.

// CrossChain is the cross-chain loss (eq. 8 of the paper): at every
// evaluation time t the K chains are K samples of q_t, the KL is estimated
// from them, and the estimates are averaged over the times. The times are
// Burn+Every, Burn+2·Every, … up to the unroll length.
type CrossChain struct {
	Every  int     `json:"every"`  // steps between evaluation times
	Burn   int     `json:"burn"`   // steps before the first time
	Lambda float64 `json:"lambda"` // Stein ridge λ
	Weight float64 `json:"weight"`
}

// InChain is the in-chain loss (eq. 9) as the authors' code computes it:
// the positions of a few sub-sampled chains at the times Burn, Burn+Thin, …
// (thinning each chain) are pooled into one sample of the time-averaged
// distribution q̄, the KL of q̄ is estimated from that pool with one Stein
// estimate. The chains are s, s+r, s+2r, … with s drawn uniformly from
// FirstChain and r from Stride (inclusive ranges) at every unroll.
type InChain struct {
	Burn       int     `json:"burn"`
	Thin       int     `json:"thin"`
	FirstChain [2]int  `json:"first_chain"`
	Stride     [2]int  `json:"stride"`
	Lambda     float64 `json:"lambda"`
	Weight     float64 `json:"weight"`
}

// times returns the evaluation times of the cross-chain loss in 1..steps.
func (c *CrossChain) times(steps int) []int {
	var ts []int
	for t := c.Burn + c.Every; t <= steps; t += c.Every {
		if t >= 1 {
			ts = append(ts, t)
		}
	}
	return ts
}

// times returns the thinned times of the in-chain loss in 1..steps.
func (c *InChain) times(steps int) []int {
	var ts []int
	for t := max(c.Burn, 1); t <= steps; t += c.Thin {
		ts = append(ts, t)
	}
	return ts
}

// chains draws the pooled chains for one unroll of k chains.
func (c *InChain) chains(rng *rand.Rand, k int) []int {
	s := c.FirstChain[0] + rng.IntN(c.FirstChain[1]-c.FirstChain[0]+1)
	r := c.Stride[0] + rng.IntN(c.Stride[1]-c.Stride[0]+1)
	var cs []int
	for ; s < k; s += r {
		cs = append(cs, s)
	}
	return cs
}

func (c *CrossChain) validate(k int) error {
	switch {
	case c.Every < 1 || c.Burn < 0:
		return fmt.Errorf("cross-chain loss: every %d and burn-in %d must be positive and non-negative", c.Every, c.Burn)
	case !(c.Lambda > 0):
		return fmt.Errorf("cross-chain loss: Stein λ must be positive, got %v", c.Lambda)
	case k < minSteinSamples:
		return fmt.Errorf("cross-chain loss: needs at least %d chains, got %d (%s)", minSteinSamples, k, steinWhy)
	}
	return nil
}

func (c *InChain) validate(k int) error {
	switch {
	case c.Thin < 1 || c.Burn < 0:
		return fmt.Errorf("in-chain loss: thinning %d and burn-in %d must be positive and non-negative", c.Thin, c.Burn)
	case !(c.Lambda > 0):
		return fmt.Errorf("in-chain loss: Stein λ must be positive, got %v", c.Lambda)
	case c.FirstChain[0] < 0 || c.FirstChain[1] < c.FirstChain[0]:
		return fmt.Errorf("in-chain loss: first chain range %v is not a range of chain indices", c.FirstChain)
	case c.FirstChain[1] >= k:
		return fmt.Errorf("in-chain loss: needs at least %d chains, got %d (its first chain is drawn from %d..%d)", c.FirstChain[1]+1, k, c.FirstChain[0], c.FirstChain[1])
	case c.Stride[0] < 1 || c.Stride[1] < c.Stride[0]:
		return fmt.Errorf("in-chain loss: stride range %v must be positive", c.Stride)
	}
	return nil
}

// minSteinSamples is the fewest samples from which the Stein estimator
// gets a bandwidth: the lower median of the n² squared distances, the n
// zeros of the diagonal among them, is 0 for n < 3.
const minSteinSamples = 3

// steinWhy says why the cross-chain loss needs minSteinSamples chains.
const steinWhy = "the Stein estimator's bandwidth is the median squared distance between the chains' samples, the zero distance of each to itself included, which is 0 for fewer"

// MinChains returns the fewest chains the configuration's losses work
// with, and why: the cross-chain loss's Stein estimator needs 3 samples
// at a time, the in-chain loss a chain at every index its first chain is
// drawn from.
func (c *Config) MinChains() (int, string) {
	n, why := 1, ""
	if c.Cross != nil && n < minSteinSamples {
		n, why = minSteinSamples, "the cross-chain loss: "+steinWhy
	}
	if c.InChain != nil && c.InChain.FirstChain[1]+1 > n {
		n, why = c.InChain.FirstChain[1]+1, fmt.Sprintf("the in-chain loss draws its first chain from %d..%d", c.InChain.FirstChain[0], c.InChain.FirstChain[1])
	}
	return n, why
}

// steinAdjoints returns scale·(∇Ũ + ĝ) for the pooled samples, whose
// positions and energy gradients are given as rows, in w's memory (valid
// until w's next estimate).
func steinAdjoints(w *steinWork, pos, grad *mat.Dense, lambda, scale float64) (*mat.Dense, error) {
	g, err := w.estimate(pos, lambda)
	if err != nil {
		return nil, err
	}
	g.Add(g, grad)
	g.Scale(scale, g)
	return g, nil
}
