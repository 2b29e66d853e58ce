package samplers

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Adam is the Adam optimiser of Kingma & Ba (2015, Algorithm 1), a
// reference beside the samplers, run on each chain's stochastic energy Ũ,
// the gradient the target gives (its prior and its N/n scaling included):
//
//	g_t = ∇Ũ(θ_{t−1})
//	m_t = β₁·m_{t−1} + (1−β₁)·g_t,    v_t = β₂·v_{t−1} + (1−β₂)·g_t²    (m_0 = v_0 = 0)
//	m̂_t = m_t / (1−β₁ᵗ),    v̂_t = v_t / (1−β₂ᵗ)
//	θ_t = θ_{t−1} − η_t·m̂_t / (√v̂_t + ε).
//
// Every chain is an independent optimisation from its own θ₀, and its
// positions are point estimates (the minibatch noise keeps them near a
// mode of Ũ), not draws from the posterior. Adam's memory, m, v and its own
// count t of the steps it took (for the bias correction), is the state's
// Aux: it starts afresh on a state another kernel made.
//
// Learning rate: Adam's step m̂/(√v̂ + ε) does not change when the gradient
// is scaled but through ε, so a data task's per-batch learning rate lr is η
// itself, η = lr, not lr/N: Adam on ∇Ũ, which is N times the per-datum mean
// gradient that the authors' code of Chen et al. (2016) differentiates,
// takes the steps of Adam on that mean gradient with ε/N in place of ε.
type Adam struct {
	base
	s AdamSettings
}

// AdamSettings are Adam's settings.
type AdamSettings struct {
	StepSize Schedule // η at each step (Kingma & Ba's α)
	Beta1    float64  // β₁, the first moment's decay (Kingma & Ba: 0.9)
	Beta2    float64  // β₂, the second moment's decay (Kingma & Ba: 0.999)
	Epsilon  float64  // ε (Kingma & Ba: 1e-8)
}

// DefaultAdamSettings returns the defaults Kingma & Ba (2015) suggest:
// η = 0.001, β₁ = 0.9, β₂ = 0.999, ε = 1e-8. They are also the settings of
// Adam in the music experiments of Chen et al. (2016).
func DefaultAdamSettings() AdamSettings {
	return AdamSettings{StepSize: Constant(0.001), Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}
}

// NewAdam returns Adam with settings s on target t.
func NewAdam(t Target, s AdamSettings) (*Adam, error) {
	b, err := newBase(t)
	if err != nil {
		return nil, err
	}
	if err := checkSchedule("Adam", s.StepSize); err != nil {
		return nil, err
	}
	if !(s.Beta1 >= 0 && s.Beta1 < 1) || !(s.Beta2 >= 0 && s.Beta2 < 1) {
		return nil, errorf("Adam's β₁ and β₂ must be in [0, 1), got %v and %v", s.Beta1, s.Beta2)
	}
	if err := positive("Adam epsilon", s.Epsilon); err != nil {
		return nil, err
	}
	return &Adam{base: b, s: s}, nil
}

// Settings returns the settings the kernel runs with.
func (s *Adam) Settings() AdamSettings { return s.s }

// Init implements Kernel; Adam has no momenta and ignores p0.
func (s *Adam) Init(theta0, _ []float64) (*State, error) {
	return s.init(theta0, nil, false, &adamMemory{})
}

// adamMemory is Adam's State.Aux.
type adamMemory struct {
	t    int       // the steps Adam took
	m, v []float64 // the moments m_t and v_t; nil before the first step
}

// Step implements Kernel. A state without memory (Aux nil, as another
// kernel's Init makes it for the same chains) starts Adam afresh: zero
// moments, and the bias correction of a first step.
func (s *Adam) Step(rng *rand.Rand, st *State) error {
	switch st.Aux.(type) {
	case *adamMemory:
	case nil:
		st.Aux = &adamMemory{}
	default:
		return fmt.Errorf("samplers: Adam cannot step a state whose Aux is a %T (made by another kernel)", st.Aux)
	}
	eta, err := stepSize("Adam", s.s.StepSize, st)
	if err != nil {
		return err
	}
	if err := s.evaluate(rng, st); err != nil {
		return err
	}
	mem := st.Aux.(*adamMemory)
	if mem.m == nil {
		mem.m, mem.v = make([]float64, len(st.Theta)), make([]float64, len(st.Theta))
	}
	mem.t++
	b1, b2, eps := s.s.Beta1, s.s.Beta2, s.s.Epsilon
	c1 := 1 - math.Pow(b1, float64(mem.t)) // the bias corrections
	c2 := 1 - math.Pow(b2, float64(mem.t))
	grad, m, v := st.Eval.Grad, mem.m, mem.v
	return s.update(st, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			g := grad[i]
			m[i] = b1*m[i] + (1-b1)*g
			v[i] = b2*v[i] + (1-b2)*g*g
			st.Theta[i] -= eta * (m[i] / c1) / (math.Sqrt(v[i]/c2) + eps)
		}
	})
}
