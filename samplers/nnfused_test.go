package samplers

import (
	"math/rand/v2"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// priorTarget is a Gaussian energy with a separate prior term, so that u's
// prior correction (TrainDim) enters the features: per chain
// Ũ = ½·a·|θ|² + U_prior with U_prior = ½·b·|θ|².
type priorTarget struct{ d, k int }

func (t priorTarget) Dim() int          { return t.d }
func (t priorTarget) Chains() int       { return t.k }
func (t priorTarget) DataSize() float64 { return 40 }
func (t priorTarget) Evaluate(_ *rand.Rand, theta []float64, e *tasks.Eval) error {
	const a, b = 0.7, 0.2
	clear(e.U)
	clear(e.Prior)
	for j, x := range theta {
		c := j % t.k
		e.Prior[c] += 0.5 * b * x * x
		e.U[c] += 0.5 * (a + b) * x * x
		e.PriorGrad[j] = b * x
		e.Grad[j] = (a + b) * x
	}
	return nil
}

// TestFusedFDStepMatchesPlain runs the finite-difference sampler along a
// chain twice, through the fused step and through the generic one
// (stepPlain on precomputed features), and requires the same states, Γ and
// memory bit for bit. The problem has more coordinates than one span, a
// span boundary inside a chain's coordinates, a last span of odd length, binding clamps on f_Q and on
// D_f, and a prior correction.
func TestFusedFDStepMatchesPlain(t *testing.T) {
	target := priorTarget{d: 1301, k: 7}
	n := target.d * target.k
	if n < 2*fusedSpan || fusedSpan%target.k == 0 || n%2 == 0 {
		t.Fatalf("the test needs several spans that cut through the chains and an odd last span: %d coordinates, spans of %d", n, fusedSpan)
	}
	cfg := gammaConfig(GammaFD)
	cfg.ClampQ, cfg.DMax, cfg.TrainDim = 1.5, 2.5, 900
	run := func(fused bool) (*State, int) {
		fusedFastPath = fused
		defer func() { fusedFastPath = true }()
		s, err := NewNNSGHMC(target, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(4, 2))
		theta, p := make([]float64, n), make([]float64, n)
		for i := range theta {
			theta[i], p[i] = 2*rng.NormFloat64(), rng.NormFloat64()
		}
		st, err := s.Init(theta, p)
		if err != nil {
			t.Fatal(err)
		}
		fusedSteps := 0
		for step := 0; step < 6; step++ {
			if s.canFuse(st.nn) {
				fusedSteps++
			}
			if err := s.Step(rng, st); err != nil {
				t.Fatal(err)
			}
		}
		return st, fusedSteps
	}
	fused, nFused := run(true)
	plain, nPlain := run(false)
	if nFused != 5 || nPlain != 0 {
		t.Fatalf("%d fused steps with the fast path on (want 5: all but the first), %d with it off", nFused, nPlain)
	}

	// the clamps must bind somewhere at the last state
	s := &NNSGHMC{cfg: cfg}
	q, dpart := make([]float64, n), make([]float64, n)
	s.evalQ(plain.nn.u, plain.nn.p, q)
	s.evalDPart(plain.nn.u, plain.nn.p, make([]float64, n), dpart)
	var clampedQ, clampedD int
	for i := range q {
		if s.gate[i] == 0 {
			clampedQ++
		}
		if _, inside := s.diffusion(q[i], dpart[i]); !inside {
			clampedD++
		}
	}
	if clampedQ == 0 || clampedD == 0 {
		t.Fatalf("the test needs both clamps to bind: f_Q on %d, D_f on %d of %d coordinates", clampedQ, clampedD, n)
	}

	for _, c := range []struct {
		name        string
		fused, want []float64
	}{
		{"θ", fused.Theta, plain.Theta}, {"p", fused.P, plain.P},
		{"Γ_p", fused.nn.gammaP, plain.nn.gammaP}, {"Γ'_θ", fused.nn.gammaThet, plain.nn.gammaThet},
		{"u memory", fused.nn.u, plain.nn.u}, {"p memory", fused.nn.p, plain.nn.p},
		{"Q memory", fused.nn.q, plain.nn.q}, {"Q̂ memory", fused.nn.qhat, plain.nn.qhat},
	} {
		if len(c.fused) != n || len(c.want) != n {
			t.Fatalf("%s: lengths %d and %d, want %d", c.name, len(c.fused), len(c.want), n)
		}
		for i := range c.want {
			if c.fused[i] != c.want[i] {
				t.Fatalf("%s[%d]: fused step %v, generic step %v", c.name, i, c.fused[i], c.want[i])
			}
		}
	}
}
