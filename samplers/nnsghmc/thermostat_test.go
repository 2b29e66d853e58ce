package nnsghmc_test

import (
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// heating returns the maker of an NNSGHMC whose Q_f grows with the energy
// as the trained ones do, Q_f = 1 + Ũ/10 (f_Q clamped to ±100), with a
// constant D_f = 0.5, at η = 0.02, under the thermostat tau (0: off),
// its warnings to warn. On
// the moment check's Gaussian (largest precision 1.80) its step
// η·Q_f·√λ passes the stable limit of about 2 where Ũ exceeds about 720:
// never at equilibrium, where Q_f is about 1.2, but from heatingStart,
// where Ũ is about 1,900, a chain heats and raises its own step.
func heating(tau float64, warn samplers.Warn) func(samplers.Target) (samplers.Kernel, error) {
	return func(t samplers.Target) (samplers.Kernel, error) {
		tr := &nnsghmc.Trained{Q: linearNet([]float64{0.1, 0}, 1, -9), D: linearNet([]float64{0, 0, 0}, 0, 0.5), DScale: 1, Inputs: rawInputs}
		return nnsghmc.New(t, tr, nnsghmc.Settings{StepSize: samplers.Constant(0.02), ClampQ: 100, Gamma: nnsghmc.GammaExact, Thermostat: tau, Warn: warn})
	}
}

// heatingStart is where heating's chains start.
var heatingStart = []float64{40, 40}

// TestThermostatKeepsWhatPlainLoses: from far out, a Q_f that grows with
// the energy makes the step unstable and throws the chains out within a
// few dozen steps; under the thermostat (τ = 16) every chain is kept, and
// once they have come in, its draws hit the target's moments. That each
// of its steps is a valid one, the thermostat's factor in Γ included, is
// nnkernel's TestThermostatScalesQ.
func TestThermostatKeepsWhatPlainLoses(t *testing.T) {
	const chains = 1000
	target := samplerstest.GaussianTarget(t, samplerstest.CorrMean, samplerstest.CorrCov, chains)
	k, err := heating(0, nil)(target)
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, 2*chains)
	for i := range theta {
		theta[i] = heatingStart[i/chains]
	}
	st, err := k.Init(theta, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lostAt(t, k, st, "without the thermostat") == 0 {
		t.Fatal("without the thermostat the chains stayed for 200 steps; the test needs them lost")
	}
	samplerstest.CheckMoments(t, []samplerstest.MomentRun{
		{Name: "thermostat τ = 16 from far out", Chains: chains, Steps: 10000, Burn: 1000, Thin: 10, Start: heatingStart, NewKernel: heating(16, func(string) {})},
	})

	// it says, once, when it starts to cool
	var warnings []string
	warned, err := heating(16, func(msg string) { warnings = append(warnings, msg) })(target)
	if err != nil {
		t.Fatal(err)
	}
	if st, err = warned.Init(theta, nil); err != nil {
		t.Fatal(err)
	}
	if lostAt(t, warned, st, "with the thermostat") != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "the thermostat cools coordinate") {
		t.Errorf("with the thermostat over 200 steps from far out: warnings %q, want one that it cools", warnings)
	}
}
