package catalog

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// validations are the training set-ups' validation protocols by task,
// for train --help.
var validations = map[string]func() *Validation{
	"gaussian10":       toyValidation,
	"mnist-relu":       func() *Validation { return mnistValidation("mnist-valid") },
	"mnist-data-train": func() *Validation { return mnistValidation("mnist-data-valid") },
	"piano-gru":        musicValidation,
}

// ValidationProtocols describes the validation protocol of each training
// set-up that has one, a line each, by task name.
func ValidationProtocols() []string {
	var lines []string
	for _, name := range TrainingNames() {
		if v, ok := validations[name]; ok {
			lines = append(lines, name+": "+v().Describe())
		}
	}
	return lines
}

// Validation is a meta-training set-up's validation protocol: runs of a
// trained sampler, with the run settings of the task its evaluations use,
// on targets and with run seeds that no evaluation in experiments/ uses
// (the seeds among 1–10; evaluations report seeds 15 and above). train
// runs it every Every epochs and after the last, and keeps the networks of
// the epoch with the lowest Score.
type Validation struct {
	// Task is the task the runs sample, as New names it.
	Task string
	// Targets are the validation targets: options of Task (the generated
	// covariances of a toy, say), each with a name for the figures.
	Targets []ValidationTarget
	// Seeds are the run seeds, each run on every target.
	Seeds         []uint64
	Chains, Steps int
	// Metric names the monitor's metric read after the last step (lower is
	// better).
	Metric string
	// Every is the number of epochs between validations.
	Every int
	// Worst scores a result by its largest figure instead of the mean:
	// for bars that each target must meet.
	Worst bool
}

// ValidationTarget is one target of a Validation.
type ValidationTarget struct {
	Name    string
	Options Options
}

// ValidationResult is a trained sampler's validation.
type ValidationResult struct {
	// Figures are the metric of each run, target by target, each target's
	// runs in the order of Seeds; +Inf for a run that lost a chain.
	Figures []float64
	// Score is the mean of the figures, or the largest with
	// Validation.Worst: lower is better, +Inf when a run lost a chain.
	Score float64
}

// Names returns a name for each figure of a result, TARGET/seed-S, in
// the order of ValidationResult.Figures.
func (v *Validation) Names() []string {
	var names []string
	for _, t := range v.Targets {
		for _, s := range v.Seeds {
			names = append(names, fmt.Sprintf("%s/seed-%d", t.Name, s))
		}
	}
	return names
}

// Describe says in one line what the protocol runs, for train --help and
// the run's outputs.
func (v *Validation) Describe() string {
	var names []string
	for _, t := range v.Targets {
		names = append(names, t.Name)
	}
	return fmt.Sprintf("%s (%s), run seeds %v, %d chains, %d steps, %s %s after the last step, every %d epochs and after the last",
		v.Task, strings.Join(names, ", "), v.Seeds, v.Chains, v.Steps, v.reduction(), v.Metric, v.Every)
}

// Run validates the trained sampler tr: every target and seed, its runs
// shared out among GOMAXPROCS goroutines, with the data directory and
// dtype of base. The result does not depend on the number of goroutines.
func (v *Validation) Run(ctx context.Context, tr *nnsghmc.Trained, base Options) (*ValidationResult, error) {
	type job struct {
		opts Options
		seed uint64
	}
	var jobs []job
	for _, t := range v.Targets {
		o := t.Options
		o.DataDir, o.Dtype = base.DataDir, base.Dtype
		for _, s := range v.Seeds {
			jobs = append(jobs, job{o, s})
		}
	}
	figures := make([]float64, len(jobs))
	errs := make([]error, len(jobs))
	spans.Share(len(jobs), 1, func() (func(lo, hi int), func()) {
		return func(i, _ int) { figures[i], errs[i] = v.run(ctx, tr, jobs[i].opts, jobs[i].seed) }, nil
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if v.Worst {
		return &ValidationResult{Figures: figures, Score: slices.Max(figures)}, nil
	}
	score := 0.0
	for _, f := range figures {
		score += f
	}
	return &ValidationResult{Figures: figures, Score: score / float64(len(figures))}, nil
}

// reduction names how figures make the score: "mean" or "largest".
func (v *Validation) reduction() string {
	if v.Worst {
		return "largest"
	}
	return "mean"
}

// run is one validation run: the trained sampler with the task's NNSGHMC
// settings from the task's initial positions, v.Steps steps, the metric
// after the last. A chain that diverges gives +Inf.
func (v *Validation) run(ctx context.Context, tr *nnsghmc.Trained, o Options, seed uint64) (float64, error) {
	task, err := New(v.Task, o)
	if err != nil {
		return 0, err
	}
	target, err := task.NewTarget(v.Chains, task.Defaults.Noise)
	if err != nil {
		return 0, err
	}
	if c, ok := target.(interface{ Close() error }); ok {
		defer c.Close()
	}
	s := task.Defaults.NNSettings()
	s.Warn = func(string) {} // a validation is a figure, not a report
	kern, err := nnsghmc.New(target, tr, s)
	if err != nil {
		return 0, err
	}
	mon, err := task.NewMonitor(v.Chains)
	if err != nil {
		return 0, err
	}
	if c, ok := mon.(interface{ Close() error }); ok {
		defer c.Close()
	}
	rng := rand.New(rand.NewPCG(seed, 0x76616c6964)) // "valid"
	st, err := kern.Init(task.Init(rng, v.Chains), nil)
	if err != nil {
		return 0, err
	}
	for step := 1; step <= v.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		err := kern.Step(rng, st)
		if err == nil {
			err = mon.Observe(step, st.Theta)
		}
		if errors.Is(err, samplers.ErrDiverged) {
			return math.Inf(1), nil
		}
		if err != nil {
			return 0, err
		}
	}
	ms, err := mon.Metrics()
	if err != nil {
		return 0, err
	}
	for _, m := range ms {
		if m.Name == v.Metric {
			return m.Value, nil
		}
	}
	return 0, fmt.Errorf("validation: task %s reports no metric %q", v.Task, v.Metric)
}

// NNSettings are NNSGHMC's run settings on the task: d.NN with the
// task's step size (after its warm-up, when it has one) and α =
// AlphaCoef/η of the first step, as sample runs NNSGHMC without flags.
func (d Defaults) NNSettings() nnsghmc.Settings {
	s := d.NN
	eta := d.StepSize["nnsghmc"]
	first := eta
	s.StepSize = samplers.Constant(eta)
	if d.WarmupSteps > 0 {
		s.StepSize, first = samplers.Warmup(d.WarmupSteps, d.WarmupStepSize, eta), d.WarmupStepSize
	}
	if d.AlphaCoef > 0 {
		s.Alpha = d.AlphaCoef / first
	}
	return s
}
