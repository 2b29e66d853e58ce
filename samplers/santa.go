package samplers

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Santa is the algorithm of Chen, Carlson, Gan, Li & Carin, "Bridging the
// gap between stochastic gradient MCMC and stochastic optimization"
// (AISTATS 2016), a reference beside the samplers: SG-MCMC with an
// RMSprop-style preconditioner and element-wise thermostats, annealed to
// zero temperature. An exploration stage samples at temperature 1/β_t, β_t
// growing with the step; a refinement stage, the zero-temperature limit,
// optimises. Every chain is an independent run from its own θ₀, and its
// positions at the end are point estimates.
//
// It follows the paper's Algorithm 1 with the symmetric splitting
// integrator (SSI) in place of its Euler steps. (The paper's text was not at
// hand when this was written: the SSI updates below are those that the
// public reimplementations of the paper, in Chainer, PyTorch and NumPy,
// write alike, checked against the authors' own MATLAB, Caffe and music
// code.) Per coordinate, with f̃_t = ∇Ũ(θ_{t−1}) the stochastic gradient
// on the t-th minibatch (prior and N/n scaling included), N the data size
// and t Santa's count of its steps:
//
//	v_t = σ·v_{t−1} + (1−σ)·f̃_t²/N²              (v_0 = 0)
//	g_t = 1 / √(λ + √v_t)                          the preconditioner
//	θ  = θ_{t−1} + g_t·u_{t−1}/2
//	exploration (t ≤ Explore), β_t = t^γ:
//	  α   = α_{t−1} + (u_{t−1}² − η/β_t)/2
//	  u   = e^{−α/2}·u_{t−1}
//	  u   = u − η·g_t·f̃_t + √(2·g_{t−1}·η^{3/2}/β_t)·ζ_t,    ζ_t ~ N(0, I)
//	  u_t = e^{−α/2}·u
//	  α_t = α + (u_t² − η/β_t)/2
//	refinement (t > Explore):
//	  α_t = α_{t−1},   u_t = e^{−α_t/2}·(e^{−α_t/2}·u_{t−1} − η·g_t·f̃_t)
//	θ_t = θ + g_t·u_t/2
//
// initialised as the paper does: u_0 = √η·ζ_0 (drawn at the first step from
// Step's generator; the momenta given to Init instead, when there are),
// α_0 = √η·C (Alpha0 here) and v_0 = 0. The momentum u is the state's P; v,
// α, t and whether u_0 is still to be drawn are its Aux, so a snapshot
// carries them all. The refinement stage draws no random numbers.
//
// Choices where the paper is silent, or that depart from it:
//   - The noise. The reimplementations write Algorithm 1's noise as
//     √(2·g_{t−1}·η/β_t)·ζ_t (SantaNoiseAlgorithm). At β = 1 it makes the
//     thermostats settle at α ≈ asinh(g), a friction per step that does not
//     vanish as η → 0, and the positions' temperature is then roughly
//     g/(2·sinh(α/2)) (the limit of a strong friction per step): 1 − g²/24
//     for small g, about 1.1 at g = 1 (TestSantaExplorationAtTemperatureOne
//     measures 8–10 % too large variances there), √(g/2) for g ≫ 1. On the
//     music GRUs, where η = lr/N ≈ 1e-8 and λ = 1e-8, the weights whose
//     only gradient is the prior's have g ≈ 2000, and that noise throws them
//     to |θ| ≈ 300 within 5 steps. Santa here injects
//     √(2·g_{t−1}·η^{3/2}/β_t)·ζ_t by default (SantaNoiseSDE), as the
//     authors' MATLAB and Caffe code do: the paper's SDE, with noise
//     √(2·G₂/β)·dW for G₂ = g, discretised with u = √η·p, whose thermostats
//     settle at α ≈ asinh(g·√η) → 0 and which samples the target at β = 1
//     as η → 0 whatever g.
//   - Its exploration also adds η/β_t·(1 − g_{t−1}/g_t)/u_{t−1}, a finite
//     difference for the preconditioner's derivative term of its SDE.
//     Santa here drops it, as the authors' three implementations do (their
//     MATLAB code says its influence is minor in their experiments; their
//     music code leaves it out, their Caffe solver by default): it divides
//     by u_{t−1}, which can be close to 0. Like pSGLD without its Γ term, the
//     exploration is then exact (as η → 0) only for a constant
//     preconditioner.
//   - g_0, which the first step's noise needs, is g_1: with v_0 = 0 the
//     formula would give λ^{−1/2}, 10⁴ for λ = 1e-8.
//   - N is the target's DataSize (1 for a target without data).
//
// Units: η is the paper's. For a data task with per-batch learning rate lr
// and N data, η = lr/N, as in the authors' music code, whose lr multiplies
// the per-datum mean gradient ∇Ũ/N (θ, u and v there are the paper's with
// η = lr/N). The thermostats then barely move (α changes by about η per
// step): α stays near α_0, a momentum e^{−α_0} per step.
//
// The authors' music code (rnn_music/model/optimizers.py, Santa), behind
// the music results of their paper, differs from its Algorithm 1: it takes
// Euler steps; u_0 = 0 and α_0 = 0.5; its noise is √(2·lr·v_t/(β_t·N))·ζ_t
// (v_t in place of g_{t−1}, far colder); its thermostats subtract lr/β_t
// rather than η/β_t = lr/(N·β_t); and its every gradient is rescaled to
// norm 5 (the test of its clipping, a Theano variable, is always true in
// Python). DefaultSantaSettings takes that code's σ, λ, α_0 and annealing.
type Santa struct {
	base
	s SantaSettings
}

