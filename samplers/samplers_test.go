package samplers_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// oneStep returns the state after one step from θ = samplerstest.Theta0
// and momenta p0 of the kernel that newKernel makes on the standard target
// of 2 chains, with the generator seeded by seed.
func oneStep(t *testing.T, newKernel func(samplers.Target) (samplers.Kernel, error), p0 []float64, seed uint64) *samplers.State {
	t.Helper()
	k, err := newKernel(samplerstest.StandardTarget(t, 2))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := k.Init(samplerstest.Theta0, p0)
	if err := k.Step(rand.New(rand.NewPCG(seed, 0)), st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestOneStepMatchesHandComputation(t *testing.T) {
	const eta, seed = 0.1, 42
	xi := samplerstest.Normals(seed, 4) // the noise the samplers draw, in coordinate order
	g := samplerstest.GradAt(samplerstest.Theta0)

	t.Run("SGLD", func(t *testing.T) {
		st := oneStep(t, func(tg samplers.Target) (samplers.Kernel, error) {
			return samplers.NewSGLD(tg, samplers.SGLDSettings{StepSize: samplers.Constant(eta)})
		}, nil, seed)
		want := make([]float64, 4)
		for i := range want {
			want[i] = samplerstest.Theta0[i] - eta*g[i] + math.Sqrt(2*eta)*xi[i]
		}
		samplerstest.AssertClose(t, "θ", st.Theta, want)
	})

	t.Run("SGHMC", func(t *testing.T) {
		const c = 2.0
		st := oneStep(t, func(tg samplers.Target) (samplers.Kernel, error) {
			return samplers.NewSGHMC(tg, samplers.SGHMCSettings{StepSize: samplers.Constant(eta), Friction: c})
		}, samplerstest.P0, seed)
		wantP, wantT := make([]float64, 4), make([]float64, 4)
		for i := range wantP {
			wantP[i] = samplerstest.P0[i] - eta*g[i] - eta*c*samplerstest.P0[i] + math.Sqrt(2*eta*c)*xi[i]
			wantT[i] = samplerstest.Theta0[i] + eta*wantP[i]
		}
		samplerstest.AssertClose(t, "p", st.P, wantP)
		samplerstest.AssertClose(t, "θ", st.Theta, wantT)
	})

	t.Run("pSGLD two steps", func(t *testing.T) {
		cfg := samplers.PSGLDSettings{StepSize: samplers.Constant(eta), Decay: 0.9, Lambda: 0.01}
		s, err := samplers.NewPSGLD(samplerstest.StandardTarget(t, 2), cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := s.Init(samplerstest.Theta0, nil)
		rng := rand.New(rand.NewPCG(seed, 0))
		xi2 := samplerstest.Normals(seed, 8)
		theta, v := append([]float64(nil), samplerstest.Theta0...), make([]float64, 4)
		for step := 0; step < 2; step++ {
			if err := s.Step(rng, st); err != nil {
				t.Fatal(err)
			}
			g := samplerstest.GradAt(theta)
			for i := range theta {
				// no prior term and N = 1: ḡ = ∇U
				if step == 0 {
					v[i] = g[i] * g[i]
				} else {
					v[i] = 0.9*v[i] + 0.1*g[i]*g[i]
				}
				pre := 1 / (0.01 + math.Sqrt(v[i]))
				theta[i] += -eta*pre*g[i] + math.Sqrt(2*eta*pre)*xi2[4*step+i]
			}
			samplerstest.AssertClose(t, "θ", st.Theta, theta)
		}
	})
}

// TestSameSeedGivesBitIdenticalChains: every sampler of the package, on a
// target with injected gradient noise, gives the same chains bit for bit
// from the same seed. (NNSGHMC's test is in package samplers/nnsghmc.)
func TestSameSeedGivesBitIdenticalChains(t *testing.T) {
	samplerstest.SameSeedGivesBitIdenticalChains(t, stateKernels)
}

func TestDivergenceIsReported(t *testing.T) {
	s, err := samplers.NewSGHMC(samplerstest.StandardTarget(t, 2), samplers.SGHMCSettings{StepSize: samplers.Constant(50), Friction: 1})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := s.Init(samplerstest.Theta0, nil)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 2000; i++ {
		if err = s.Step(rng, st); err != nil {
			break
		}
	}
	var de *samplers.DivergenceError
	if !errors.As(err, &de) || !errors.Is(err, samplers.ErrDiverged) {
		t.Fatalf("a step size of 50 should diverge, got %v", err)
	}
	if de.Chain < 0 || de.Chain > 1 || de.Step < 1 {
		t.Errorf("divergence at chain %d, step %d", de.Chain, de.Step)
	}
}

// TestDivergenceNamesTheBadStatesStep is the regression test of divergence
// messages numbered one step below the outputs: the state after n steps is
// step n in cmd/sample's metrics.csv, and a step that makes it bad must
// report step n, not n−1.
func TestDivergenceNamesTheBadStatesStep(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func() (samplers.Kernel, error)
	}{
		{"SGLD", func() (samplers.Kernel, error) {
			return samplers.NewSGLD(samplerstest.StandardTarget(t, 2), samplers.SGLDSettings{StepSize: samplers.Constant(50)})
		}},
		{"SGHMC", func() (samplers.Kernel, error) {
			return samplers.NewSGHMC(samplerstest.StandardTarget(t, 2), samplers.SGHMCSettings{StepSize: samplers.Constant(50), Friction: 1})
		}},
		{"SGD-M", func() (samplers.Kernel, error) {
			return samplers.NewSGDM(samplerstest.StandardTarget(t, 2), samplers.SGDMSettings{StepSize: samplers.Constant(50), Momentum: 0.9})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.make()
			if err != nil {
				t.Fatal(err)
			}
			st, _ := s.Init(samplerstest.Theta0, nil)
			rng := rand.New(rand.NewPCG(1, 1))
			calls := 0
			for calls < 2000 && err == nil {
				calls++
				err = s.Step(rng, st)
			}
			var de *samplers.DivergenceError
			if !errors.As(err, &de) {
				t.Fatalf("no divergence in %d steps: %v", calls, err)
			}
			want := calls // the state this call produced is bad
			if de.What == "energy" || de.What == "energy gradient" {
				want = calls - 1 // the state it started from is bad
			} else if samplers.Bounded(st.Theta) && samplers.Bounded(st.P) {
				t.Errorf("%v, but the state after %d steps is bounded", err, calls)
			}
			if de.Step != want || de.Step != st.Steps {
				t.Errorf("%v on call %d of Step (State.Steps %d): want step %d", err, calls, st.Steps, want)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("at step %d:", want)) {
				t.Errorf("message %q does not name step %d", err, want)
			}
		})
	}
}

// TestInvalidSettingsAreRejected: the constructors refuse settings that
// make no sampler, Init refuses bad positions, and Step refuses a schedule
// that gives a step size that is not a positive number. (NNSGHMC's
// settings are tested in package samplers/nnsghmc.)
func TestInvalidSettingsAreRejected(t *testing.T) {
	target := samplerstest.StandardTarget(t, 2)
	sgld := func(s samplers.Schedule) error {
		_, err := samplers.NewSGLD(target, samplers.SGLDSettings{StepSize: s})
		return err
	}
	tests := []struct {
		name string
		make func() error
	}{
		{"SGLD zero step", func() error { return sgld(samplers.Constant(0)) }},
		{"SGLD NaN step", func() error { return sgld(samplers.Constant(math.NaN())) }},
		{"SGLD no schedule", func() error { return sgld(nil) }},
		{"SGHMC negative friction", func() error {
			_, err := samplers.NewSGHMC(target, samplers.SGHMCSettings{StepSize: samplers.Constant(0.1), Friction: -1})
			return err
		}},
		{"SGHMC zero settings", func() error { _, err := samplers.NewSGHMC(target, samplers.SGHMCSettings{}); return err }},
		{"pSGLD decay 1", func() error {
			_, err := samplers.NewPSGLD(target, samplers.PSGLDSettings{StepSize: samplers.Constant(0.1), Decay: 1, Lambda: 1e-5})
			return err
		}},
		{"pSGLD zero lambda", func() error {
			_, err := samplers.NewPSGLD(target, samplers.PSGLDSettings{StepSize: samplers.Constant(0.1), Decay: 0.99})
			return err
		}},
		{"Adam β₁ 1", func() error {
			_, err := samplers.NewAdam(target, samplers.AdamSettings{StepSize: samplers.Constant(0.1), Beta1: 1, Beta2: 0.999, Epsilon: 1e-8})
			return err
		}},
		{"Adam NaN β₂", func() error {
			_, err := samplers.NewAdam(target, samplers.AdamSettings{StepSize: samplers.Constant(0.1), Beta1: 0.9, Beta2: math.NaN(), Epsilon: 1e-8})
			return err
		}},
		{"Adam zero settings", func() error { _, err := samplers.NewAdam(target, samplers.AdamSettings{}); return err }},
		{"SGD-M momentum 1", func() error {
			_, err := samplers.NewSGDM(target, samplers.SGDMSettings{StepSize: samplers.Constant(0.1), Momentum: 1})
			return err
		}},
		{"SGD-M no schedule", func() error { _, err := samplers.NewSGDM(target, samplers.SGDMSettings{Momentum: 0.9}); return err }},
		{"Santa zero settings", func() error { _, err := samplers.NewSanta(target, samplers.SantaSettings{}); return err }},
		{"Santa negative exploration", func() error {
			s := samplers.DefaultSantaSettings()
			s.Explore = -1
			_, err := samplers.NewSanta(target, s)
			return err
		}},
		{"Santa negative annealing", func() error {
			s := samplers.DefaultSantaSettings()
			s.Anneal = -0.5
			_, err := samplers.NewSanta(target, s)
			return err
		}},
		{"Santa infinite alpha0", func() error {
			s := samplers.DefaultSantaSettings()
			s.Alpha0 = math.Inf(1)
			_, err := samplers.NewSanta(target, s)
			return err
		}},
		{"Santa decay 1", func() error {
			s := samplers.DefaultSantaSettings()
			s.Decay = 1
			_, err := samplers.NewSanta(target, s)
			return err
		}},
		{"nil target", func() error { _, err := samplers.NewSGLD(nil, samplers.DefaultSGLDSettings()); return err }},
		{"wrong number of positions", func() error {
			s, _ := samplers.NewSGLD(target, samplers.DefaultSGLDSettings())
			_, err := s.Init([]float64{1, 2, 3}, nil)
			return err
		}},
		{"non-finite position", func() error {
			s, _ := samplers.NewSGLD(target, samplers.DefaultSGLDSettings())
			_, err := s.Init([]float64{1, 2, math.Inf(1), 3}, nil)
			return err
		}},
	}
	for _, tc := range tests {
		if err := tc.make(); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	for name, build := range map[string]func() error{
		"SGLD":  func() error { _, err := samplers.NewSGLD(target, samplers.DefaultSGLDSettings()); return err },
		"SGHMC": func() error { _, err := samplers.NewSGHMC(target, samplers.DefaultSGHMCSettings()); return err },
		"pSGLD": func() error { _, err := samplers.NewPSGLD(target, samplers.DefaultPSGLDSettings()); return err },
		"Adam":  func() error { _, err := samplers.NewAdam(target, samplers.DefaultAdamSettings()); return err },
		"SGD-M": func() error { _, err := samplers.NewSGDM(target, samplers.DefaultSGDMSettings()); return err },
		"Santa": func() error { _, err := samplers.NewSanta(target, samplers.DefaultSantaSettings()); return err },
	} {
		if err := build(); err != nil {
			t.Errorf("%s: the default settings are rejected: %v", name, err)
		}
	}
}

// TestScheduleIsCheckedAtEveryStep: a schedule whose step size turns bad
// after the first steps is refused at the step that would use it, naming
// it, and leaves the state where it was.
func TestScheduleIsCheckedAtEveryStep(t *testing.T) {
	s, err := samplers.NewSGLD(samplerstest.StandardTarget(t, 2), samplers.SGLDSettings{StepSize: samplers.Warmup(2, 0.1, -1)})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := s.Init(samplerstest.Theta0, nil)
	rng := rand.New(rand.NewPCG(1, 1))
	for range 2 {
		if err := s.Step(rng, st); err != nil {
			t.Fatal(err)
		}
	}
	before := append([]float64(nil), st.Theta...)
	err = s.Step(rng, st)
	if err == nil || !strings.Contains(err.Error(), "step size -1 at step 3") {
		t.Errorf("step 3: %v, want the step size -1 of step 3 refused", err)
	}
	if st.Steps != 2 || !slices.Equal(st.Theta, before) {
		t.Errorf("the refused step moved the state to step %d", st.Steps)
	}
}
