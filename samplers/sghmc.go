package samplers

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// SGHMC is stochastic gradient Hamiltonian Monte Carlo (Chen et al., 2014)
// with identity mass and friction C, momentum first, as NNSGHMC updates:
//
//	p_{t+1} = p_t − η·∇Ũ(θ_t) − η·C·p_t + √(2η·(C − B̂))·ξ_t,   ξ_t ~ N(0, I)
//	θ_{t+1} = θ_t + η·p_{t+1},
//
// where B̂ = ½·η·V̂ per coordinate, V̂ the variance of the minibatch
// gradient's noise (Eval.NoiseVar), is subtracted with
// SGHMCSettings.NoiseCorrection and is 0 otherwise. Where the target
// estimates V̂ and C < B̂, the gradient noise alone heats the chains beyond
// the target whatever is injected: SGHMC says so once (SGHMCSettings.Warn)
// and injects no noise there.
//
// The authors' code writes the same update with velocity v = η·p, step
// ε = η² and friction α = η·C: v ← v − ε∇Ũ − αv + N(0, 2αε), θ ← θ + v. For a
// data task with per-batch learning rate lr and N data, ε = lr/N (see
// SGHMCParams). The authors move θ before evaluating the gradient; with p_0 = 0
// that only delays the chain by one step.
type SGHMC struct {
	base
	s    SGHMCSettings
	once *Once
}

// SGHMCSettings are SGHMC's settings.
type SGHMCSettings struct {
	// StepSize gives η at each step.
	StepSize Schedule
	// Friction is C ≥ 0.
	Friction float64
	// NoiseCorrection subtracts the estimated gradient noise B̂ = ½·η·V̂
	// from the injected noise, on targets that estimate V̂
	// (TargetSettings.NoiseEstimate).
	NoiseCorrection bool
	// Warn receives the warnings (the standard logger when nil).
	Warn Warn
}

// DefaultSGHMCSettings returns η = 0.01 and C = 1, for targets of about
// unit scale: tune η to the target (TuneStepSize).
func DefaultSGHMCSettings() SGHMCSettings {
	return SGHMCSettings{StepSize: Constant(0.01), Friction: 1}
}

// NewSGHMC returns SGHMC with settings s on target t.
func NewSGHMC(t Target, s SGHMCSettings) (*SGHMC, error) {
	b, err := newBase(t)
	if err != nil {
		return nil, err
	}
	if err := checkSchedule("SGHMC", s.StepSize); err != nil {
		return nil, err
	}
	if err := nonNegative("SGHMC friction", s.Friction); err != nil {
		return nil, err
	}
	return &SGHMC{base: b, s: s, once: s.Warn.Once()}, nil
}

// Warned implements WarnsOnce.
func (s *SGHMC) Warned() *Once { return s.once }

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
	eta, err := stepSize("SGHMC", s.s.StepSize, st)
	if err != nil {
		return err
	}
	if err := s.evaluate(rng, st); err != nil {
		return err
	}
	c := s.s.Friction
	if v := st.Eval.NoiseVar; v != nil {
		s.noisyStep(rng, st, eta, c, v)
		st.Steps++
		return s.check(st)
	}
	if s.s.NoiseCorrection {
		s.once.Say("no estimate", "samplers: SGHMC: NoiseCorrection is set but the target estimates no gradient noise (TargetSettings.NoiseEstimate): the noise is not corrected")
	}
	sd := math.Sqrt(2 * eta * c)
	grad := st.Eval.Grad
	xi := s.normals(rng, len(grad))
	return s.update(st, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p := st.P[i] - eta*grad[i] - eta*c*st.P[i] + sd*xi[i]
			st.P[i] = p
			st.Theta[i] += eta * p
		}
	})
}

// noisyStep is Step on a target that estimates the gradient noise v.
func (s *SGHMC) noisyStep(rng *rand.Rand, st *State, eta, c float64, v []float64) {
	worst, at := 0.0, -1
	xi := s.normals(rng, len(st.Eval.Grad))
	for i, g := range st.Eval.Grad {
		b := 0.5 * eta * v[i]
		diff := c
		if s.s.NoiseCorrection {
			diff = c - b
		}
		if b > c && b > worst {
			worst, at = b, i
		}
		sd := math.Sqrt(2 * eta * max(diff, 0))
		p := st.P[i] - eta*g - eta*c*st.P[i] + sd*xi[i]
		st.P[i] = p
		st.Theta[i] += eta * p
	}
	if at >= 0 {
		k := len(st.Eval.U)
		s.once.Say("noise above friction", fmt.Sprintf("samplers: SGHMC: the minibatch gradient noise B̂ = ½·η·V̂ reaches %.3g at step %d (coordinate %d of chain %d), above the friction C = %.3g: the chains run hotter than the target; "+
			"raise the friction above %.3g, lower the step size (B̂ grows with η) or enlarge the minibatch", worst, st.Steps+1, at/k, at%k, c, worst))
	}
}
