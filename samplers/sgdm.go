package samplers

import "math/rand/v2"

// SGDM is stochastic gradient descent with heavy-ball momentum (Polyak,
// 1964), a reference beside the samplers, in the form of Sutskever et al.
// (2013, eq. 1) and of SGD-M in the music experiments of Chen et al.
// (2016), on each chain's stochastic energy Ũ (prior and N/n scaling
// included):
//
//	v_t = μ·v_{t−1} − η_t·∇Ũ(θ_{t−1})    (v_0 = 0, or the momenta given to Init)
//	θ_t = θ_{t−1} + v_t.
//
// Every chain is an independent optimisation from its own θ₀, and its
// positions are point estimates, not draws from the posterior. The velocity
// v is the state's momentum, State.P, so a snapshot carries it; SGDM keeps
// no other memory.
//
// It is SGHMC's update without its noise in the velocity form of SGHMC's
// authors (see SGHMC: v = η·p, ε = η², α = η·C): SGD-M's η is that ε and
// μ = 1 − α. For a data task with per-batch learning rate lr and N data,
// η = lr/N: the step of lr on the per-datum mean gradient ∇Ũ/N, which the
// authors' code of Chen et al. (2016) differentiates.
type SGDM struct {
	base
	s SGDMSettings
}

// SGDMSettings are SGD with momentum's settings.
type SGDMSettings struct {
	StepSize Schedule // η at each step
	Momentum float64  // μ, in [0, 1) (Chen et al. 2016's music experiments: 0.9)
}

// DefaultSGDMSettings returns η = 0.01 and μ = 0.9, for targets of about
// unit scale.
func DefaultSGDMSettings() SGDMSettings {
	return SGDMSettings{StepSize: Constant(0.01), Momentum: 0.9}
}

// NewSGDM returns SGD with momentum with settings s on target t.
func NewSGDM(t Target, s SGDMSettings) (*SGDM, error) {
	b, err := newBase(t)
	if err != nil {
		return nil, err
	}
	if err := checkSchedule("SGD-M", s.StepSize); err != nil {
		return nil, err
	}
	if !(s.Momentum >= 0 && s.Momentum < 1) {
		return nil, errorf("SGD-M momentum must be in [0, 1), got %v", s.Momentum)
	}
	return &SGDM{base: b, s: s}, nil
}

// Settings returns the settings the kernel runs with.
func (s *SGDM) Settings() SGDMSettings { return s.s }

// Init implements Kernel: p0 is the initial velocity v_0 (zero when nil).
func (s *SGDM) Init(theta0, p0 []float64) (*State, error) { return s.init(theta0, p0, true, nil) }

// Step implements Kernel. A state without momenta (a first-order kernel's)
// starts from v_0 = 0.
func (s *SGDM) Step(rng *rand.Rand, st *State) error {
	eta, err := stepSize("SGD-M", s.s.StepSize, st)
	if err != nil {
		return err
	}
	if err := s.evaluate(rng, st); err != nil {
		return err
	}
	if st.P == nil { // a first-order kernel's state: v_0 = 0
		st.P = make([]float64, len(st.Theta))
	}
	mu, grad := s.s.Momentum, st.Eval.Grad
	return s.update(st, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := mu*st.P[i] - eta*grad[i]
			st.P[i] = v
			st.Theta[i] += v
		}
	})
}
