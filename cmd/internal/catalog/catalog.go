// Package catalog names the sampling problems the commands know, with the
// defaults the paper and the authors' code use for each.
package catalog

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/train"
)

// Task is a named sampling problem.
type Task struct {
	Name        string
	Description string
	Dim         int // dimension D of θ
	// NewTarget returns the target for k chains: the stochastic gradients
	// that drive the samplers, with gradient noise of standard deviation
	// noise injected (Gaussian tasks only; data tasks have their minibatch
	// noise and refuse noise > 0).
	NewTarget func(k int, noise float64) (samplers.Target, error)
	// NewLossTarget, if not nil, returns the target that the meta-training
	// losses use (the toy's losses use the exact gradient).
	NewLossTarget func(k int) (samplers.Target, error)
	// Init draws the initial positions of k chains (coordinate-major).
	Init func(rng *rand.Rand, k int) []float64
	// NewMonitor returns the task's metrics for k chains.
	NewMonitor func(k int) (tasks.Monitor, error)
	// Score, when not nil, writes the exact score ∇ log π(θ) of one
	// position, for tuning the step size by the kernel Stein discrepancy
	// (sample --tune-step); nil for the data tasks, whose full-data
	// gradient a pilot run cannot afford.
	Score    func(theta, score []float64)
	Defaults Defaults
	// Training is how the paper and the authors' code meta-train NNSGHMC
	// on this task; nil if they do not.
	Training *Training
	// Energy is the task's energy when it is one graph (Gaussian and MLP
	// tasks), for pictures of it.
	Energy tasks.Energy
	// keepsPositions: the monitor keeps every position of every step
	// (SampleBytes).
	keepsPositions bool
	// hidden is the GRU tasks' width, for CheckSample's and CheckTrain's
	// messages (0 for other tasks).
	hidden int
}

// Defaults are a task's default run settings.
type Defaults struct {
	Chains, Steps, EvalEvery int
	// StepSize is η per sampler name ("sgld", "sghmc", "psgld", "nnsghmc",
	// and the optimisers "adam", "sgdm", "santa").
	StepSize map[string]float64
	Friction float64 // SGHMC's C
	// SGHMCAlpha, when positive, sets SGHMC's C = SGHMCAlpha/η (the
	// authors' velocity friction α).
	SGHMCAlpha float64
	Noise      float64 // injected gradient noise σ (Gaussian tasks)
	// DataSize is N, for converting per-batch learning rates to step sizes
	// (1 for tasks without data).
	DataSize float64
	// NN are NNSGHMC's run settings on this task but the step size, which
	// the command sets (with α = AlphaCoef/η when AlphaCoef is positive).
	// NN.Beta is the offset's size; its sign is the trained f_Q's
	// (Offset).
	NN nnsghmc.Settings
	// AlphaCoef, when positive, sets NNSGHMC's α = AlphaCoef/η with the η of
	// the first phase (the authors' α = 0.01/η).
	AlphaCoef float64
	// NNInputs, NNDScale, QHidden and DHidden make NNSGHMC's random
	// networks, for a run without a trained sampler.
	NNInputs         nnsghmc.Inputs
	NNDScale         float64
	QHidden, DHidden []int
	// WarmupSteps and WarmupStepSize: NNSGHMC starts with a smaller step
	// for this many steps (the authors' first data epochs).
	WarmupSteps    int
	WarmupStepSize float64
}

// Training is a task's meta-training set-up.
type Training struct {
	Config   train.Config
	StepSize float64 // η of the unrolled sampler
	// NN holds NNSGHMC's settings except StepSize; α is set from
	// AlphaCoef when that is positive.
	NN               nnkernel.Settings
	AlphaCoef        float64
	QHidden, DHidden []int
	// QStart, when not 0, makes random f_Q start as the constant QStart:
	// its output layer's weights 0 and bias QStart, the hidden layers
	// drawn as usual. The sampler then starts as SGHMC with Q_f = QStart,
	// one-signed at every energy; PyTorch's initialisation can give an
	// f_Q that crosses 0 near the chains' starting energy, where Q_f ≈ 0
	// leaves θ still and training stalls.
	QStart float64
	// Init, when not nil, draws the chains' fresh positions for training
	// (else Task.Init).
	Init func(rng *rand.Rand, k int) []float64
	// NewTarget, when not nil, builds the target that training runs the
	// sampler on (else Task.NewTarget).
	NewTarget func(k int, noise float64) (samplers.Target, error)
	// Validation is the set-up's validation protocol, by which train
	// chooses the epoch it writes; nil for none.
	Validation *Validation
}

