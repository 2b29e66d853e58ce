package nnkernel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// TestConfigRefusesAZeroDiffusion is the regression test of New
// accepting settings whose D_f can only be 0 (α, s_D and c all 0, as in
// the zero Config): no friction and no noise, not a sampler. Any one of
// the three makes it one again.
func TestConfigRefusesAZeroDiffusion(t *testing.T) {
	target := samplerstest.StandardTarget(t, 2)
	valid := DefaultConfig(0.05, rand.New(rand.NewPCG(1, 1)))
	noDiffusion := valid
	noDiffusion.Alpha, noDiffusion.DScale, noDiffusion.C = 0, 0, 0
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" for valid
	}{
		{"zero value", Config{}, "the zero Config is not a sampler (no step size, no networks, D_f = 0); start from DefaultConfig"},
		{"alpha, d_scale and c all 0", noDiffusion, "alpha, d_scale and c all 0 has D_f = 0, no friction and no noise: not a sampler"},
		{"d_scale only", func() Config { c := noDiffusion; c.DScale = 1; return c }(), ""},
		{"alpha only", func() Config { c := noDiffusion; c.Alpha = 0.2; return c }(), ""},
		{"c only", func() Config { c := noDiffusion; c.C = 0.5; return c }(), ""},
		{"DefaultConfig", valid, ""},
	} {
		_, err := New(target, tc.cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestDefaultConfigSamples checks DefaultConfig's settings (the
// paper's toy: f_Q clamped to ±5, D_f = |f_D| clamped to [0, 5], raw
// inputs, exact Γ, 40×40 networks) and that, with its untrained networks,
// it samples a 2-D Gaussian: 200 chains started from exact draws (momenta
// too) stay finite and keep its mean and unit variances, roughly.
func TestDefaultConfigSamples(t *testing.T) {
	cfg := DefaultConfig(0.05, rand.New(rand.NewPCG(2, 3)))
	want := Config{
		Settings: Settings{StepSize: 0.05, ClampQ: 5, DMax: 5, DScale: 1, EnergyScale: 1, GradScale: 1, MomentumScale: 1, Gamma: GammaExact},
		Nets:     Nets{Q: cfg.Q, D: cfg.D},
	}
	if cfg != want || cfg.Q == nil || cfg.D == nil || len(cfg.Q.W) != 3 || len(cfg.D.W) != 3 || cfg.Q.Inputs != 2 || cfg.D.Inputs != 3 {
		t.Fatalf("DefaultConfig = %+v", cfg)
	}
	const k, steps = 200, 300
	s, err := New(samplerstest.StandardTarget(t, k), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 5))
	theta0, p0 := make([]float64, 2*k), make([]float64, 2*k)
	for j := range theta0 {
		theta0[j], p0[j] = samplerstest.StandardMean[j/k]+rng.NormFloat64(), rng.NormFloat64()
	}
	st, err := s.Init(theta0, p0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < steps; i++ {
		if err := s.Step(rng, st); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		m, v := 0.0, 0.0
		for c := 0; c < k; c++ {
			m += st.Theta[i*k+c] / k
		}
		for c := 0; c < k; c++ {
			d := st.Theta[i*k+c] - m
			v += d * d / (k - 1)
		}
		if math.Abs(m-samplerstest.StandardMean[i]) > 0.3 || v < 0.6 || v > 1.5 {
			t.Errorf("coordinate %d: mean %.3f (want %v), variance %.3f (want 1) over %d chains after %d steps", i, m, samplerstest.StandardMean[i], v, k, steps)
		}
	}
}
