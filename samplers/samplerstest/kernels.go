package samplerstest

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// Kernel names a maker of a kernel on any target, for the harnesses that
// run one check on several kernels (each as a subtest of its name).
type Kernel struct {
	Name string
	Make func(samplers.Target) (samplers.Kernel, error)
	// Memory says that the kernel keeps memory of the chains in
	// State.Aux, which its snapshots must carry.
	Memory bool
}

// SameSeedGivesBitIdenticalChains checks that each kernel, on the standard
// target of 3 chains with injected gradient noise σ = 1, gives the same
// chains bit for bit from the same seed.
func SameSeedGivesBitIdenticalChains(t *testing.T, kernels []Kernel) {
	target := tasks.GradientNoise{Target: StandardTarget(t, 3), Sigma: 1}
	for _, c := range kernels {
		t.Run(c.Name, func(t *testing.T) {
			run := func() []float64 {
				s, err := c.Make(target)
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
		})
	}
}

// RefusesMemory checks that the kernel c makes, on the standard target of 2
// chains, refuses to step a state whose Aux is aux (another kernel's
// memory, or none), with an error that contains want, rather than
// misreading it.
func RefusesMemory(t *testing.T, c Kernel, aux any, want string) {
	t.Helper()
	const k = 2
	kern, err := c.Make(StandardTarget(t, k))
	if err != nil {
		t.Fatal(err)
	}
	st, err := kern.Init(make([]float64, 2*k), nil)
	if err != nil {
		t.Fatal(err)
	}
	st.Aux = aux
	if err := kern.Step(rand.New(rand.NewPCG(1, 1)), st); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: error %v, want %q", c.Name, err, want)
	}
}

// StatesInterleaveOnOneKernel checks that everything each kernel keeps of
// the chains is in the State: one kernel stepping two states in turn gives
// the same chains, bit for bit, as a kernel for each.
func StatesInterleaveOnOneKernel(t *testing.T, kernels []Kernel) {
	const k, steps = 3, 20
	for _, c := range kernels {
		t.Run(c.Name, func(t *testing.T) {
			target := StandardTarget(t, k)
			inits := [2][]float64{make([]float64, 2*k), make([]float64, 2*k)}
			for i := range inits[1] {
				inits[0][i], inits[1][i] = 0.1*float64(i), -0.2*float64(i)
			}
			var want [2]*samplers.State
			for j := range want {
				kern, err := c.Make(target)
				if err != nil {
					t.Fatal(err)
				}
				if want[j], err = kern.Init(inits[j], nil); err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(uint64(j), 9))
				for range steps {
					if err := kern.Step(rng, want[j]); err != nil {
						t.Fatal(err)
					}
				}
			}
			kern, err := c.Make(target)
			if err != nil {
				t.Fatal(err)
			}
			var got [2]*samplers.State
			rngs := [2]*rand.Rand{rand.New(rand.NewPCG(0, 9)), rand.New(rand.NewPCG(1, 9))}
			for j := range got {
				if got[j], err = kern.Init(inits[j], nil); err != nil {
					t.Fatal(err)
				}
			}
			for range steps {
				for j := range got {
					if err := kern.Step(rngs[j], got[j]); err != nil {
						t.Fatal(err)
					}
				}
			}
			for j := range got {
				if !slices.Equal(got[j].Theta, want[j].Theta) || !slices.Equal(got[j].P, want[j].P) {
					t.Errorf("state %d stepped in turn with another differs from state %d stepped alone", j, j)
				}
			}
		})
	}
}

// SnapshotResumesExactly checks that a state of each kernel saved mid-run
// as JSON (samplers.Save), with the memory of a kernel with Memory, and
// restored into a fresh kernel (samplers.Restore) continues bit for bit as
// the uninterrupted run.
func SnapshotResumesExactly(t *testing.T, kernels []Kernel) {
	SnapshotResumesAt(t, kernels, 5)
}