// Sampler gives meta-training its starting NNSGHMC: random networks drawn
// from seed (f_Q constant when QStart is set), or, when from names a
// trained-sampler file, that file's networks, with the set-up's input
// scalings and s_D; and the set-up's settings with step size η (α =
// AlphaCoef/η when AlphaCoef is positive).
func (t *Training) Sampler(stepSize float64, seed uint64, from string) (*nnsghmc.Trained, nnsghmc.Settings, error) {
	nn := t.NN
	s := nnsghmc.Settings{StepSize: samplers.Constant(stepSize), Alpha: nn.Alpha, Beta: nn.Beta, C: nn.C, ClampQ: nn.ClampQ, DMax: nn.DMax, Gamma: nnsghmc.GammaExact}
	if t.AlphaCoef > 0 {
		s.Alpha = t.AlphaCoef / stepSize
	}
	in := nnsghmc.Inputs{EnergyScale: nn.EnergyScale, GradScale: nn.GradScale, MomentumScale: nn.MomentumScale}
	start := nnsghmc.RandomTrained(t.QHidden, t.DHidden, in, nn.DScale, rand.New(rand.NewPCG(seed, 0x6e657473))) // "nets"
	if t.QStart != 0 {
		last := len(start.Q.W) - 1
		clear(start.Q.W[last])
		start.Q.B[last][0] = t.QStart
	}
	if from != "" {
		f, err := nnsghmc.Load(from)
		if err != nil {
			return nil, s, err
		}
		start.Q, start.D = f.Q, f.D
	}
	return start, s, nil
}

// TrainingProblem builds the meta-training problem for k chains: the
// target the sampler runs on (Training.NewTarget, else NewTarget, with the
// task's gradient noise), the losses' target (NewLossTarget, if any) and
// the chains' initial distribution (Training.Init, else Init).
func (t *Task) TrainingProblem(k int) (train.Problem, error) {
	newTarget := t.NewTarget
	if t.Training.NewTarget != nil {
		newTarget = t.Training.NewTarget
	}
	target, err := newTarget(k, t.Defaults.Noise)
	if err != nil {
		return train.Problem{}, err
	}
	p := train.Problem{Target: target, Init: t.Init}
	if t.Training.Init != nil {
		p.Init = t.Training.Init
	}
	if t.NewLossTarget != nil {
		if p.LossTarget, err = t.NewLossTarget(k); err != nil {
			return train.Problem{}, err
		}
	}
	return p, nil
}

// Options select a task's variant.
type Options struct {
	TargetSeed  uint64  // seed of a generated target (the toy covariances)
	TargetScale float64 // scale s of the 20-D toy's L = s·N(0, 1)
	// TargetCov, when not empty, is a file holding the toy target's
	// covariance (gaussian10, gaussian20), such as the authors' own; it
	// replaces the seeded one.
	TargetCov string
	DataDir   string // data directory ("" for $METASGMCMC_DATA, else ./data)
	Hidden    int    // GRU width (0 for the task's)
	// Valid, for the GRU tasks, also scores the validation split
	// (valid_nll), on which the paper tunes NNSGHMC's offset β.
	Valid bool
	// InitialState, for the GRU tasks, learns the state before the first
	// frame, h_0 = tanh(b₀) with H more parameters (gru.Config.InitialState).
	InitialState bool
	// ResetAfter, for the GRU tasks, applies the reset gate after the
	// recurrent product, r⊙(h·U_h) (gru.Config.ResetAfter).
	ResetAfter bool
	Dtype      graph.Dtype
	// Download, for the MNIST tasks, fetches missing data files from
	// their canonical location first (verified by sha256).
	Download bool
}

// DefaultOptions are the options of the commands' defaults.
var DefaultOptions = Options{TargetSeed: 1, TargetScale: 0.6, Dtype: graph.Float64}

