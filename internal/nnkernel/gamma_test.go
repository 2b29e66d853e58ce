package nnkernel_test

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
	"github.com/metasgmcmc/metasgmcmc/train"
)

// gammaConfig has every term of Γ switched on (see nnkernel.GammaConfig).
func gammaConfig(gamma nnkernel.Gamma) nnkernel.Config { return nnkernel.GammaConfig(gamma) }

// exactGamma runs a step graph on the given inputs and returns Γ_p, Γ'_θ
// and p_{t+1}.
type exactGamma struct {
	sg   *train.StepGraph
	prog *graph.Program
}

func newExactGamma(t *testing.T, cfg nnkernel.Config, n int) *exactGamma {
	t.Helper()
	if cfg.Gamma != nnkernel.GammaAuthors {
		cfg.Gamma = nnkernel.GammaExact
	}
	sg, err := train.BuildStep(cfg, n, graph.Float64)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := graph.Compile(sg.GammaP, sg.GammaThet, sg.PNext, sg.ThetaNext)
	if err != nil {
		t.Fatal(err)
	}
	return &exactGamma{sg: sg, prog: prog}
}

func (e *exactGamma) run(t *testing.T, theta, p []float64, f *nnkernel.Features, grad, noise []float64) (gp, gt, pn []float64) {
	t.Helper()
	if err := e.sg.Feed(theta, p, f, grad, noise); err != nil {
		t.Fatal(err)
	}
	if err := e.prog.Run(); err != nil {
		t.Fatal(err)
	}
	get := func(n *G.Node) []float64 {
		v, err := graph.Value(n, nil)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return get(e.sg.GammaP), get(e.sg.GammaThet), get(e.sg.PNext)
}

// randomState returns positions, momenta, features, gradient and noise for
// n coordinates.
func randomState(rng *rand.Rand, n int) (theta, p []float64, f *nnkernel.Features, grad, noise []float64) {
	vec := func(s float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = s * rng.NormFloat64()
		}
		return x
	}
	f = &nnkernel.Features{U: vec(1), DU: vec(1), GFeat: vec(1)}
	return vec(1), vec(1), f, vec(1), vec(1)
}

// TestExactGammaAgreesWithFiniteDifferencesOfNetworks checks Γ from
// differentiating the step graph against central differences of the
// networks evaluated without a graph:
//
//	Γ_p,i = ∂Q_f/∂u·∂u/∂θ_i + ∂D/∂p_i,   Γ'_θ,i = −∂Q_f/∂p at p_{t+1},
//
// with D = D_f under the explicit friction step and D_eff =
// (1 − e^{−η·D_f})/η under the exponential one.
func TestExactGammaAgreesWithFiniteDifferencesOfNetworks(t *testing.T) {
	for _, friction := range []nnkernel.Friction{nnkernel.FrictionExponential, nnkernel.FrictionExplicit} {
		t.Run(string(friction), func(t *testing.T) { exactGammaAgreesWithFiniteDifferences(t, friction) })
	}
}

