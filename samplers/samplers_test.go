package samplers

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/gaussian"
)

// standardTarget is N(μ, I) in 2-D for k chains: U = ½|θ−μ|² + log 2π and
// ∇U = θ − μ, easy to evaluate by hand.
var standardMean = []float64{1, -1}

func standardTarget(t testing.TB, k int) tasks.Target {
	t.Helper()
	g, err := gaussian.New(standardMean, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := tasks.Compile(g, k, graph.Float64)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// linearNet returns a one-hidden-unit ReLU network f(x) = c·(a·x + b0) + d,
// linear wherever a·x + b0 > 0 (b0 is large, so everywhere the tests go).
func linearNet(a []float64, c, d float64) *coordnet.Weights {
	return &coordnet.Weights{
		Inputs: len(a), Hidden: []int{1}, Activation: coordnet.ReLU,
		W: [][]float64{append([]float64(nil), a...), {c}},
		B: [][]float64{{10}, {d}},
	}
}

// Two chains in 2-D, coordinate-major: chain 0 at (0.5, −1), chain 1 at
// (2, 0).
var (
	theta0 = []float64{0.5, 2, -1, 0}
	p0     = []float64{0.3, -0.2, 0.1, 0.4}
)

func gradAt(theta []float64) []float64 {
	g := make([]float64, 4)
	for i := 0; i < 2; i++ {
		for k := 0; k < 2; k++ {
			g[i*2+k] = theta[i*2+k] - standardMean[i]
		}
	}
	return g
}

func energyAt(theta []float64, k int) float64 {
	a, b := theta[k]-standardMean[0], theta[2+k]-standardMean[1]
	return 0.5*(a*a+b*b) + 0.5*math.Log(2*math.Pi) // the toy's constant ½·log(2π·det Σ)
}

func normals(seed uint64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0))
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

func assertClose(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9*(1+math.Abs(want[i])) {
			t.Errorf("%s[%d] = %.12g, want %.12g", what, i, got[i], want[i])
		}
	}
}