// RegisterFlags adds the commands' flags that select a task's variant and
// where its data are (--data-dir, --download, --hidden, --target-seed,
// --target-scale, --target-cov) to fs, with DefaultOptions' defaults.
func (o *Options) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "data-dir", "", "data directory (default: $METASGMCMC_DATA, else ./data)")
	fs.BoolVar(&o.Download, "download", false, "MNIST tasks: fetch missing data files from their canonical location, verified by sha256")
	fs.IntVar(&o.Hidden, "hidden", 0, "hidden units of the GRU tasks (default: the task's)")
	fs.Uint64Var(&o.TargetSeed, "target-seed", DefaultOptions.TargetSeed, "seed of generated targets (the toy covariances)")
	fs.Float64Var(&o.TargetScale, "target-scale", DefaultOptions.TargetScale, "scale s of the 20-D Gaussian's L = s·N(0,1)")
	fs.StringVar(&o.TargetCov, "target-cov", "", "toy Gaussians: read the covariance from FILE (one row per line, as the authors' Cov_* files) instead of drawing it from --target-seed")
}

type builder struct {
	desc   string
	trains bool // the task has a Training set-up
	make   func(Options) (*Task, error)
}

var builders = map[string]builder{}

// register adds the task name; trains says whether it has a meta-training
// set-up (Task.Training).
func register(name, desc string, trains bool, make func(Options) (*Task, error)) {
	builders[name] = builder{desc: desc, trains: trains, make: make}
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

// TrainingNames lists the tasks that have a meta-training set-up.
func TrainingNames() []string {
	var ns []string
	for n, b := range builders {
		if b.trains {
			ns = append(ns, n)
		}
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
	if o.Dtype == (graph.Dtype{}) {
		o.Dtype = graph.Float64
	}
	t, err := b.make(o)
	if err != nil {
		return nil, err
	}
	t.Name, t.Description = name, b.desc
	return t, nil
}

// optionFlags are the commands' flags of the Options that only some tasks
// read, with the tasks that read them.
var optionFlags = []struct {
	flag, kind string
	reads      func(task string) bool
}{
	{"hidden", "GRU", isGRU},
	{"valid", "GRU", isGRU},
	{"initial-state", "GRU", isGRU},
	{"reset-after", "GRU", isGRU},
	{"download", "MNIST", func(task string) bool { return strings.HasPrefix(task, "mnist-") }},
	{"target-cov", "toy Gaussian (gaussian10, gaussian20)", isToy},
	{"target-seed", "toy Gaussian (gaussian10, gaussian20)", isToy},
	{"target-scale", "20-D toy Gaussian (gaussian20)", func(task string) bool { return task == "gaussian20" }},
}

func isToy(task string) bool { return task == "gaussian10" || task == "gaussian20" }

func isGRU(task string) bool { return strings.HasSuffix(task, "-gru") }

// OptionFlagsMatch refuses a flag of Options (--hidden, --valid,
// --initial-state, --reset-after, --download, --target-cov, --target-seed, --target-scale) set for a task
// that does not read it, which would otherwise
// be silently ignored; set reports whether the command line set a flag.
func OptionFlagsMatch(task string, set func(flag string) bool) error {
	for _, f := range optionFlags {
		if set(f.flag) && !f.reads(task) {
			return fmt.Errorf("--%s is a flag of the %s tasks; task %s does not use it", f.flag, f.kind, task)
		}
	}
	if set("target-cov") && (set("target-seed") || set("target-scale")) {
		return fmt.Errorf("--target-cov replaces the covariance that --target-seed and --target-scale draw; give one or the other")
	}
	return nil
}

// sameStep returns the same step size η for every SG-MCMC sampler and for
// Adam, and η² for SGD with momentum and Santa: their updates are
// first-order in the step, as SGHMC's in its velocity form, whose step is
// η² (samplers.SGDM).
func sameStep(eta float64) map[string]float64 {
	return map[string]float64{"sgld": eta, "sghmc": eta, "psgld": eta, "nnsghmc": eta,
		"adam": eta, "sgdm": eta * eta, "santa": eta * eta}
}

var errNoNoise = fmt.Errorf("this task has minibatch noise; injected gradient noise (--noise) is for the Gaussian tasks")

// compiled returns a NewTarget for a graph energy.
func compiled(e tasks.Energy, dt graph.Dtype, noiseAllowed bool) func(k int, noise float64) (samplers.Target, error) {
	return func(k int, noise float64) (samplers.Target, error) {
		if noise > 0 && !noiseAllowed {
			return nil, errNoNoise
		}
		ev, err := tasks.Compile(e, k, dt)
		if err != nil {
			return nil, err
		}
		if noise > 0 {
			return tasks.GradientNoise{Target: ev, Sigma: noise}, nil
		}
		return ev, nil
	}
}
