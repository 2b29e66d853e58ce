package samplers_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// TestSnapshotResumesExactly: a state saved mid-run as JSON and restored
// into a fresh kernel continues bit for bit as the uninterrupted run, for
// every kernel, pSGLD with its memory among them (package samplers/nnsghmc
// runs it on NNSGHMC).
func TestSnapshotResumesExactly(t *testing.T) {
	samplerstest.SnapshotResumesExactly(t, stateKernels)
}

// TestRestoreRefusesMismatch: a snapshot that does not fit the kernel is
// refused.
func TestRestoreRefusesMismatch(t *testing.T) {
	const k = 2
	target := samplerstest.StandardTarget(t, k)
	sgld, _ := samplers.NewSGLD(target, samplers.SGLDSettings{StepSize: samplers.Constant(0.01)})
	sghmc, _ := samplers.NewSGHMC(target, samplers.SGHMCSettings{StepSize: samplers.Constant(0.05), Friction: 1})
	psgld, _ := newPSGLD(target)
	adam, _ := newAdam(target)
	santa, _ := newSanta(target)
	theta := make([]float64, 2*k)
	for _, c := range []struct {
		name string
		k    samplers.Kernel
		snap samplers.Snapshot
		want string
	}{
		{"positions", sgld, samplers.Snapshot{Theta: theta[:3]}, "3 initial positions"},
		{"momenta missing", sghmc, samplers.Snapshot{Theta: theta}, "0 momenta for a kernel with momenta"},
		{"momenta extra", sgld, samplers.Snapshot{Theta: theta, P: theta}, "4 momenta for a kernel without momenta"},
		{"memory missing", psgld, samplers.Snapshot{Theta: theta}, "without the memory"},
		{"memory extra", sgld, samplers.Snapshot{Theta: theta, Aux: json.RawMessage(`{"v":[1]}`)}, "keeps none"},
		{"memory length", psgld, samplers.Snapshot{Theta: theta, Aux: json.RawMessage(`{"v":[1]}`)}, "v has 1 values, want 4"},
		{"Adam memory missing", adam, samplers.Snapshot{Theta: theta}, "without the memory"},
		{"Adam moment length", adam, samplers.Snapshot{Steps: 1, Theta: theta, Aux: json.RawMessage(`{"t":1,"m":[1,2,3,4],"v":[1]}`)}, "v has 1 values at step 1, want 4"},
		{"Adam moments before its first step", adam, samplers.Snapshot{Theta: theta, Aux: json.RawMessage(`{"t":0,"m":[1,2,3,4],"v":[1,2,3,4]}`)}, "m has 4 values at step 0, want 0"},
		{"Adam negative count", adam, samplers.Snapshot{Theta: theta, Aux: json.RawMessage(`{"t":-1}`)}, "t is -1"},
		{"Santa momenta missing", santa, samplers.Snapshot{Theta: theta, Aux: json.RawMessage(`{"t":0}`)}, "0 momenta for a kernel with momenta"},
		{"Santa thermostats missing", santa, samplers.Snapshot{Steps: 2, Theta: theta, P: theta, Aux: json.RawMessage(`{"t":2,"v":[1,2,3,4]}`)}, "alpha has 0 values at step 2, want 4"},
		{"Santa u_0 drawn twice", santa, samplers.Snapshot{Steps: 1, Theta: theta, P: theta, Aux: json.RawMessage(`{"t":1,"v":[1,2,3,4],"alpha":[1,2,3,4],"draw_u":true}`)}, "draw_u is set at step 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := samplers.Restore(c.k, &c.snap); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}
