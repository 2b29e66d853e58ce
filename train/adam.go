package train

import (
	"fmt"
	"math"
)

// AdamConfig holds Adam's settings (Kingma & Ba, 2015).
type AdamConfig struct {
	LR    float64 `json:"lr"`
	Beta1 float64 `json:"beta1"`
	Beta2 float64 `json:"beta2"`
	Eps   float64 `json:"eps"` // PyTorch's default 1e-8
}

// Validate reports invalid settings: the learning rate and ε must be
// positive and finite, the betas in [0, 1).
func (c AdamConfig) Validate() error {
	if !(c.LR > 0) || math.IsInf(c.LR, 0) || !(c.Beta1 >= 0 && c.Beta1 < 1) || !(c.Beta2 >= 0 && c.Beta2 < 1) || !(c.Eps > 0) || math.IsInf(c.Eps, 0) {
		return fmt.Errorf("adam: invalid settings lr %v, betas (%v, %v), eps %v", c.LR, c.Beta1, c.Beta2, c.Eps)
	}
	return nil
}

// Adam is the Adam optimiser over a list of parameter slices, with bias
// correction as in PyTorch:
//
//	m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,  t ← t+1
//	x ← x − lr·(m/(1−β₁ᵗ)) / (√(v/(1−β₂ᵗ)) + ε).
//
// Its state (M, V, T) is exported so that checkpoints can save it.
type Adam struct {
	Config AdamConfig  `json:"config"`
	M      [][]float64 `json:"m"`
	V      [][]float64 `json:"v"`
	T      int         `json:"t"`
}

// NewAdam returns an optimiser for parameters shaped like params.
func NewAdam(cfg AdamConfig, params [][]float64) *Adam {
	a := &Adam{Config: cfg}
	for _, p := range params {
		a.M = append(a.M, make([]float64, len(p)))
		a.V = append(a.V, make([]float64, len(p)))
	}
	return a
}

// Step moves params against grads.
func (a *Adam) Step(params, grads [][]float64) {
	c := a.Config
	a.T++
	bc1 := 1 - math.Pow(c.Beta1, float64(a.T))
	bc2 := 1 - math.Pow(c.Beta2, float64(a.T))
	for i, p := range params {
		m, v, g := a.M[i], a.V[i], grads[i]
		for j := range p {
			m[j] = c.Beta1*m[j] + (1-c.Beta1)*g[j]
			v[j] = c.Beta2*v[j] + (1-c.Beta2)*g[j]*g[j]
			p[j] -= c.LR * (m[j] / bc1) / (math.Sqrt(v[j]/bc2) + c.Eps)
		}
	}
}