func exactGammaAgreesWithFiniteDifferences(t *testing.T, friction nnkernel.Friction) {
	const n = 40
	cfg := gammaConfig(nnkernel.GammaExact)
	cfg.Friction = friction
	eg := newExactGamma(t, cfg, n)
	theta, p, f, grad, noise := randomState(rand.New(rand.NewPCG(3, 4)), n)
	gp, gt, pn := eg.run(t, theta, p, f, grad, noise)

	s := nnkernel.NewBare(cfg, n, nil)
	q := func(u, p []float64) []float64 { out := make([]float64, n); s.EvalQ(u, p, out); return out }
	d := func(u, p []float64) []float64 {
		qv, out := q(u, p), make([]float64, n)
		s.EvalDPart(u, p, f.GFeat, out)
		for i := range out {
			out[i], _ = s.Diffusion(qv[i], out[i])
			if friction == nnkernel.FrictionExponential {
				out[i] = -math.Expm1(-cfg.StepSize*out[i]) / cfg.StepSize
			}
		}
		return out
	}
	dQdu, dDdp, dQdpn := make([]float64, n), make([]float64, n), make([]float64, n)
	nnkernel.CentralDiff(func(x, out []float64) { copy(out, q(x, p)) }, f.U, dQdu)
	nnkernel.CentralDiff(func(x, out []float64) { copy(out, d(f.U, x)) }, p, dDdp)
	nnkernel.CentralDiff(func(x, out []float64) { copy(out, q(f.U, x)) }, pn, dQdpn)
	for i := 0; i < n; i++ {
		wantP := dQdu[i]*f.DU[i] + dDdp[i]
		wantT := -dQdpn[i]
		// central differences of piecewise-smooth networks with h = 1e-5:
		// accurate to ~1e-8 away from ReLU kinks
		if math.Abs(gp[i]-wantP) > 1e-6*(1+math.Abs(wantP)) {
			t.Errorf("Γ_p[%d]: graph %v, finite differences %v", i, gp[i], wantP)
		}
		if math.Abs(gt[i]-wantT) > 1e-6*(1+math.Abs(wantT)) {
			t.Errorf("Γ'_θ[%d]: graph %v, finite differences %v", i, gt[i], wantT)
		}
	}
}

// TestExactStepMatchesStepGraph checks the sampler's graph-free exact step
// (and Update, which meta-training's forward passes use) against the
// autodiff reference, the step graph whose vector-Jacobian products
// meta-training back-propagates: with clamps tight enough that f_Q's clamp binds on some
// coordinates and D_f's on others, Γ and the new state agree to rounding.
// So does the authors' training-mode step (GammaAuthors), which meta-training
// unrolls through the same two.
func TestExactStepMatchesStepGraph(t *testing.T) {
	for _, friction := range []nnkernel.Friction{nnkernel.FrictionExponential, nnkernel.FrictionExplicit} {
		for _, gamma := range []nnkernel.Gamma{nnkernel.GammaExact, nnkernel.GammaAuthors} {
			t.Run(string(friction)+"/"+string(gamma), func(t *testing.T) { exactStepMatchesStepGraph(t, gamma, friction) })
		}
	}
}

func exactStepMatchesStepGraph(t *testing.T, gamma nnkernel.Gamma, friction nnkernel.Friction) {
	const n = 3000
	cfg := gammaConfig(gamma)
	cfg.Friction = friction
	cfg.ClampQ, cfg.DMax = 1.5, 2.5
	eg := newExactGamma(t, cfg, n)
	theta, p, f, grad, noise := randomState(rand.New(rand.NewPCG(11, 12)), n)
	wantP, wantT, wantPn := eg.run(t, theta, p, f, grad, noise)
	wantTheta, err := graph.Value(eg.sg.ThetaNext, nil)
	if err != nil {
		t.Fatal(err)
	}

	s := nnkernel.NewBare(cfg, n, f)
	st := &samplers.State{Theta: append([]float64(nil), theta...), P: append([]float64(nil), p...),
		Eval: &samplers.Eval{Grad: grad}, Aux: nnkernel.NewMemory(noise)}
	s.StepPlain(st)

	// Update, the same step on bare vectors
	u := nnkernel.NewBare(cfg, n, nil)
	uTheta, uP := append([]float64(nil), theta...), append([]float64(nil), p...)
	if err := u.Update(uTheta, uP, f, grad, noise); err != nil {
		t.Fatal(err)
	}
	for i := range uTheta {
		if uTheta[i] != st.Theta[i] || uP[i] != st.P[i] {
			t.Fatalf("coordinate %d: Update gives (%v, %v), the step (%v, %v)", i, uTheta[i], uP[i], st.Theta[i], st.P[i])
		}
	}

	var clampedQ, clampedD int
	q, dpart := make([]float64, n), make([]float64, n)
	s.EvalQ(f.U, p, q)
	s.EvalDPart(f.U, p, f.GFeat, dpart)
	for i := range q {
		if s.Gate()[i] == 0 {
			clampedQ++
		}
		if _, inside := s.Diffusion(q[i], dpart[i]); !inside {
			clampedD++
		}
	}
	if clampedQ < n/20 || clampedD < n/20 || clampedQ > n/2 || clampedD > n/2 {
		t.Fatalf("the test needs both clamps to bind on some coordinates: f_Q on %d, D_f on %d of %d", clampedQ, clampedD, n)
	}
	gammaP, gammaThet, _ := nnkernel.Terms(st)
	for _, c := range []struct {
		name      string
		got, want []float64
	}{{"Γ_p", gammaP, wantP}, {"Γ'_θ", gammaThet, wantT}, {"p_{t+1}", st.P, wantPn}, {"θ_{t+1}", st.Theta, wantTheta}} {
		for i := range c.want {
			if math.Abs(c.got[i]-c.want[i]) > 1e-12*(1+math.Abs(c.want[i])) {
				t.Fatalf("%s[%d]: plain step %v, step graph %v", c.name, i, c.got[i], c.want[i])
			}
		}
	}
}

