package samplers

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// PSGLD is preconditioned SGLD (Li et al., 2016) with an RMSprop
// preconditioner built from the likelihood part of the gradient, as the
// authors' code does:
//
//	ḡ_t = (∇Ũ(θ_t) − ∇U_prior(θ_t)) / N
//	V_t = ρ·V_{t−1} + (1−ρ)·ḡ_t²   (V_0 = ḡ_0²)
//	G_t = 1 / (λ + √V_t)
//	θ_{t+1} = θ_t − η_t·G_t⊙∇Ũ(θ_t) + √(2η_t·G_t)⊙ξ_t,   ξ_t ~ N(0, I).
//
// Like the authors (and Li et al. in practice) it drops the Γ correction
// term of the preconditioner, which is small when ρ is close to 1. For a data
// task with per-batch learning rate lr and N data, η = lr/N.
type PSGLD struct {
	base
	s PSGLDSettings
}

// PSGLDSettings are pSGLD's settings.
type PSGLDSettings struct {
	StepSize Schedule // η at each step
	Decay    float64  // ρ, the RMS decay (authors: 0.99)
	Lambda   float64  // λ, the preconditioner's floor (authors: 1e-5)
}

// DefaultPSGLDSettings returns the authors' decay and λ with η = 0.01:
// tune η to the target (TuneStepSize).
func DefaultPSGLDSettings() PSGLDSettings {
	return PSGLDSettings{StepSize: Constant(0.01), Decay: 0.99, Lambda: 1e-5}
}

// NewPSGLD returns pSGLD with settings s on target t.
func NewPSGLD(t Target, s PSGLDSettings) (*PSGLD, error) {
	b, err := newBase(t)
	if err != nil {
		return nil, err
	}
	if err := checkSchedule("pSGLD", s.StepSize); err != nil {
		return nil, err
	}
	if !(s.Decay >= 0 && s.Decay < 1) {
		return nil, errorf("pSGLD decay must be in [0, 1), got %v", s.Decay)
	}
	if err := positive("pSGLD lambda", s.Lambda); err != nil {
		return nil, err
	}
	return &PSGLD{base: b, s: s}, nil
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
	eta, err := stepSize("pSGLD", s.s.StepSize, st)
	if err != nil {
		return err
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
	xi := s.normals(rng, len(e.Grad))
	return s.update(st, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			g := e.Grad[i]
			gl := (g - e.PriorGrad[i]) / n
			if first {
				v[i] = gl * gl
			} else {
				v[i] = s.s.Decay*v[i] + (1-s.s.Decay)*gl*gl
			}
			pre := 1 / (s.s.Lambda + math.Sqrt(v[i]))
			st.Theta[i] += -eta*pre*g + math.Sqrt(2*eta*pre)*xi[i]
		}
	})
}
