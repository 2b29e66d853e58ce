package nnkernel

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// Two chains in 2-D, coordinate-major: chain 0 at (0.5, −1), chain 1 at
// (2, 0).
var (
	theta0 = []float64{0.5, 2, -1, 0}
	p0     = []float64{0.3, -0.2, 0.1, 0.4}
)

// toyConfig is the paper's toy settings (DefaultSettings) with step size
// eta and Γ computed by gamma, without networks.
func toyConfig(eta float64, gamma Gamma) Config {
	cfg := Config{Settings: DefaultSettings(eta)}
	cfg.Gamma = gamma
	return cfg
}

// TestSetStepSizeEqualsBuildingWithIt changes η of a built NNSGHMC and
// compares one step with a sampler built with the new η, for every Γ.
func TestSetStepSizeEqualsBuildingWithIt(t *testing.T) {
	for _, gamma := range []Gamma{GammaExact, GammaFD, GammaNone} {
		run := func(eta0, eta float64) []float64 {
			cfg := toyConfig(eta0, gamma)
			cfg.RandomNets([]int{6}, []int{6}, rand.New(rand.NewPCG(4, 4)))
			s, err := New(samplerstest.StandardTarget(t, 2), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SetStepSize(eta); err != nil {
				t.Fatal(err)
			}
			st, _ := s.Init(theta0, p0)
			if err := s.Step(rand.New(rand.NewPCG(1, 1)), st); err != nil {
				t.Fatal(err)
			}
			return append(st.Theta, st.P...)
		}
		a, b := run(0.3, 0.05), run(0.05, 0.05)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s: entry %d: %v after SetStepSize, %v when built with it", gamma, i, a[i], b[i])
			}
		}
	}
}

// TestInvalidConfigsAreRejected: New refuses settings that make no
// sampler, and accepts the toy's with networks.
func TestInvalidConfigsAreRejected(t *testing.T) {
	target := samplerstest.StandardTarget(t, 2)
	good := toyConfig(0.1, GammaExact)
	good.RandomNets([]int{3}, []int{3}, rand.New(rand.NewPCG(1, 1)))
	noNets := toyConfig(0.1, GammaExact)
	badGamma := good
	badGamma.Gamma = "approximate"
	negAlpha := good
	negAlpha.Alpha = -1
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"without networks", noNets},
		{"unknown gamma", badGamma},
		{"negative alpha", negAlpha},
	} {
		if _, err := New(target, tc.cfg); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if _, err := New(target, good); err != nil {
		t.Errorf("valid settings rejected: %v", err)
	}
	if _, err := New(nil, good); err == nil {
		t.Error("nil target: accepted")
	}
	s, _ := New(target, good)
	if err := s.SetStepSize(0); err == nil {
		t.Error("SetStepSize(0): accepted")
	}
}

// TestRestoreRefusesMismatchedMemory: a snapshot whose finite-difference
// memory does not fit the chains is refused (memory.Fits), one that fits
// is restored.
func TestRestoreRefusesMismatchedMemory(t *testing.T) {
	cfg := toyConfig(0.05, GammaFD)
	cfg.RandomNets([]int{3}, []int{3}, rand.New(rand.NewPCG(1, 1)))
	s, err := New(samplerstest.StandardTarget(t, 2), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, aux, want string
	}{
		{"fits", `{"started":true,"u":[1,1,2,2],"p":[0,0,0,0],"q":[1,1,1,1],"qhat":[1,1,1,1]}`, ""},
		{"not started", `{"started":false}`, ""},
		{"length", `{"started":true,"u":[1,2],"p":[0,0],"q":[1,1],"qhat":[1,1]}`, "u has 2 values, want 4"},
		{"lengths differ", `{"started":true,"u":[1,1,2,2],"p":[0,0,0,0],"q":[1,1,1,1]}`, "u, p, q and qhat have 4, 4, 4 and 0 values"},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := &samplers.Snapshot{Theta: theta0, P: p0, Aux: []byte(c.aux)}
			st, err := samplers.Restore(s, snap)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want %q", err, c.want)
			case c.want == "" && mem(st) == nil:
				t.Error("restored without NNSGHMC's memory")
			}
		})
	}
}
