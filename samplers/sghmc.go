package samplers

import (
	"math"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// SGHMC is stochastic gradient Hamiltonian Monte Carlo (Chen et al., 2014)
// with identity mass, friction C and no gradient-noise estimate (B̂ = 0),
// momentum first, as NNSGHMC updates:
//
//	p_{t+1} = p_t − η·∇Ũ(θ_t) − η·C·p_t + √(2ηC)·ξ_t,   ξ_t ~ N(0, I)
//	θ_{t+1} = θ_t + η·p_{t+1}.
//
// The authors' code writes the same update with velocity v = η·p, step
// ε = η² and friction α = η·C: v ← v − ε∇Ũ − αv + N(0, 2αε), θ ← θ + v. For a
// data task with per-batch learning rate lr and N data, ε = lr/N (see
// SGHMCParams). The authors move θ before evaluating the gradient; with p_0 = 0
// that only delays the chain by one step.
type SGHMC struct {
	base
	eta, friction float64
}

// NewSGHMC returns SGHMC with step size eta and friction C on target t.
func NewSGHMC(t tasks.Target, eta, friction float64) (*SGHMC, error) {
	b, err := newBase(t)
	if err != nil {
		return nil, err
	}
	if err := positive("SGHMC step size", eta); err != nil {
		return nil, err
	}
	if err := nonNegative("SGHMC friction", friction); err != nil {
		return nil, err
	}
	return &SGHMC{base: b, eta: eta, friction: friction}, nil
}

// SGHMCParams converts the authors' data-task settings — per-batch learning
// rate lr, data size N and velocity friction α — to η = √(lr/N) and C = α/η.
func SGHMCParams(lr, n, alpha float64) (eta, friction float64) {
	eta = math.Sqrt(lr / n)
	return eta, alpha / eta
}

// Init implements Kernel.
func (s *SGHMC) Init(theta0, p0 []float64) (*State, error) { return s.init(theta0, p0, true, nil) }

// Step implements Kernel.
func (s *SGHMC) Step(rng *rand.Rand, st *State) error {
	if err := s.evaluate(rng, st); err != nil {
		return err
	}
	eta, c := s.eta, s.friction
	sd := math.Sqrt(2 * eta * c)
	for i, g := range st.Eval.Grad {
		p := st.P[i] - eta*g - eta*c*st.P[i] + sd*rng.NormFloat64()
		st.P[i] = p
		st.Theta[i] += eta * p
	}
	st.Steps++
	return s.check(st)
}
