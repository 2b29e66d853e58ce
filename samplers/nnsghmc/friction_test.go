package nnsghmc_test

import (
	"math/rand/v2"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// highFriction returns the maker of an NNSGHMC whose friction alone,
// c = 150 at η = 0.02, puts η·D_f at 3 or more on every coordinate: past
// the explicit step's limit of 2. D_f varies with the state through the
// networks of stateDependent; Q_f is the constant β + f_Q(0) (f_Q's
// weights zeroed). A Q_f that varies with the state is biased at such a
// friction with either step: the paper's position update samples the
// overdamped dynamics that η·D_f ≳ 1 makes of it without the drift that
// Q_f's variation over the momentum's correlation time adds (measured:
// the first mean −2.6 for 1 at η·D_f ≥ 1.5 with the explicit step).
func highFriction(f nnsghmc.Friction) func(samplers.Target) (samplers.Kernel, error) {
	return func(t samplers.Target) (samplers.Kernel, error) {
		tr := stateDependent()
		clear(tr.Q.W[0])
		clear(tr.Q.W[1])
		return nnsghmc.New(t, tr, nnsghmc.Settings{StepSize: samplers.Constant(0.02), Beta: 1, C: 150,
			ClampQ: 5, DMax: 400, Gamma: nnsghmc.GammaExact, Friction: f})
	}
}

// TestExponentialFrictionKeepsWhatExplicitLoses: where η·D_f > 2 the
// explicit step multiplies the momentum by 1 − η·D_f < −1 and throws the
// chains out within a few dozen steps; the exponential step keeps every
// chain, and its draws hit the target's moments. The check can fail: the
// exact Ornstein–Uhlenbeck noise variance 1 − e^{−2η·D_f} gave the first
// variance 0.62 for 1 (15 MCSE), and Γ_p without the slope e^{−η·D_f}
// of D_eff gave 1.28 (5.8 MCSE), on 1,000 chains.
func TestExponentialFrictionKeepsWhatExplicitLoses(t *testing.T) {
	target := samplerstest.GaussianTarget(t, samplerstest.CorrMean, samplerstest.CorrCov, 4)
	k, err := highFriction(nnsghmc.FrictionExplicit)(target)
	if err != nil {
		t.Fatal(err)
	}
	st, err := k.Init([]float64{1, 0.5, 1.5, 0, -1, -2, 0, -0.5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lostAt(t, k, st, "the explicit step at η·D_f ≥ 3") == 0 {
		t.Fatal("the explicit step kept its chains for 200 steps at η·D_f ≥ 3; the test needs it to lose them")
	}
	samplerstest.CheckMoments(t, []samplerstest.MomentRun{
		{Name: "exponential friction at η·D_f ≥ 3", Chains: 1000, Steps: 10000, Thin: 10, Momentum: true, NewKernel: highFriction(nnsghmc.FrictionExponential)},
	})
}

// A sampler runs with the friction step it was trained with unless told
// otherwise, and says so, once, when told.
func TestFrictionIsTheTrainedOneUnlessSet(t *testing.T) {
	target := samplerstest.StandardTarget(t, 2)
	tr := nnsghmc.RandomTrained([]int{3}, []int{3}, rawInputs, 1, rand.New(rand.NewPCG(1, 1)))
	for _, c := range []struct {
		trained, set, want nnsghmc.Friction
		warns              bool
	}{
		{"", "", nnsghmc.FrictionExponential, false},
		{nnsghmc.FrictionExplicit, "", nnsghmc.FrictionExplicit, false},
		{nnsghmc.FrictionExplicit, nnsghmc.FrictionExponential, nnsghmc.FrictionExponential, true},
		{nnsghmc.FrictionExponential, nnsghmc.FrictionExplicit, nnsghmc.FrictionExplicit, true},
		{"", nnsghmc.FrictionExplicit, nnsghmc.FrictionExplicit, false},
	} {
		tr.Domain.Friction = c.trained
		s := nnsghmc.ToySettings()
		s.Friction = c.set
		var warnings []string
		s.Warn = func(msg string) { warnings = append(warnings, msg) }
		k, err := nnsghmc.New(target, tr, s)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := k.Init(samplerstest.Theta0, samplerstest.P0)
		for i := 0; i < 3; i++ {
			if err := k.Step(rand.New(rand.NewPCG(1, uint64(i))), st); err != nil {
				t.Fatal(err)
			}
		}
		if got := k.Settings().Friction; got != c.want {
			t.Errorf("trained %q, set %q: runs %q, want %q", c.trained, c.set, got, c.want)
		}
		if c.warns != (len(warnings) == 1) || len(warnings) > 1 {
			t.Errorf("trained %q, set %q: warnings %q", c.trained, c.set, warnings)
		}
	}
}