// SnapshotResumesAt is SnapshotResumesExactly with the state saved after
// each of the given numbers of steps (0: before the first) of a 12-step
// run.
func SnapshotResumesAt(t *testing.T, kernels []Kernel, at ...int) {
	const k, steps = 3, 12
	for _, c := range kernels {
		t.Run(c.Name, func(t *testing.T) {
			target := StandardTarget(t, k)
			init := make([]float64, 2*k)
			for i := range init {
				init[i] = 0.1 * float64(i+1)
			}
			run := func(kern samplers.Kernel, st *samplers.State, rng *rand.Rand, n int) {
				t.Helper()
				for range n {
					if err := kern.Step(rng, st); err != nil {
						t.Fatal(err)
					}
				}
			}
			kern, _ := c.Make(target)
			want, _ := kern.Init(init, nil)
			run(kern, want, rand.New(rand.NewPCG(4, 2)), steps)
			for _, at := range at {
				rng := rand.New(rand.NewPCG(4, 2))
				st, _ := kern.Init(init, nil)
				run(kern, st, rng, at)
				snap, err := samplers.Save(st)
				if err != nil {
					t.Fatal(err)
				}
				if c.Memory && at > 0 && len(snap.Aux) == 0 {
					t.Error("the snapshot has no memory")
				}
				b, err := json.Marshal(snap)
				if err != nil {
					t.Fatal(err)
				}
				var back samplers.Snapshot
				if err := json.Unmarshal(b, &back); err != nil {
					t.Fatal(err)
				}
				fresh, _ := c.Make(target)
				got, err := samplers.Restore(fresh, &back)
				if err != nil {
					t.Fatalf("saved at step %d: %v (snapshot %s)", at, err, b)
				}
				if got.Steps != at {
					t.Errorf("restored at step %d, want %d", got.Steps, at)
				}
				run(fresh, got, rng, steps-at)
				if !slices.Equal(got.Theta, want.Theta) || !slices.Equal(got.P, want.P) {
					t.Errorf("saved at step %d: the restored run differs from the uninterrupted one", at)
				}
			}
		})
	}
}

// RunMatchesStepping checks that samplers.Run with a nil hook gives, for
// each kernel, bit for bit the chains of calling Step in a loop.
func RunMatchesStepping(t *testing.T, kernels []Kernel) {
	for _, tc := range kernels {
		t.Run(tc.Name, func(t *testing.T) {
			var states [2]*samplers.State
			for i := range states {
				k, err := tc.Make(StandardTarget(t, 2))
				if err != nil {
					t.Fatal(err)
				}
				s, _ := k.Init(Theta0, P0)
				rng := rand.New(rand.NewPCG(3, 4))
				if i == 0 {
					for range 50 {
						if err := k.Step(rng, s); err != nil {
							t.Fatal(err)
						}
					}
				} else if err := samplers.Run(context.Background(), k, rng, s, 50, nil); err != nil {
					t.Fatal(err)
				}
				states[i] = s
			}
			if !reflect.DeepEqual(states[0].Theta, states[1].Theta) || !reflect.DeepEqual(states[0].P, states[1].P) || states[1].Steps != 50 {
				t.Errorf("Run differs from stepping: θ %v and %v, p %v and %v, %d steps",
					states[0].Theta, states[1].Theta, states[0].P, states[1].P, states[1].Steps)
			}
		})
	}
}

// BenchToy times one step of the kernel newKernel makes on the paper's
// toy: the 20-D test Gaussian (Test20(1, 0.6), a samplers.Posterior
// evaluated by samplers.NewTarget) with 50 chains, injected gradient noise
// σ = 1, and positions drawn uniformly from [0, 6).
func BenchToy(b *testing.B, newKernel func(samplers.Target) (samplers.Kernel, error)) {
	const k = 50
	mean, cov := Test20(1, 0.6)
	target := tasks.GradientNoise{Target: GaussianTarget(b, mean, cov, k), Sigma: 1}
	kern, err := newKernel(target)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	theta := make([]float64, 20*k)
	for i := range theta {
		theta[i] = 6 * rng.Float64()
	}
	st, err := kern.Init(theta, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := kern.Step(rng, st); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}
