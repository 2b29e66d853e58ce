package samplers

import (
	"math"
	"math/rand/v2"
)

// SGLD is stochastic gradient Langevin dynamics (Welling & Teh, 2011):
//
//	θ_{t+1} = θ_t − η_t·∇Ũ(θ_t) + √(2η_t)·ξ_t,   ξ_t ~ N(0, I).
//
// For a data task with per-batch learning rate lr and N data the authors use
// η = lr/N (see SGLDStepSize).
type SGLD struct {
	base
	s SGLDSettings
}

// SGLDSettings are SGLD's settings.
type SGLDSettings struct {
	// StepSize gives η at each step.
	StepSize Schedule
}

// DefaultSGLDSettings returns η = 0.01, a step for targets of about unit
// scale: tune it to the target (TuneStepSize).
func DefaultSGLDSettings() SGLDSettings { return SGLDSettings{StepSize: Constant(0.01)} }

// NewSGLD returns SGLD with settings s on target t.
func NewSGLD(t Target, s SGLDSettings) (*SGLD, error) {
	b, err := newBase(t)
	if err != nil {
		return nil, err
	}
	if err := checkSchedule("SGLD", s.StepSize); err != nil {
		return nil, err
	}
	return &SGLD{base: b, s: s}, nil
}

// SGLDStepSize is η = lr/N, the authors' SGLD step for per-batch learning
// rate lr on N data.
func SGLDStepSize(lr, n float64) float64 { return lr / n }

// Init implements Kernel; SGLD has no momenta and ignores p0.
func (s *SGLD) Init(theta0, _ []float64) (*State, error) { return s.init(theta0, nil, false, nil) }

// Step implements Kernel.
func (s *SGLD) Step(rng *rand.Rand, st *State) error {
	eta, err := stepSize("SGLD", s.s.StepSize, st)
	if err != nil {
		return err
	}
	if err := s.evaluate(rng, st); err != nil {
		return err
	}
	sd := math.Sqrt(2 * eta)
	grad := st.Eval.Grad
	xi := s.normals(rng, len(grad))
	return s.update(st, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			st.Theta[i] += -eta*grad[i] + sd*xi[i]
		}
	})
}
