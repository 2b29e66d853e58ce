package nnkernel

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// The thermostat's temperature τ is 0 (off) or above the equilibrium's 1,
// and only a sampling setting: Update, meta-training's step, refuses it.
func TestThermostatSettings(t *testing.T) {
	target := samplerstest.StandardTarget(t, 2)
	for _, tc := range []struct {
		tau  float64
		want string // "" for valid
	}{{0, ""}, {4, ""}, {1.01, ""}, {1, "thermostat must be 0 (off) or a temperature above 1"}, {0.5, "above 1"}, {-4, "above 1"}, {math.Inf(1), "above 1"}, {math.NaN(), "above 1"}} {
		cfg := DefaultConfig(0.05, rand.New(rand.NewPCG(1, 1)))
		cfg.Thermostat = tc.tau
		s, err := New(target, cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("τ = %v: refused: %v", tc.tau, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("τ = %v: error %v, want %q", tc.tau, err, tc.want)
		}
		if err != nil || tc.tau == 0 {
			continue
		}
		n := 2 * 2
		v := make([]float64, n)
		f := &Features{U: v, DU: v, GFeat: v}
		if err := s.Update(slices.Clone(v), slices.Clone(v), f, v, v); err == nil || !strings.Contains(err.Error(), "no thermostat") {
			t.Errorf("τ = %v: Update gave %v, want it refused", tc.tau, err)
		}
	}
}

// TestThermostatScalesQ: on coordinates held at a temperature T above τ,
// a step under the thermostat is the step of the sampler whose Q_f is
// τ/T times the networks' (β, the clamp and f_Q's output layer scaled),
// Γ included, so that each of its steps is a valid complete-recipe step.
// It runs three steps with every Γ, through the fused and the generic
// paths (with finite differences the first step takes central differences
// and the later ones the memory), resetting the temperatures before each.
// It fails if the factor is left out of any term: of Q_f in the update,
// D_f or Γ, or of the finite differences' quotients.
func TestThermostatScalesQ(t *testing.T) {
	const tau, hot = 2.0, 8.0
	factor := tau / hot
	target := priorTarget{d: 301, k: 3}
	n := target.d * target.k
	for _, gamma := range []Gamma{GammaFD, GammaExact, GammaAuthors} {
		for _, fast := range []bool{true, false} {
			cooled := GammaConfig(gamma)
			cooled.ClampQ, cooled.Thermostat = 1.5, tau
			scaled := cooled
			scaled.Thermostat, scaled.Beta, scaled.ClampQ = 0, factor*cooled.Beta, factor*cooled.ClampQ
			scaled.Q = scaleOutput(cooled.Q, factor)
			plain := cooled
			plain.Thermostat = 0
			run := func(cfg Config) ([]float64, []float64) {
				fusedFastPath = fast
				defer func() { fusedFastPath = true }()
				s, err := New(target, cfg)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(3, 9))
				theta, p := make([]float64, n), make([]float64, n)
				for i := range theta {
					theta[i], p[i] = 2*rng.NormFloat64(), 1.5*rng.NormFloat64()
				}
				st, err := s.Init(theta, p)
				if err != nil {
					t.Fatal(err)
				}
				for step := 0; step < 3; step++ {
					if m := mem(st); cfg.Thermostat > 0 {
						m.temp = slices.Repeat([]float64{hot}, n)
					}
					if err := s.Step(rng, st); err != nil {
						t.Fatal(err)
					}
				}
				return st.Theta, st.P
			}
			thetaC, pC := run(cooled)
			thetaS, pS := run(scaled)
			thetaP, pP := run(plain)
			worst, moved := 0.0, 0.0
			for i := range thetaC {
				for _, d := range [][3]float64{{thetaC[i], thetaS[i], thetaP[i]}, {pC[i], pS[i], pP[i]}} {
					worst = max(worst, math.Abs(d[0]-d[1])/(1+math.Abs(d[1])))
					moved = max(moved, math.Abs(d[0]-d[2]))
				}
			}
			if worst > 1e-9 || moved < 1e-3 {
				t.Errorf("%s, fused path %v: the thermostat's step is %.3g (relative) from the scaled Q_f's, and %.3g from the step without it (want at most 1e-9, and at least 1e-3)", gamma, fast, worst, moved)
			}
		}
	}
}

// scaleOutput returns a copy of w whose output is c times w's.
func scaleOutput(w *coordnet.Weights, c float64) *coordnet.Weights {
	out := *w
	last := len(w.W) - 1
	out.W = slices.Clone(w.W)
	out.B = slices.Clone(w.B)
	out.W[last], out.B[last] = slices.Clone(w.W[last]), slices.Clone(w.B[last])
	for i := range out.W[last] {
		out.W[last][i] *= c
	}
	for i := range out.B[last] {
		out.B[last][i] *= c
	}
	return &out
}
