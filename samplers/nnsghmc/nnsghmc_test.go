package nnsghmc_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// TestOneStepMatchesHandComputation runs one step of NNSGHMC with networks
// linear where the chains are, so that Q_f, D_f and every derivative in Γ
// is known in closed form:
//
//	f_Q(u, p) = 0.5·(0.2u − 0.7p + 10) − 4,  ∂f_Q/∂u = 0.1, ∂f_Q/∂p = −0.35
//	f_D(u, p, g) = 0.8·(0.1u + 0.3p − 0.2g + 10) − 7.5, positive here
//
// from θ = Theta0 and momenta P0 on the standard target of 2 chains of
// package samplerstest, with each Γ and each friction step.
func TestOneStepMatchesHandComputation(t *testing.T) {
	const sD = 2.0
	tr := &nnsghmc.Trained{Q: linearNet([]float64{0.2, -0.7}, 0.5, -4), D: linearNet([]float64{0.1, 0.3, -0.2}, 0.8, -7.5),
		Inputs: rawInputs, DScale: sD}
	for _, friction := range []nnsghmc.Friction{nnsghmc.FrictionExponential, nnsghmc.FrictionExplicit} {
		for _, gamma := range []nnsghmc.Gamma{nnsghmc.GammaExact, nnsghmc.GammaFD, nnsghmc.GammaNone} {
			oneStep(t, tr, friction, gamma)
		}
	}
}

func oneStep(t *testing.T, tr *nnsghmc.Trained, friction nnsghmc.Friction, gamma nnsghmc.Gamma) {
	const eta, seed = 0.1, 42
	theta0, p0 := samplerstest.Theta0, samplerstest.P0
	xi := samplerstest.Normals(seed, 4) // the noise the sampler draws, in coordinate order
	g := samplerstest.GradAt(theta0)
	const beta, alpha, c0, sD = 0.3, 0.5, 0.2, 2.0
	fQ := func(u, p float64) float64 { return 0.5*(0.2*u-0.7*p+10) - 4 }
	fD := func(u, p, gr float64) float64 { return 0.8*(0.1*u+0.3*p-0.2*gr+10) - 7.5 }
	t.Run(string(friction)+"/"+string(gamma), func(t *testing.T) {
		k, err := nnsghmc.New(samplerstest.StandardTarget(t, 2), tr, nnsghmc.Settings{StepSize: samplers.Constant(eta),
			Alpha: alpha, Beta: beta, C: c0, Gamma: gamma, Friction: friction})
		if err != nil {
			t.Fatal(err)
		}
		st, _ := k.Init(theta0, p0)
		if err := k.Step(rand.New(rand.NewPCG(seed, 0)), st); err != nil {
			t.Fatal(err)
		}
		wantP, wantT := make([]float64, 4), make([]float64, 4)
		for i := range wantP {
			u := samplerstest.EnergyAt(theta0, i%2) // N = 1, energy scale 1: u = U
			q := beta + fQ(u, p0[i])
			fd := fD(u, p0[i], g[i])
			d := alpha*q*q + sD*fd + c0
			slope := 1.0 // ∂D_eff/∂D_f
			if friction == nnsghmc.FrictionExponential {
				slope = math.Exp(-eta * d)
			}
			gammaP := 0.1*g[i] + slope*(2*alpha*q*(-0.35)+sD*0.8*0.3) // ∂Q/∂u·∂u/∂θ + ∂D_eff/∂p
			gammaT := 0.35                                            // −∂Q/∂p
			if gamma == nnsghmc.GammaNone {
				gammaP, gammaT = 0, 0
			}
			if friction == nnsghmc.FrictionExplicit {
				wantP[i] = p0[i] - eta*q*g[i] - eta*d*p0[i] + eta*gammaP + math.Sqrt(2*eta*d)*xi[i]
			} else {
				wantP[i] = math.Exp(-eta*d)*p0[i] - eta*q*g[i] + eta*gammaP + math.Sqrt(2*(1-math.Exp(-eta*d)))*xi[i]
			}
			wantT[i] = theta0[i] + eta*(beta+fQ(u, wantP[i]))*wantP[i] + eta*gammaT
		}
		samplerstest.AssertClose(t, "p", st.P, wantP)
		samplerstest.AssertClose(t, "θ", st.Theta, wantT)
	})
}

