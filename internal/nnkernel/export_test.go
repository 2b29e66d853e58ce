package nnkernel

// This file gives the external tests of the package (package
// nnkernel_test, which also need train.BuildStep: train imports nnkernel)
// the engine's unexported parts, and holds the helpers that both the
// internal and the external tests use.

import (
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// NewBare returns a kernel without a target for n coordinates of one
// chain, with settings cfg and the networks' features f (nil for none):
// what Update and the step functions need when fed by hand.
func NewBare(cfg Config, n int, f *Features) *Kernel {
	s := &Kernel{d: n, k: 1, cfg: cfg}
	if f != nil {
		s.feat = *f
	}
	return s
}

// EvalQ is evalQ: Q_f at (u, p) into out, the clamp's gate in Gate.
func (s *Kernel) EvalQ(u, p, out []float64) { s.evalQ(u, p, out) }

// EvalDPart is evalDPart: the network part s_D·|f_D| of D_f into out.
func (s *Kernel) EvalDPart(u, p, g, out []float64) { s.evalDPart(u, p, g, out) }

// Diffusion is diffusion: D_f and whether its clamp is inactive.
func (s *Kernel) Diffusion(q, dpart float64) (float64, bool) { return s.diffusion(q, dpart) }

// Gate is the gate of f_Q's clamp that the last EvalQ left (1 where the
// clamp does not bind).
func (s *Kernel) Gate() []float64 { return s.gate }

// Feat is the networks' features of the last step.
func (s *Kernel) Feat() *Features { return &s.feat }

// StepPlain is stepPlain, the generic step, on the features in Feat.
func (s *Kernel) StepPlain(st *samplers.State) { s.stepPlain(st) }

// StepFusedExact is stepFusedExact, the fused exact step, on the features
// in Feat.
func (s *Kernel) StepFusedExact(st *samplers.State) { s.stepFusedExact(st) }

// NewMemory returns the kernel's memory (State.Aux) holding the noise ξ of
// a step.
func NewMemory(noise []float64) any { return &memory{noise: noise} }

// Terms returns Γ_p, Γ'_θ and the noise ξ of the last step of st.
func Terms(st *samplers.State) (gammaP, gammaThet, noise []float64) {
	m := mem(st)
	return m.gammaP, m.gammaThet, m.noise
}

// CentralDiff is centralDiff: central differences of a coordinate-wise f.
func CentralDiff(f func(x, out []float64), x, out []float64) { centralDiff(f, x, out) }

// GammaConfig has every term of Γ switched on: α·Q² in D, an offset, and a
// clamp on D far enough away not to bind, with state-dependent networks
// of one hidden layer of 10.
func GammaConfig(gamma Gamma) Config {
	cfg := Config{Settings: Settings{StepSize: 0.01, Alpha: 0.3, Beta: 0.5, C: 0.2, ClampQ: 5, DMax: 50, DScale: 1.5,
		EnergyScale: -0.5, GradScale: 2, MomentumScale: 1.3, Gamma: gamma}}
	stateDependentNets(&cfg)
	return cfg
}

// stateDependentNets are random networks scaled up so that Q_f and D_f
// vary strongly with the energy and the momentum.
func stateDependentNets(cfg *Config) {
	rng := rand.New(rand.NewPCG(5, 8))
	cfg.RandomNets([]int{10}, []int{10}, rng)
	for _, w := range [][]float64{cfg.Q.W[0], cfg.D.W[0]} {
		for i := range w {
			w[i] *= 3
		}
	}
}
