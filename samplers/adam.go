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
	// Rescale, when positive, scales each chain's gradient to this norm
	// before the update, whatever its norm: the music code of Chen et al.
	// (2016) does so with 5 for every gradient (its clipping test, on a
	// Theano variable, is always true in Python).
	Rescale float64
	// ChenCorrections replaces the bias corrections 1−β₁ᵗ and 1−β₂ᵗ with
	// 1−(1−β₁)ᵗ and 1−(1−β₂)ᵗ, as that code writes them (its b1 and b2
	// are 1−β₁ and 1−β₂), in its form of the update, θ −= η·√c₂/c₁ ·
	// m/(√v + ε) with c₁, c₂ the corrections: almost none, so that the
	// early steps are larger than Adam's, about √(1/(1−β₂ᵗ)) times for t
	// past 1/(1−β₁) (3.2 times at t = 100, 1.3 at t = 1,000 for β₂ =
	// 0.999).
	ChenCorrections bool
}

// DefaultAdamSettings returns the defaults Kingma & Ba (2015) suggest:
// η = 0.001, β₁ = 0.9, β₂ = 0.999, ε = 1e-8. They are also the settings of
// Adam in the music experiments of Chen et al. (2016); ChenAdamSettings
// adds the ways their code departs from the algorithm.
func DefaultAdamSettings() AdamSettings {
	return AdamSettings{StepSize: Constant(0.001), Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}
}

// ChenAdamSettings returns DefaultAdamSettings as the music code of Chen
// et al. (2016) runs them (github.com/cchangyou/Santa,
// rnn_music/model/optimizers.py, Adam): every gradient rescaled to norm 5,
// and its bias corrections.
func ChenAdamSettings() AdamSettings {
	s := DefaultAdamSettings()
	s.Rescale, s.ChenCorrections = 5, true
	return s
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
	if !(s.Rescale >= 0) || math.IsInf(s.Rescale, 0) {
		return nil, errorf("Adam's Rescale must be a finite norm, or 0 for none; got %v", s.Rescale)
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
	scale := s.rescale(grad) // per chain; nil for none
	chen := s.s.ChenCorrections
	var etaT float64
	if chen {
		// as that code writes it: η·√c2/c1 · m/(√v + ε), ε outside the correction
		c1, c2 = 1-math.Pow(1-b1, float64(mem.t)), 1-math.Pow(1-b2, float64(mem.t))
		etaT = eta * math.Sqrt(c2) / c1
	}
	return s.update(st, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			g := grad[i]
			if scale != nil {
				g *= scale[i%s.k]
			}
			m[i] = b1*m[i] + (1-b1)*g
			v[i] = b2*v[i] + (1-b2)*g*g
			if chen {
				st.Theta[i] -= etaT * m[i] / (math.Sqrt(v[i]) + eps)
			} else {
				st.Theta[i] -= eta * (m[i] / c1) / (math.Sqrt(v[i]/c2) + eps)
			}
		}
	})
}

// rescale returns the factor per chain that scales the chain's gradient
// in grad (coordinate-major, as State.Theta) to the norm Rescale, or nil
// where Rescale is 0. A chain whose gradient is 0 keeps it.
func (s *Adam) rescale(grad []float64) []float64 {
	if s.s.Rescale == 0 {
		return nil
	}
	f := make([]float64, s.k)
	for i, g := range grad {
		f[i%s.k] += g * g
	}
	for c, sq := range f {
		f[c] = 1
		if sq > 0 {
			f[c] = s.s.Rescale / math.Sqrt(sq)
		}
	}
	return f
}
