package samplers

import (
	"math"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// SGLD is stochastic gradient Langevin dynamics (Welling & Teh, 2011):
//
//	θ_{t+1} = θ_t − η·∇Ũ(θ_t) + √(2η)·ξ_t,   ξ_t ~ N(0, I).
//
// For a data task with per-batch learning rate lr and N data the authors use
// η = lr/N (see SGLDStepSize).
type SGLD struct {
	base
	eta float64
}

// NewSGLD returns SGLD with step size eta on target t.
func NewSGLD(t tasks.Target, eta float64) (*SGLD, error) {
	b, err := newBase(t)
	if err != nil {
		return nil, err
	}
	if err := positive("SGLD step size", eta); err != nil {
		return nil, err
	}
	return &SGLD{base: b, eta: eta}, nil
}

// SGLDStepSize is η = lr/N, the authors' SGLD step for per-batch learning
// rate lr on N data.
func SGLDStepSize(lr, n float64) float64 { return lr / n }

// Init implements Kernel; SGLD has no momenta and ignores p0.
func (s *SGLD) Init(theta0, _ []float64) (*State, error) { return s.init(theta0, nil, false, nil) }

// Step implements Kernel.
func (s *SGLD) Step(rng *rand.Rand, st *State) error {
	if err := s.evaluate(rng, st); err != nil {
		return err
	}
	sd := math.Sqrt(2 * s.eta)
	for i, g := range st.Eval.Grad {
		st.Theta[i] += -s.eta*g + sd*rng.NormFloat64()
	}
	st.Steps++
	return s.check(st)
}
