package samplers

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSnapshotResumesExactly: a state saved mid-run as JSON and restored
// into a fresh kernel continues bit for bit as the uninterrupted run, for
// every kernel, those with memory (pSGLD, NNSGHMC with finite-difference
// Γ) among them.
func TestSnapshotResumesExactly(t *testing.T) {
	const k, steps, at = 3, 12, 5
	for _, c := range stateKernels {
		t.Run(c.name, func(t *testing.T) {
			target := standardTarget(t, k)
			init := make([]float64, 2*k)
			for i := range init {
				init[i] = 0.1 * float64(i+1)
			}
			run := func(kern Kernel, st *State, rng *rand.Rand, n int) {
				t.Helper()
				for range n {
					if err := kern.Step(rng, st); err != nil {
						t.Fatal(err)
					}
				}
			}
			kern, _ := c.make(target)
			want, _ := kern.Init(init, nil)
			run(kern, want, rand.New(rand.NewPCG(4, 2)), steps)

			pcg := rand.NewPCG(4, 2)
			rng := rand.New(pcg)
			st, _ := kern.Init(init, nil)
			run(kern, st, rng, at)
			snap, err := Save(st)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(snap)
			if err != nil {
				t.Fatal(err)
			}
			var back Snapshot
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			fresh, _ := c.make(target)
			got, err := Restore(fresh, &back)
			if err != nil {
				t.Fatal(err)
			}
			if got.Steps != at {
				t.Errorf("restored at step %d, want %d", got.Steps, at)
			}
			run(fresh, got, rng, steps-at)
			if !slices.Equal(got.Theta, want.Theta) || !slices.Equal(got.P, want.P) {
				t.Error("the restored run differs from the uninterrupted one")
			}
		})
	}
}

// TestRestoreRefusesMismatch: a snapshot that does not fit the kernel is
// refused.
func TestRestoreRefusesMismatch(t *testing.T) {
	const k = 2
	target := standardTarget(t, k)
	sgld, _ := NewSGLD(target, 0.01)
	sghmc, _ := NewSGHMC(target, 0.05, 1)
	psgld, _ := NewPSGLD(target, DefaultPSGLD(0.01))
	theta := make([]float64, 2*k)
	for _, c := range []struct {
		name string
		k    Kernel
		snap Snapshot
		want string
	}{
		{"positions", sgld, Snapshot{Theta: theta[:3]}, "3 initial positions"},
		{"momenta missing", sghmc, Snapshot{Theta: theta}, "0 momenta for a kernel with momenta"},
		{"momenta extra", sgld, Snapshot{Theta: theta, P: theta}, "4 momenta for a kernel without momenta"},
		{"memory missing", psgld, Snapshot{Theta: theta}, "without the memory"},
		{"memory extra", sgld, Snapshot{Theta: theta, Aux: json.RawMessage(`{"v":[1]}`)}, "keeps none"},
		{"memory length", psgld, Snapshot{Theta: theta, Aux: json.RawMessage(`{"v":[1]}`)}, "v has 1 values, want 4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Restore(c.k, &c.snap); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}
