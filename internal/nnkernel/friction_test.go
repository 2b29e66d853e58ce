package nnkernel

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// noisyNormal is the standard normal in d dimensions whose gradient, for
// each chain and coordinate, carries independent noise of variance v (a
// minibatch gradient's, with no estimate of it).
type noisyNormal struct {
	d, k int
	v    float64
}

func (g noisyNormal) Dim() int          { return g.d }
func (g noisyNormal) Chains() int       { return g.k }
func (g noisyNormal) DataSize() float64 { return 1 }
func (g noisyNormal) Evaluate(rng *rand.Rand, theta []float64, e *samplers.Eval) error {
	sd := math.Sqrt(g.v)
	clear(e.U)
	clear(e.Prior)
	clear(e.PriorGrad)
	for i, x := range theta {
		e.U[i%g.k] += x * x / 2
		e.Grad[i] = x
		if sd > 0 {
			e.Grad[i] += sd * rng.NormFloat64()
		}
	}
	return nil
}

// TestAdaptiveFrictionSettings: κ is 0 (off) or in (0, 1), needs the
// exponential friction step, and Update, meta-training's step, refuses it.
func TestAdaptiveFrictionSettings(t *testing.T) {
	target := samplerstest.StandardTarget(t, 2)
	for _, tc := range []struct {
		kappa    float64
		friction Friction
		want     string // "" for valid
	}{
		{0, FrictionExplicit, ""}, {0.001, "", ""}, {0.5, FrictionExponential, ""},
		{1, "", "rate in (0, 1)"}, {-0.1, "", "rate in (0, 1)"}, {math.NaN(), "", "rate in (0, 1)"},
		{0.01, FrictionExplicit, "needs the exponential friction step"},
	} {
		cfg := DefaultConfig(0.05, rand.New(rand.NewPCG(1, 1)))
		cfg.AdaptiveFriction, cfg.Friction = tc.kappa, tc.friction
		s, err := New(target, cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("κ = %v, %q: refused: %v", tc.kappa, tc.friction, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("κ = %v, %q: error %v, want %q", tc.kappa, tc.friction, err, tc.want)
		}
		if err != nil || tc.kappa == 0 {
			continue
		}
		v := make([]float64, 2*2)
		f := &Features{U: v, DU: v, GFeat: v}
		if err := s.Update(slices.Clone(v), slices.Clone(v), f, v, v); err == nil || !strings.Contains(err.Error(), "no adaptive friction") {
			t.Errorf("κ = %v: Update gave %v, want it refused", tc.kappa, err)
		}
	}
}

// TestAdaptiveFrictionHoldsTheTemperature: NNSGHMC with Q_f = 1 and D_f = 1
// (networks that output 0; the SGHMC of the complete recipe) on a standard
// normal whose gradient carries noise of variance V = 10 runs hot (p² and
// the positions' θ² about 1.5). With the adaptive friction the positions'
// θ² is the noise-free sampler's, within five Monte-Carlo standard errors,
// and p² is 2/(1 + c*), the stationary p² of the friction step whose
// damping c* the noise balances, 2·(1 − c*) = 2·(1 − e^{−η}) + η²·V, the
// injected noise and the gradient's (1.078 here); on the noise-free
// target it changes neither. Through the fused and the generic paths, with
// finite-difference and exact Γ. With the adaptation taken out of the step
// (ζ left at 0) the noisy runs stay hot; with ζ following p² − 1 instead of
// p² − 2/(1 + c), θ² is 3 % low. With -short, the fused path with exact Γ
// only.
func TestAdaptiveFrictionHoldsTheTemperature(t *testing.T) {
	const d, k, eta, v, kappa = 10, 50, 0.1, 10.0, 0.005
	const burn, steps, batch = 1000, 4000, 200
	// run returns the batch means, over chains and coordinates, of p² and
	// of θ² after the burn-in.
	run := func(gamma Gamma, fast bool, noise, kappa float64) (p2, x2 []float64) {
		fusedFastPath = fast
		defer func() { fusedFastPath = true }()
		cfg := GammaConfig(gamma)
		cfg.StepSize, cfg.Alpha, cfg.Beta, cfg.C, cfg.DScale, cfg.EnergyScale = eta, 0, 1, 1, 0, 1
		cfg.AdaptiveFriction = kappa
		for _, w := range [][][]float64{cfg.Q.W, cfg.Q.B, cfg.D.W, cfg.D.B} {
			for _, l := range w {
				clear(l)
			}
		}
		s, err := New(noisyNormal{d: d, k: k, v: noise}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 11))
		theta0 := make([]float64, d*k)
		for i := range theta0 {
			theta0[i] = rng.NormFloat64()
		}
		st, err := s.Init(theta0, nil)
		if err != nil {
			t.Fatal(err)
		}
		sp, sx := 0.0, 0.0
		for i := 1; i <= burn+steps; i++ {
			if err := s.Step(rng, st); err != nil {
				t.Fatal(err)
			}
			if i <= burn {
				continue
			}
			for j := range st.P {
				sp += st.P[j] * st.P[j]
				sx += st.Theta[j] * st.Theta[j]
			}
			if (i-burn)%batch == 0 {
				p2 = append(p2, sp/float64(batch*d*k))
				x2 = append(x2, sx/float64(batch*d*k))
				sp, sx = 0, 0
			}
		}
		return p2, x2
	}
	meanSE := func(x []float64) (float64, float64) {
		m, sd := stat.MeanStdDev(x, nil)
		return m, sd / math.Sqrt(float64(len(x)))
	}
	gammas, paths := []Gamma{GammaFD, GammaExact}, []bool{true, false}
	if testing.Short() { // the race pass: the fused path, which runs on goroutines
		gammas, paths = gammas[1:], paths[:1]
	}
	for _, gamma := range gammas {
		for _, fast := range paths {
			_, x0 := run(gamma, fast, 0, 0)
			mx0, sx0 := meanSE(x0)
			for _, tc := range []struct {
				noise, kappa float64
			}{{v, 0}, {v, kappa}, {0, kappa}} {
				p2, x2 := run(gamma, fast, tc.noise, tc.kappa)
				mp, sp := meanSE(p2)
				mx, sx := meanSE(x2)
				t.Logf("%s, fused %v, noise %v, κ %v: p² %.4f ± %.4f, θ² %.4f ± %.4f (noise-free, no adaptation: θ² %.4f ± %.4f)",
					gamma, fast, tc.noise, tc.kappa, mp, sp, mx, sx, mx0, sx0)
				if tc.kappa == 0 {
					if mp < 1.3 || mx < 1.3 {
						t.Errorf("%s, fused %v: without adaptation the noisy target gives p² %.4f and θ² %.4f, want both above 1.3", gamma, fast, mp, mx)
					}
					continue
				}
				// the damping c* that the noise balances, and its p²
				c := 1 - (2*(1-math.Exp(-eta))+eta*eta*tc.noise)/2
				want := 2 / (1 + c)
				if math.Abs(mp-want) > 5*sp+0.01 || math.Abs(mx-mx0) > 5*math.Hypot(sx, sx0) {
					t.Errorf("%s, fused %v, noise %v, κ %v: p² %.4f ± %.4f and θ² %.4f ± %.4f, want p² %.4f and the noise-free sampler's θ² %.4f ± %.4f",
						gamma, fast, tc.noise, tc.kappa, mp, sp, mx, sx, want, mx0, sx0)
				}
			}
		}
	}
}