// SantaSettings are Santa's settings.
type SantaSettings struct {
	StepSize Schedule // η at each step
	Decay    float64  // σ, the decay of the squared gradients' average v (the authors' music code: 0.95)
	Lambda   float64  // λ, the preconditioner's floor (the authors' music code: 1e-8)
	// Alpha0 is the thermostats' start α_0, the paper's √η·C (the authors'
	// music code: 0.5).
	Alpha0 float64
	// Anneal is γ of the annealing β_t = t^γ (the authors' music code:
	// 0.5); 0 keeps the temperature at 1.
	Anneal float64
	// Explore is the number of steps of the exploration stage, the
	// paper's burnin − 1; refinement follows. (The authors' music code
	// explores for the first 15 of its 100 data epochs.)
	Explore int
	// Noise chooses the exploration's noise (SantaNoiseSDE, the zero
	// value, or SantaNoiseAlgorithm).
	Noise SantaNoise
}

// SantaNoise is the scale of the noise of Santa's exploration.
type SantaNoise int

const (
	// SantaNoiseSDE injects √(2·g_{t−1}·η^{3/2}/β_t)·ζ_t: the paper's SDE,
	// whose noise is √(2·G₂/β)·dW, with G₂ = g and discretised with
	// u = √η·p, as the authors' MATLAB and Caffe code do. At β = 1 the
	// thermostats settle at α ≈ asinh(g·√η), which vanishes with η, and
	// the exploration samples the target as η → 0 whatever g.
	SantaNoiseSDE SantaNoise = iota
	// SantaNoiseAlgorithm injects √(2·g_{t−1}·η/β_t)·ζ_t, as the public
	// reimplementations write the paper's Algorithm 1. At β = 1 its
	// thermostats settle at α ≈ asinh(g), a friction per step that does not
	// vanish with η, and the positions run hot where g is not small (see
	// Santa). Where g ≫ 1 it throws the chains out: on the music GRUs
	// (η = lr/N ≈ 1e-8, λ = 1e-8) the weights whose only gradient is the
	// prior's have g ≈ 2000, and in 5 steps they reach |θ| ≈ 300.
	SantaNoiseAlgorithm
)

func (n SantaNoise) String() string {
	switch n {
	case SantaNoiseSDE:
		return "sde"
	case SantaNoiseAlgorithm:
		return "algorithm"
	}
	return fmt.Sprintf("SantaNoise(%d)", int(n))
}

// DefaultSantaSettings returns the σ, λ, α_0 and annealing of the authors'
// music code, the SDE's noise, η = 0.01 and 1000 steps of exploration:
// tune η and the exploration to the target.
func DefaultSantaSettings() SantaSettings {
	return SantaSettings{StepSize: Constant(0.01), Decay: 0.95, Lambda: 1e-8, Alpha0: 0.5, Anneal: 0.5, Explore: 1000}
}

