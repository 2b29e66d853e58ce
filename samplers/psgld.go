package samplers

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// PSGLD is preconditioned SGLD (Li et al., 2016) with an RMSprop
// preconditioner built from the likelihood part of the gradient, as the
// authors' code does:
//
//	ḡ_t = (∇Ũ(θ_t) − ∇U_prior(θ_t)) / N
//	V_t = ρ·V_{t−1} + (1−ρ)·ḡ_t²   (V_0 = ḡ_0²)
//	G_t = 1 / (λ + √V_t)
//	θ_{t+1} = θ_t − η·G_t⊙∇Ũ(θ_t) + √(2η·G_t)⊙ξ_t,   ξ_t ~ N(0, I).
//
// Like the authors (and Li et al. in practice) it drops the Γ correction
// term of the preconditioner, which is small when ρ is close to 1. For a data
// task with per-batch learning rate lr and N data, η = lr/N.
type PSGLD struct {
	base
	eta, decay, lambda float64
}

// PSGLDConfig holds pSGLD's settings.
type PSGLDConfig struct {
	StepSize float64 // η
	Decay    float64 // ρ, the RMS decay (authors: 0.99)
	Lambda   float64 // λ, the preconditioner's floor (authors: 1e-5)
}

// DefaultPSGLD returns the authors' decay and λ with step size eta.
func DefaultPSGLD(eta float64) PSGLDConfig {
	return PSGLDConfig{StepSize: eta, Decay: 0.99, Lambda: 1e-5}
}

// NewPSGLD returns pSGLD on target t.
func NewPSGLD(t tasks.Target, cfg PSGLDConfig) (*PSGLD, error) {
	b, err := newBase(t)
	if err != nil {
		return nil, err
	}
	if err := positive("pSGLD step size", cfg.StepSize); err != nil {
		return nil, err
	}
	if !(cfg.Decay >= 0 && cfg.Decay < 1) {
		return nil, errorf("pSGLD decay must be in [0, 1), got %v", cfg.Decay)
	}
	if err := positive("pSGLD lambda", cfg.Lambda); err != nil {
		return nil, err
	}
	return &PSGLD{base: b, eta: cfg.StepSize, decay: cfg.Decay, lambda: cfg.Lambda}, nil
}

// Init implements Kernel; pSGLD has no momenta and ignores p0.
func (s *PSGLD) Init(theta0, _ []float64) (*State, error) {
	return s.init(theta0, nil, false, &psgldMemory{})
}

// psgldMemory is pSGLD's State.Aux.
type psgldMemory struct {
	v []float64 // V_t, the moving average of squared gradients; nil before the first step
}

// Step implements Kernel. A state without memory (Aux nil, as another
// kernel's Init makes it for the same chains) starts the moving average
// afresh.
func (s *PSGLD) Step(rng *rand.Rand, st *State) error {
	switch st.Aux.(type) {
	case *psgldMemory:
	case nil:
		st.Aux = &psgldMemory{}
	default:
		return fmt.Errorf("samplers: pSGLD cannot step a state whose Aux is a %T (made by another kernel)", st.Aux)
	}
	if err := s.evaluate(rng, st); err != nil {
		return err
	}
	e := st.Eval
	n := s.target.DataSize()
	m := st.Aux.(*psgldMemory)
	first := m.v == nil
	if first {
		m.v = make([]float64, len(st.Theta))
	}
	v := m.v
	for i, g := range e.Grad {
		gl := (g - e.PriorGrad[i]) / n
		if first {
			v[i] = gl * gl
		} else {
			v[i] = s.decay*v[i] + (1-s.decay)*gl*gl
		}
		pre := 1 / (s.lambda + math.Sqrt(v[i]))
		st.Theta[i] += -s.eta*pre*g + math.Sqrt(2*s.eta*pre)*rng.NormFloat64()
	}
	st.Steps++
	return s.check(st)
}