// TestSameSeedGivesBitIdenticalChains: NNSGHMC on a target with injected
// gradient noise gives the same chains bit for bit from the same seed.
func TestSameSeedGivesBitIdenticalChains(t *testing.T) {
	tr := nnsghmc.RandomTrained([]int{8}, []int{8}, rawInputs, 1, rand.New(rand.NewPCG(1, 1)))
	settings := nnsghmc.ToySettings()
	settings.StepSize = samplers.Constant(0.05)
	toy := samplerstest.Kernel{Name: "toy settings", Make: func(target samplers.Target) (samplers.Kernel, error) {
		return nnsghmc.New(target, tr, settings)
	}}
	samplerstest.SameSeedGivesBitIdenticalChains(t, []samplerstest.Kernel{toy})
}

// TestInvalidSettingsAreRejected: New refuses a trained sampler or settings
// that make no sampler, and accepts each preset with networks.
func TestInvalidSettingsAreRejected(t *testing.T) {
	target := samplerstest.StandardTarget(t, 2)
	good := nnsghmc.RandomTrained([]int{3}, []int{3}, rawInputs, 1, rand.New(rand.NewPCG(1, 1)))
	noNets := &nnsghmc.Trained{Inputs: rawInputs, DScale: 1}
	settings := func(change func(*nnsghmc.Settings)) nnsghmc.Settings {
		s := nnsghmc.ToySettings()
		change(&s)
		return s
	}
	for _, tc := range []struct {
		name     string
		target   samplers.Target
		trained  *nnsghmc.Trained
		settings nnsghmc.Settings
	}{
		{"without networks", target, noNets, nnsghmc.ToySettings()},
		{"no trained sampler", target, nil, nnsghmc.ToySettings()},
		{"nil target", nil, good, nnsghmc.ToySettings()},
		{"unknown gamma", target, good, settings(func(s *nnsghmc.Settings) { s.Gamma = "approximate" })},
		{"negative alpha", target, good, settings(func(s *nnsghmc.Settings) { s.Alpha = -1 })},
		{"no step size", target, good, settings(func(s *nnsghmc.Settings) { s.StepSize = nil })},
		{"zero step size", target, good, settings(func(s *nnsghmc.Settings) { s.StepSize = samplers.Constant(0) })},
		{"no diffusion", target, &nnsghmc.Trained{Q: good.Q, D: good.D, Inputs: rawInputs}, nnsghmc.ToySettings()},
	} {
		if _, err := nnsghmc.New(tc.target, tc.trained, tc.settings); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	for name, s := range map[string]nnsghmc.Settings{
		"ToySettings": nnsghmc.ToySettings(), "BNNSettings": nnsghmc.BNNSettings(1e-3), "RNNSettings": nnsghmc.RNNSettings(1e-3),
	} {
		if _, err := nnsghmc.New(target, good, s); err != nil {
			t.Errorf("%s rejected: %v", name, err)
		}
	}
}

// TestStatesInterleaveOnOneKernel: everything NNSGHMC keeps of the chains
// is in the State, so one kernel stepping two states in turn gives the same
// chains, bit for bit, as a kernel for each.
func TestStatesInterleaveOnOneKernel(t *testing.T) {
	samplerstest.StatesInterleaveOnOneKernel(t, nnKernels)
}

// TestKernelRefusesAnotherKernelsMemory: NNSGHMC refuses a state whose Aux
// another kernel (pSGLD) made, or that has none, rather than misreading it.
func TestKernelRefusesAnotherKernelsMemory(t *testing.T) {
	psgld, err := samplers.NewPSGLD(samplerstest.StandardTarget(t, 2), samplers.DefaultPSGLDSettings())
	if err != nil {
		t.Fatal(err)
	}
	ps, err := psgld.Init(make([]float64, 4), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ps.Aux == nil {
		t.Fatal("pSGLD's state has no memory")
	}
	const want = "NNSGHMC state was not made by NNSGHMC.Init"
	samplerstest.RefusesMemory(t, samplerstest.Kernel{Name: "pSGLD's memory", Make: nnKernel(nnsghmc.GammaExact)}, ps.Aux, want)
	samplerstest.RefusesMemory(t, samplerstest.Kernel{Name: "no memory", Make: nnKernel(nnsghmc.GammaFD)}, nil, want)
}

// TestSnapshotResumesExactly: a state saved mid-run as JSON and restored
// into a fresh kernel continues bit for bit as the uninterrupted run, for
// every Γ, the finite-difference one with its memory of the chains.
func TestSnapshotResumesExactly(t *testing.T) {
	samplerstest.SnapshotResumesExactly(t, nnKernels)
}

// TestRunMatchesStepping: samplers.Run gives bit for bit the chains of
// calling Step in a loop, with a nil hook.
func TestRunMatchesStepping(t *testing.T) {
	samplerstest.RunMatchesStepping(t, nnKernels)
}
