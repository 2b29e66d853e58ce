package nnkernel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// priorTarget is a Gaussian energy with a separate prior term, so that u's
// prior correction (TrainDim) enters the features: per chain
// Ũ = ½·a·|θ|² + U_prior with U_prior = ½·b·|θ|². Its data size keeps the
// features u = s_u·Ũ/N of order 0.1, where the networks do not saturate.
type priorTarget struct{ d, k int }

func (t priorTarget) Dim() int          { return t.d }
func (t priorTarget) Chains() int       { return t.k }
func (t priorTarget) DataSize() float64 { return 4000 }
func (t priorTarget) Evaluate(_ *rand.Rand, theta []float64, e *samplers.Eval) error {
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

// TestFusedStepsMatchPlain runs the sampler along a chain twice, through
// the fused step and through the generic one (stepPlain on precomputed
// features), and requires the same states, Γ and finite-difference memory
// bit for bit, with finite-difference and with exact Γ, with and without
// the thermostat and the adaptive friction. The problem has more coordinates than one span, a span
// boundary inside a chain's coordinates, a last span of odd length,
// binding clamps on f_Q and on D_f, a prior correction and, with the
// thermostat, coordinates that it cools. The fused step evaluates its
// networks with coordnet's AVX2 kernels where the processor has them, and
// with its Go kernels under the build tag purego: run the test both ways.
func TestFusedStepsMatchPlain(t *testing.T) {
	target := priorTarget{d: 1301, k: 7}
	n := target.d * target.k
	if n < 2*fusedSpan || fusedSpan%target.k == 0 || n%2 == 0 {
		t.Fatalf("the test needs several spans that cut through the chains and an odd last span: %d coordinates, spans of %d", n, fusedSpan)
	}
	for _, c := range []struct {
		gamma      Gamma
		fused      int // steps that take the fused path, of 6
		thermostat float64
		adaptive   float64 // the adaptive friction's κ
	}{{GammaFD, 5, 0, 0}, {GammaExact, 6, 0, 0}, {GammaAuthors, 6, 0, 0}, {GammaFD, 5, 1.02, 0}, {GammaExact, 6, 1.02, 0},
		{GammaFD, 5, 1.02, 0.05}, {GammaExact, 6, 0, 0.05}} {
		t.Run(fmt.Sprintf("%s thermostat %v adaptive %v", c.gamma, c.thermostat, c.adaptive), func(t *testing.T) {
			cfg := GammaConfig(c.gamma)
			cfg.ClampQ, cfg.DMax, cfg.TrainDim, cfg.Thermostat, cfg.AdaptiveFriction = 1.5, 2.5, 900, c.thermostat, c.adaptive
			// a momentum input outside its watched bounds in the second
			// span, gradient inputs outside theirs from the first
			// coordinates on, and two positions that run away in the
			// second and third spans after the sixth step
			const planted = fusedSpan + 5
			runaway := []int{fusedSpan + 17, 2*fusedSpan + 3}
			run := func(fast bool) (*samplers.State, *Kernel, int, []Outlier, error) {
				fusedFastPath = fast
				defer func() { fusedFastPath = true }()
				s, err := New(target, cfg)
				if err != nil {
					t.Fatal(err)
				}
				s.Watch(&Bounds{-6, 6}, &Bounds{-1e-3, 2e-3})
				rng := rand.New(rand.NewPCG(4, 2))
				theta, p := make([]float64, n), make([]float64, n)
				for i := range theta {
					theta[i], p[i] = 2*rng.NormFloat64(), rng.NormFloat64()
				}
				p[planted] = 10
				st, err := s.Init(theta, p)
				if err != nil {
					t.Fatal(err)
				}
				fused := 0
				var far []Outlier
				for step := 0; step < 6; step++ {
					if s.canFuse(mem(st)) || s.canFuseExact() {
						fused++
					}
					if err := s.Step(rng, st); err != nil {
						t.Fatal(err)
					}
					mom, grad := s.Far()
					far = append(far, mom, grad)
				}
				m := mem(st)
				after := &samplers.State{Theta: slices.Clone(st.Theta), P: slices.Clone(st.P), Eval: st.Eval, Steps: st.Steps,
					Aux: &memory{started: m.started, u: slices.Clone(m.u), p: slices.Clone(m.p), q: slices.Clone(m.q), qhat: slices.Clone(m.qhat), temp: slices.Clone(m.temp), zeta: slices.Clone(m.zeta)}}
				for _, i := range runaway {
					after.Theta[i] = 2e30
				}
				return st, s, fused, far, s.Step(rng, after)
			}
			fused, _, nFused, farFused, errFused := run(true)
			plain, ps, nPlain, farPlain, errPlain := run(false)
			if nFused != c.fused || nPlain != 0 {
				t.Fatalf("%d fused steps with the fast path on (want %d), %d with it off", nFused, c.fused, nPlain)
			}
			for i := range farPlain {
				if farFused[i] != farPlain[i] {
					t.Fatalf("step %d: %s input outside its bounds: fused step %+v, generic step %+v", i/2+1, [2]string{"momentum", "gradient"}[i%2], farFused[i], farPlain[i])
				}
				// (the adaptive friction damps the planted momentum within
				// bounds after the first steps)
				if i%2 == 0 && farPlain[i].Coord != planted && (c.adaptive == 0 || i == 0) || i%2 == 1 && farPlain[i].Coord < 0 {
					t.Fatalf("step %d: %s input outside its bounds at %+v, want the momentum's at %d and a gradient's", i/2+1, [2]string{"momentum", "gradient"}[i%2], farPlain[i], planted)
				}
			}
			var want error = &samplers.DivergenceError{Step: 7, Chain: runaway[0] % target.k, What: "position"}
			if errFused == nil || errPlain == nil || errFused.Error() != errPlain.Error() || errPlain.Error() != want.Error() {
				t.Fatalf("after the runaway positions: fused step %v, generic step %v, want %v", errFused, errPlain, want)
			}

			// the clamps must bind somewhere: at the last momenta, with the
			// last step's features
			s := &Kernel{cfg: cfg}
			q, dpart := make([]float64, n), make([]float64, n)
			s.evalQ(ps.feat.U, plain.P, q)
			s.evalDPart(ps.feat.U, plain.P, ps.feat.GFeat, dpart)
			var clampedQ, clampedD int
			for i := range q {
				if s.gate[i] == 0 {
					clampedQ++
				}
				if _, inside := s.diffusion(q[i], dpart[i]); !inside {
					clampedD++
				}
			}
			if clampedQ == 0 || clampedD == 0 || clampedQ > n/2 || clampedD > n/2 {
				t.Fatalf("the test needs both clamps to bind on some coordinates, not most: f_Q on %d, D_f on %d of %d", clampedQ, clampedD, n)
			}
			if c.thermostat > 0 {
				cooled := 0
				for _, temp := range mem(plain).temp {
					if cfg.cooling(temp) < 1 {
						cooled++
					}
				}
				if cooled == 0 || cooled > n/2 {
					t.Fatalf("the test needs the thermostat to cool some coordinates, not most: it cools %d of %d", cooled, n)
				}
			}

			vectors := []struct {
				name        string
				fused, want []float64
			}{
				{"θ", fused.Theta, plain.Theta}, {"p", fused.P, plain.P},
				{"Γ_p", mem(fused).gammaP, mem(plain).gammaP}, {"Γ'_θ", mem(fused).gammaThet, mem(plain).gammaThet},
			}
			if c.gamma == GammaFD {
				vectors = append(vectors, []struct {
					name        string
					fused, want []float64
				}{
					{"u memory", mem(fused).u, mem(plain).u}, {"p memory", mem(fused).p, mem(plain).p},
					{"Q memory", mem(fused).q, mem(plain).q}, {"Q̂ memory", mem(fused).qhat, mem(plain).qhat},
				}...)
			}
			if c.thermostat > 0 {
				vectors = append(vectors, struct {
					name        string
					fused, want []float64
				}{"temperatures", mem(fused).temp, mem(plain).temp})
			}
			if c.adaptive > 0 {
				vectors = append(vectors, struct {
					name        string
					fused, want []float64
				}{"ζ", mem(fused).zeta, mem(plain).zeta})
			}
			for _, v := range vectors {
				if len(v.fused) != n || len(v.want) != n {
					t.Fatalf("%s: lengths %d and %d, want %d", v.name, len(v.fused), len(v.want), n)
				}
				for i := range v.want {
					if v.fused[i] != v.want[i] {
						t.Fatalf("%s[%d]: fused step %v, generic step %v", v.name, i, v.fused[i], v.want[i])
					}
				}
			}
		})
	}
}

// frozenTarget evaluates priorTarget once and then leaves the evaluation
// as it is, so that a benchmark of Step times the kernel's own work.
type frozenTarget struct {
	priorTarget
	done bool
}

func (t *frozenTarget) Evaluate(rng *rand.Rand, theta []float64, e *samplers.Eval) error {
	if t.done {
		return nil
	}
	t.done = true
	return t.priorTarget.Evaluate(rng, theta, e)
}

// BenchmarkStepFD times Step with finite-difference Γ after its first step
// (the fused path) at mnist-nt's size (33,450 parameters, 20 chains) with
// the trained networks' shape, the target's evaluation left out (it is
// evaluated once): the noise, the update and the checks of its state and
// its inputs; without the thermostat and with it (τ = 16, cooling no
// coordinate: what it costs where the chains are at equilibrium), and
// with the adaptive friction κ = 0.001 beside τ = 3.
//
//	go test ./internal/nnkernel -run '^$' -bench StepFD -benchtime 50x -cpu 1,2
func BenchmarkStepFD(b *testing.B) {
	for _, c := range []struct{ tau, kappa float64 }{{0, 0}, {16, 0}, {3, 0.001}} {
		b.Run(fmt.Sprintf("thermostat=%v/adaptive=%v", c.tau, c.kappa), func(b *testing.B) {
			target := &frozenTarget{priorTarget: priorTarget{d: 33450, k: 20}}
			cfg := GammaConfig(GammaFD)
			cfg.ClampQ, cfg.DMax, cfg.TrainDim, cfg.Thermostat, cfg.AdaptiveFriction = 1.5, 2.5, 15910, c.tau, c.kappa
			s, err := New(target, cfg)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(4, 2))
			n := target.d * target.k
			theta, p := make([]float64, n), make([]float64, n)
			for i := range theta {
				theta[i], p[i] = 0.1*rng.NormFloat64(), rng.NormFloat64()
			}
			st, err := s.Init(theta, p)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Step(rng, st); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.Step(rng, st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
