// Package catalog names the sampling problems the commands know, with the
// defaults the paper and the authors' code use for each.
package catalog

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/gaussian"
)

// Task is a named sampling problem.
type Task struct {
	Name        string
	Description string
	Energy      tasks.Energy
	// Noise is the standard deviation of gradient noise injected into every
	// gradient evaluation (0 for none).
	Noise float64
	// Init draws the initial positions of k chains (coordinate-major).
	Init func(rng *rand.Rand, k int) []float64
	// NewMonitor returns the task's metrics for k chains.
	NewMonitor func(k int) tasks.Monitor
	Defaults   Defaults
}

// Defaults are a task's default run settings.
type Defaults struct {
	Chains, Steps, EvalEvery int
	StepSize                 float64 // η, for every sampler
	Friction                 float64 // SGHMC's C
	// NN holds NNSGHMC's settings except the networks, StepSize and Gamma.
	NN               samplers.NNConfig
	QHidden, DHidden []int
}

// Options select a task's variant.
type Options struct {
	TargetSeed  uint64  // seed of a generated target (the toy covariances)
	TargetScale float64 // scale s of the 20-D toy's L = s·N(0, 1)
}

// DefaultOptions are the options of the commands' defaults.
var DefaultOptions = Options{TargetSeed: 1, TargetScale: 0.6}

var builders = map[string]struct {
	desc string
	make func(Options) (*Task, error)
}{
	"gaussian10": {"the paper's 10-D training Gaussian: mean 3, diagonal covariance with variances U[0,1)", gaussianTask(func(o Options) *gaussian.Gaussian { return gaussian.Train10(o.TargetSeed) })},
	"gaussian20": {"the paper's 20-D test Gaussian: mean 3, Σ = LLᵀ with L = s·N(0,1)", gaussianTask(func(o Options) *gaussian.Gaussian { return gaussian.Test20(o.TargetSeed, o.TargetScale) })},
	"gaussian2d": {"a correlated 2-D Gaussian (mean 0, unit variances, correlation 0.9) for trajectory pictures", gaussianTask(func(Options) *gaussian.Gaussian {
		g, err := gaussian.New([]float64{0, 0}, mat.NewSymDense(2, []float64{1, 0.9, 0.9, 1}))
		if err != nil {
			panic(err)
		}
		return g
	})},
}

// Names lists the known tasks.
func Names() []string {
	var ns []string
	for n := range builders {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// New returns the task called name.
func New(name string, o Options) (*Task, error) {
	b, ok := builders[name]
	if !ok {
		return nil, fmt.Errorf("unknown task %q (known tasks: %s)", name, strings.Join(Names(), ", "))
	}
	t, err := b.make(o)
	if err != nil {
		return nil, err
	}
	t.Name, t.Description = name, b.desc
	return t, nil
}

// toyNN are the authors' settings for the toy: raw energy and gradient
// inputs, no α·Q² term, no offset, f_Q clamped to ±5 and D_f to [0, 5],
// networks with two hidden layers of 40 units (the paper says one; the code
// has two).
var toyNN = samplers.NNConfig{ClampQ: 5, DMax: 5, DScale: 1, EnergyScale: 1, GradScale: 1, MomentumScale: 1}

func gaussianTask(target func(Options) *gaussian.Gaussian) func(Options) (*Task, error) {
	return func(o Options) (*Task, error) {
		if o.TargetScale <= 0 {
			return nil, fmt.Errorf("target scale must be positive, got %v", o.TargetScale)
		}
		g := target(o)
		d := g.Dim()
		return &Task{
			Energy: g,
			Noise:  1,
			// the authors start toy chains uniformly in [0, 6]^D
			Init: func(rng *rand.Rand, k int) []float64 {
				x := make([]float64, d*k)
				for i := range x {
					x[i] = 6 * rng.Float64()
				}
				if d == 2 {
					for i := range x {
						x[i] -= 3
					}
				}
				return x
			},
			NewMonitor: func(k int) tasks.Monitor { return g.NewMonitor(k) },
			Defaults: Defaults{
				Chains: 50, Steps: 12000, EvalEvery: 100,
				StepSize: 0.025, Friction: 1,
				NN: toyNN, QHidden: []int{40, 40}, DHidden: []int{40, 40},
			},
		}, nil
	}
}