// NewSanta returns Santa with settings s on target t.
func NewSanta(t Target, s SantaSettings) (*Santa, error) {
	b, err := newBase(t)
	if err != nil {
		return nil, err
	}
	if err := checkSchedule("Santa", s.StepSize); err != nil {
		return nil, err
	}
	if !(s.Decay >= 0 && s.Decay < 1) {
		return nil, errorf("Santa decay must be in [0, 1), got %v", s.Decay)
	}
	if err := positive("Santa lambda", s.Lambda); err != nil {
		return nil, err
	}
	if err := nonNegative("Santa alpha0", s.Alpha0); err != nil {
		return nil, err
	}
	if err := nonNegative("Santa anneal", s.Anneal); err != nil {
		return nil, err
	}
	if s.Explore < 0 {
		return nil, errorf("Santa's exploration must be a non-negative number of steps, got %d", s.Explore)
	}
	if s.Noise != SantaNoiseSDE && s.Noise != SantaNoiseAlgorithm {
		return nil, errorf("unknown Santa noise %v", s.Noise)
	}
	return &Santa{base: b, s: s}, nil
}

// Settings returns the settings the kernel runs with.
func (s *Santa) Settings() SantaSettings { return s.s }

// Init implements Kernel: p0 is the initial momentum u_0; when it is nil,
// the first step draws u_0 = √η·ζ_0.
func (s *Santa) Init(theta0, p0 []float64) (*State, error) {
	return s.init(theta0, p0, true, &santaMemory{drawU: p0 == nil})
}

// santaMemory is Santa's State.Aux.
type santaMemory struct {
	t        int       // the steps Santa took
	v, alpha []float64 // v_t and the thermostats α_t; nil before the first step
	drawU    bool      // u_0 is still to be drawn
}

// Step implements Kernel. A state without memory (Aux nil, as another
// kernel's Init makes it for the same chains) starts Santa afresh from its
// momenta as u_0, or, without momenta, with u_0 drawn.
func (s *Santa) Step(rng *rand.Rand, st *State) error {
	switch st.Aux.(type) {
	case *santaMemory:
	case nil:
		// a first-order kernel's state has no momenta: u_0 is drawn
		st.Aux = &santaMemory{drawU: st.P == nil}
		if st.P == nil {
			st.P = make([]float64, len(st.Theta))
		}
	default:
		return fmt.Errorf("samplers: Santa cannot step a state whose Aux is a %T (made by another kernel)", st.Aux)
	}
	eta, err := stepSize("Santa", s.s.StepSize, st)
	if err != nil {
		return err
	}
	if err := s.evaluate(rng, st); err != nil {
		return err
	}
	mem := st.Aux.(*santaMemory)
	n := len(st.Theta)
	first := mem.v == nil
	if first {
		mem.v, mem.alpha = make([]float64, n), make([]float64, n)
		for i := range mem.alpha {
			mem.alpha[i] = s.s.Alpha0
		}
	}
	t := mem.t + 1
	explore := t <= s.s.Explore
	// the noise: u_0's, then the exploration's ζ_t
	draws := 0
	if mem.drawU {
		draws += n
	}
	if explore {
		draws += n
	}
	var u0, zeta []float64
	if draws > 0 {
		xi := s.normals(rng, draws)
		if mem.drawU {
			u0, xi = xi[:n], xi[n:]
		}
		zeta = xi
	}
	temp := eta / math.Pow(float64(t), s.s.Anneal) // η/β_t
	noise := temp                                  // the noise's variance over 2·g_{t−1}
	if s.s.Noise == SantaNoiseSDE {
		noise *= math.Sqrt(eta)
	}
	sdU0 := math.Sqrt(eta)
	invN := 1 / s.target.DataSize()
	sigma, lambda := s.s.Decay, s.s.Lambda
	grad, v, alpha := st.Eval.Grad, mem.v, mem.alpha
	mem.t, mem.drawU = t, false
	return s.update(st, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			f := grad[i]
			u := st.P[i]
			if u0 != nil {
				u = sdU0 * u0[i]
			}
			fn := f * invN
			gPrev := 1 / math.Sqrt(lambda+math.Sqrt(v[i])) // g_{t−1}
			v[i] = sigma*v[i] + (1-sigma)*fn*fn
			g := 1 / math.Sqrt(lambda+math.Sqrt(v[i]))
			if first {
				gPrev = g
			}
			theta := st.Theta[i] + g*u/2
			if explore {
				a := alpha[i] + (u*u-temp)/2
				e := math.Exp(-a / 2)
				u = e * (e*u - eta*g*f + math.Sqrt(2*gPrev*noise)*zeta[i])
				alpha[i] = a + (u*u-temp)/2
			} else {
				e := math.Exp(-alpha[i] / 2)
				u = e * (e*u - eta*g*f)
			}
			st.P[i] = u
			st.Theta[i] = theta + g*u/2
		}
	})
}