// TestFiniteDifferenceGammaAgreesWithExact runs the finite-difference
// sampler along a chain and compares its Γ at every step with the exact Γ
// of the same state. The finite differences follow the chain (one of them
// one step stale), so they agree up to O(|p_t − p_{t−1}|·f”/f'), and the
// momentum moves O(√η) per step: with smooth (tanh) networks the relative
// error must be a few percent at η = 1e-3 and shrink about tenfold at
// η = 1e-5. (With ReLU networks the differences are exact between kinks and
// arbitrary across them.)
func TestFiniteDifferenceGammaAgreesWithExact(t *testing.T) {
	med := map[float64][2]float64{}
	for _, eta := range []float64{1e-3, 1e-5} {
		eP, eT := fdGammaErrors(t, eta)
		med[eta] = [2]float64{eP, eT}
		t.Logf("η = %g: median relative error of Γ_p %.3g, of Γ_θ %.3g", eta, eP, eT)
	}
	for i, name := range []string{"Γ_p", "Γ_θ"} {
		big, small := med[1e-3][i], med[1e-5][i]
		if big > 0.05 {
			t.Errorf("%s: median relative error %.3g at η = 1e-3, want < 0.05", name, big)
		}
		if small > big/4 {
			t.Errorf("%s: error does not shrink with the step: %.3g at η = 1e-3, %.3g at η = 1e-5", name, big, small)
		}
	}
}

// fdGammaErrors returns the median relative errors of the finite-difference
// Γ_p and Γ_θ along a chain with step eta.
func fdGammaErrors(t *testing.T, eta float64) (float64, float64) {
	const k = 20
	target := samplerstest.StandardTarget(t, k)
	cfg := gammaConfig(nnkernel.GammaFD)
	cfg.StepSize = eta
	cfg.Q.Activation, cfg.D.Activation = coordnet.Tanh, coordnet.Tanh
	s, err := nnkernel.New(target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	eg := newExactGamma(t, cfg, 2*k)
	rng := rand.New(rand.NewPCG(9, 9))
	theta, p := make([]float64, 2*k), make([]float64, 2*k)
	for i := range theta {
		theta[i], p[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	st, err := s.Init(theta, p)
	if err != nil {
		t.Fatal(err)
	}
	var errP, errT []float64
	for step := 0; step < 30; step++ {
		before := append([]float64(nil), st.Theta...)
		pBefore := append([]float64(nil), st.P...)
		if err := s.Step(rng, st); err != nil {
			t.Fatal(err)
		}
		gammaP, gammaThet, noise := nnkernel.Terms(st)
		gp, gt, _ := eg.run(t, before, pBefore, s.Feat(), st.Eval.Grad, noise)
		if step == 0 {
			continue // the first step uses central differences, not the chain
		}
		for i := range gp {
			errP = append(errP, math.Abs(gammaP[i]-gp[i])/(1e-3+math.Abs(gp[i])))
			errT = append(errT, math.Abs(gammaThet[i]-gt[i])/(1e-3+math.Abs(gt[i])))
		}
	}
	sort.Float64s(errP)
	sort.Float64s(errT)
	return errP[len(errP)/2], errT[len(errT)/2]
}