// oneStep returns the state after one step from θ = theta0 and momenta p0 of
// the kernel that newKernel makes on the standard target of 2 chains, with
// the generator seeded by seed.
func oneStep(t *testing.T, newKernel func(tasks.Target) (Kernel, error), p0 []float64, seed uint64) *State {
	t.Helper()
	k, err := newKernel(standardTarget(t, 2))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := k.Init(theta0, p0)
	if err := k.Step(rand.New(rand.NewPCG(seed, 0)), st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestOneStepMatchesHandComputation(t *testing.T) {
	const eta, seed = 0.1, 42
	xi := normals(seed, 4) // the noise the samplers draw, in coordinate order
	g := gradAt(theta0)

	t.Run("SGLD", func(t *testing.T) {
		st := oneStep(t, func(tg tasks.Target) (Kernel, error) { return NewSGLD(tg, eta) }, nil, seed)
		want := make([]float64, 4)
		for i := range want {
			want[i] = theta0[i] - eta*g[i] + math.Sqrt(2*eta)*xi[i]
		}
		assertClose(t, "θ", st.Theta, want)
	})

	t.Run("SGHMC", func(t *testing.T) {
		const c = 2.0
		st := oneStep(t, func(tg tasks.Target) (Kernel, error) { return NewSGHMC(tg, eta, c) }, p0, seed)
		wantP, wantT := make([]float64, 4), make([]float64, 4)
		for i := range wantP {
			wantP[i] = p0[i] - eta*g[i] - eta*c*p0[i] + math.Sqrt(2*eta*c)*xi[i]
			wantT[i] = theta0[i] + eta*wantP[i]
		}
		assertClose(t, "p", st.P, wantP)
		assertClose(t, "θ", st.Theta, wantT)
	})

	t.Run("pSGLD two steps", func(t *testing.T) {
		cfg := PSGLDConfig{StepSize: eta, Decay: 0.9, Lambda: 0.01}
		s, err := NewPSGLD(standardTarget(t, 2), cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := s.Init(theta0, nil)
		rng := rand.New(rand.NewPCG(seed, 0))
		xi2 := normals(seed, 8)
		theta, v := append([]float64(nil), theta0...), make([]float64, 4)
		for step := 0; step < 2; step++ {
			if err := s.Step(rng, st); err != nil {
				t.Fatal(err)
			}
			g := gradAt(theta)
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
			assertClose(t, "θ", st.Theta, theta)
		}
	})

	// NNSGHMC with networks linear where the chains are, so that Q_f, D_f
	// and every derivative in Γ is known in closed form:
	//   f_Q(u, p) = 0.5·(0.2u − 0.7p + 10) − 4,  ∂f_Q/∂u = 0.1, ∂f_Q/∂p = −0.35
	//   f_D(u, p, g) = 0.8·(0.1u + 0.3p − 0.2g + 10) − 7.5, positive here
	const beta, alpha, c0, sD = 0.3, 0.5, 0.2, 2.0
	fQ := func(u, p float64) float64 { return 0.5*(0.2*u-0.7*p+10) - 4 }
	fD := func(u, p, gr float64) float64 { return 0.8*(0.1*u+0.3*p-0.2*gr+10) - 7.5 }
	for _, gamma := range []Gamma{GammaExact, GammaFD, GammaNone} {
		t.Run("NNSGHMC "+string(gamma), func(t *testing.T) {
			cfg := NNConfig{
				NNSettings: NNSettings{StepSize: eta, Alpha: alpha, Beta: beta, C: c0, DScale: sD,
					EnergyScale: 1, GradScale: 1, MomentumScale: 1, Gamma: gamma},
				NNNets: NNNets{Q: linearNet([]float64{0.2, -0.7}, 0.5, -4),
					D: linearNet([]float64{0.1, 0.3, -0.2}, 0.8, -7.5)},
			}
			st := oneStep(t, func(tg tasks.Target) (Kernel, error) { return NewNNSGHMC(tg, cfg) }, p0, seed)
			wantP, wantT := make([]float64, 4), make([]float64, 4)
			for i := range wantP {
				u := energyAt(theta0, i%2) // N = 1, energy scale 1: u = U
				q := beta + fQ(u, p0[i])
				fd := fD(u, p0[i], g[i])
				d := alpha*q*q + sD*fd + c0
				gammaP := 0.1*g[i] + 2*alpha*q*(-0.35) + sD*0.8*0.3 // ∂Q/∂u·∂u/∂θ + ∂D/∂p
				gammaT := 0.35                                      // −∂Q/∂p
				if gamma == GammaNone {
					gammaP, gammaT = 0, 0
				}
				wantP[i] = p0[i] - eta*q*g[i] - eta*d*p0[i] + eta*gammaP + math.Sqrt(2*eta*d)*xi[i]
				wantT[i] = theta0[i] + eta*(beta+fQ(u, wantP[i]))*wantP[i] + eta*gammaT
			}
			assertClose(t, "p", st.P, wantP)
			assertClose(t, "θ", st.Theta, wantT)
		})
	}
}

func TestSameSeedGivesBitIdenticalChains(t *testing.T) {
	target := tasks.GradientNoise{Target: standardTarget(t, 3), Sigma: 1}
	cfg := toyConfig(0.05, GammaExact)
	cfg.RandomNets([]int{8}, []int{8}, rand.New(rand.NewPCG(1, 1)))
	run := func() []float64 {
		s, err := NewNNSGHMC(target, cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := s.Init(make([]float64, 6), nil)
		rng := rand.New(rand.NewPCG(7, 7))
		for i := 0; i < 20; i++ {
			if err := s.Step(rng, st); err != nil {
				t.Fatal(err)
			}
		}
		return append(st.Theta, st.P...)
	}
	a, b := run(), run()
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("entry %d differs: %v vs %v", i, a[i], b[i])
		}
	}
}

func toyConfig(eta float64, gamma Gamma) NNConfig {
	return NNConfig{NNSettings: NNSettings{StepSize: eta, ClampQ: 5, DMax: 5, DScale: 1, EnergyScale: 1, GradScale: 1, MomentumScale: 1, Gamma: gamma}}
}

func TestDivergenceIsReported(t *testing.T) {
	s, err := NewSGHMC(standardTarget(t, 2), 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := s.Init(theta0, nil)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 2000; i++ {
		if err = s.Step(rng, st); err != nil {
			break
		}
	}
	var de *DivergenceError
	if !errors.As(err, &de) || !errors.Is(err, ErrDiverged) {
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
		make func() (Kernel, error)
	}{
		{"SGLD", func() (Kernel, error) { return NewSGLD(standardTarget(t, 2), 50) }},
		{"SGHMC", func() (Kernel, error) { return NewSGHMC(standardTarget(t, 2), 50, 1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.make()
			if err != nil {
				t.Fatal(err)
			}
			st, _ := s.Init(theta0, nil)
			rng := rand.New(rand.NewPCG(1, 1))
			calls := 0
			for calls < 2000 && err == nil {
				calls++
				err = s.Step(rng, st)
			}
			var de *DivergenceError
			if !errors.As(err, &de) {
				t.Fatalf("no divergence in %d steps: %v", calls, err)
			}
			want := calls // the state this call produced is bad
			if de.What == "energy" || de.What == "energy gradient" {
				want = calls - 1 // the state it started from is bad
			} else if Bounded(st.Theta) && Bounded(st.P) {
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

func TestInvalidSettingsAreRejected(t *testing.T) {
	target := standardTarget(t, 2)
	good := toyConfig(0.1, GammaExact)
	good.RandomNets([]int{3}, []int{3}, rand.New(rand.NewPCG(1, 1)))
	noNets := toyConfig(0.1, GammaExact)
	badGamma := good
	badGamma.Gamma = "approximate"
	negAlpha := good
	negAlpha.Alpha = -1
	tests := []struct {
		name string
		make func() error
	}{
		{"SGLD zero step", func() error { _, err := NewSGLD(target, 0); return err }},
		{"SGLD NaN step", func() error { _, err := NewSGLD(target, math.NaN()); return err }},
		{"SGHMC negative friction", func() error { _, err := NewSGHMC(target, 0.1, -1); return err }},
		{"pSGLD decay 1", func() error {
			_, err := NewPSGLD(target, PSGLDConfig{StepSize: 0.1, Decay: 1, Lambda: 1e-5})
			return err
		}},
		{"NNSGHMC without networks", func() error { _, err := NewNNSGHMC(target, noNets); return err }},
		{"NNSGHMC unknown gamma", func() error { _, err := NewNNSGHMC(target, badGamma); return err }},
		{"NNSGHMC negative alpha", func() error { _, err := NewNNSGHMC(target, negAlpha); return err }},
		{"wrong number of positions", func() error {
			s, _ := NewSGLD(target, 0.1)
			_, err := s.Init([]float64{1, 2, 3}, nil)
			return err
		}},
		{"non-finite position", func() error {
			s, _ := NewSGLD(target, 0.1)
			_, err := s.Init([]float64{1, 2, math.Inf(1), 3}, nil)
			return err
		}},
	}
	for _, tc := range tests {
		if err := tc.make(); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if _, err := NewNNSGHMC(target, good); err != nil {
		t.Errorf("valid settings rejected: %v", err)
	}
}

// TestSetStepSizeEqualsBuildingWithIt changes η of a built NNSGHMC and
// compares one step with a sampler built with the new η, for every Γ.
func TestSetStepSizeEqualsBuildingWithIt(t *testing.T) {
	for _, gamma := range []Gamma{GammaExact, GammaFD, GammaNone} {
		run := func(eta0, eta float64) []float64 {
			cfg := toyConfig(eta0, gamma)
			cfg.RandomNets([]int{6}, []int{6}, rand.New(rand.NewPCG(4, 4)))
			s, err := NewNNSGHMC(standardTarget(t, 2), cfg)
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
