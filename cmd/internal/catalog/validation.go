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
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// validations are the training set-ups' validation protocols by task,
// for train --help.
var validations = map[string]func() *Validation{
	"gaussian10":       toyValidation,
	"mnist-relu":       ntTraining.protocol,
	"mnist-data-train": dataTraining.protocol,
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
	// better), a run's figure when Bars is empty.
	Metric string
	// Bars, when given, make a run's figure the largest of its metrics
	// each over its bar (the bar over it for a bar to reach): at most 1
	// when the run meets every bar.
	Bars []Bar
	// Start, when not nil, is a bar on a metric read at an earlier step,
	// Start.Step: a run that misses it has its figure multiplied by its
	// ratio to the bar, so that a sampler cannot win by its end alone
	// while its start misses the bar. The run's metrics record the value
	// as METRIC@STEP.
	Start *Bar
	// Every is the number of epochs between validations.
	Every int
	// Worst scores a result by its largest figure instead of the mean:
	// for bars that each target must meet.
	Worst bool
	// Thermostat, when not 0, runs NNSGHMC under this thermostat
	// (nnsghmc.Settings.Thermostat), as the set-up's evaluations do.
	Thermostat float64
	// AdaptiveFriction, when not 0, runs NNSGHMC with this adaptive
	// friction (nnsghmc.Settings.AdaptiveFriction) where the sampler has
	// the exponential friction step, as the set-up's evaluations do (a
	// sampler of the explicit step, which cannot take it, runs without).
	AdaptiveFriction float64
}

// Bar is a bound a validation run's metric must keep: at most Bound, or
// with AtLeast at least Bound; Step is the step it is read at
// (Validation.Start), 0 for after the last.
type Bar struct {
	Metric  string
	Bound   float64
	AtLeast bool
	Step    int
}

// ratio is value's distance to the bar as a factor, at most 1 when value
// meets it.
func (b Bar) ratio(value float64) float64 {
	if b.AtLeast {
		return b.Bound / value
	}
	return value / b.Bound
}

// String names the ratio: "kl/0.03", "50/ess", "test_error@100/0.14".
func (b Bar) String() string {
	if b.AtLeast {
		return fmt.Sprintf("%g/%s", b.Bound, b.name())
	}
	return fmt.Sprintf("%s/%g", b.name(), b.Bound)
}

// name is the bar's metric, METRIC@STEP when it is read at a step.
func (b Bar) name() string {
	if b.Step > 0 {
		return fmt.Sprintf("%s@%d", b.Metric, b.Step)
	}
	return b.Metric
}

// ValidationTarget is one target of a Validation.
type ValidationTarget struct {
	Name    string
	Options Options
}

// ValidationResult is a trained sampler's validation.
type ValidationResult struct {
	// Figures are each run's figure (its Metric, or its largest ratio
	// to the Bars), target by target, each target's
	// runs in the order of Seeds; +Inf for a run that lost a chain (one
	// diverged, or its momenta ran away: see Validation.run).
	Figures []float64
	// Values are each run's metrics after its last step (those of the
	// Bars, or Metric, and the hottest chain's kinetic temperature,
	// kinetic_temperature_max) by name, in the order of Figures: nil for
	// a run whose chain diverged or whose figure was known.
	Values []map[string]float64
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
	return fmt.Sprintf("%s (%s), run seeds %v, %s, every %d epochs and after the last",
		v.Task, strings.Join(names, ", "), v.Seeds, v.figureSpec(), v.Every)
}

// figureSpec is the part of Describe that says how each run's figure is
// made: its chains, steps and figure.
func (v *Validation) figureSpec() string {
	thermostat := ""
	if v.Thermostat != 0 {
		thermostat = fmt.Sprintf(" under the thermostat τ = %v (Q_f·τ/T where T > τ)", v.Thermostat)
	}
	if v.AdaptiveFriction != 0 {
		thermostat += fmt.Sprintf(" with the adaptive friction κ = %v (on the exponential friction step)", v.AdaptiveFriction)
	}
	return fmt.Sprintf("%d chains, %d steps%s, %s after the last step (+Inf where a chain diverged or its kinetic temperature ends above %v)",
		v.Chains, v.Steps, thermostat, v.ScoreName(), samplers.RunawayTemperature)
}

// SameFigures reports whether the validation that desc describes (a
// Describe line, as an epoch's file records it) made each run's figure as
// v does, with the same chains, steps and figure: only then may a figure
// it made stand for v's run of the same name.
func (v *Validation) SameFigures(desc string) bool {
	return strings.Contains(desc, ", "+v.figureSpec()+", ")
}

// ScoreName says how a result's score is made: "mean nll", "largest kl",
// "largest max(kl/0.03, 50/ess)", "mean test_nll·max(1,
// test_error@100/0.14)".
func (v *Validation) ScoreName() string {
	figure := v.Metric
	if len(v.Bars) > 0 {
		var parts []string
		for _, b := range v.Bars {
			parts = append(parts, b.String())
		}
		figure = "max(" + strings.Join(parts, ", ") + ")"
	}
	if v.Start != nil {
		figure += "·max(1, " + v.Start.String() + ")"
	}
	return v.reduction() + " " + figure
}

// Run validates the trained sampler tr: every target and seed, its runs
// shared out among GOMAXPROCS goroutines, with the data directory and
// dtype of base. A run whose figure known holds, by its name in Names
// (from an earlier validation of the same networks), is not run again;
// known may be nil. The result does not depend on the number of
// goroutines.
func (v *Validation) Run(ctx context.Context, tr *nnsghmc.Trained, base Options, known map[string]float64) (*ValidationResult, error) {
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
	names := v.Names()
	figures := make([]float64, len(jobs))
	values := make([]map[string]float64, len(jobs))
	errs := make([]error, len(jobs))
	spans.Share(len(jobs), 1, func() (func(lo, hi int), func()) {
		return func(i, _ int) {
			if f, ok := known[names[i]]; ok {
				figures[i] = f
				return
			}
			figures[i], values[i], errs[i] = v.run(ctx, tr, jobs[i].opts, jobs[i].seed)
		}, nil
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if v.Worst {
		return &ValidationResult{Figures: figures, Values: values, Score: slices.Max(figures)}, nil
	}
	score := 0.0
	for _, f := range figures {
		score += f
	}
	return &ValidationResult{Figures: figures, Values: values, Score: score / float64(len(figures))}, nil
}

// reduction names how figures make the score: "mean" or "largest".
func (v *Validation) reduction() string {
	if v.Worst {
		return "largest"
	}
	return "mean"
}

// run is one validation run: the trained sampler with the task's NNSGHMC
// settings from the task's initial positions, v.Steps steps, its figure
// and the metrics it is made of after the last. A chain that diverges
// gives +Inf and no metrics; so does, with the hottest chain's kinetic
// temperature as its metric, a chain whose kinetic temperature ends above
// samplers.RunawayTemperature: its momenta ran away, and its draws are
// nothing like the target's while the ensemble's metrics can look
// healthy.
func (v *Validation) run(ctx context.Context, tr *nnsghmc.Trained, o Options, seed uint64) (float64, map[string]float64, error) {
	if v.Start != nil && (v.Start.Step < 1 || v.Start.Step > v.Steps) {
		return 0, nil, fmt.Errorf("validation: the start bar's step %d is not among the run's %d steps", v.Start.Step, v.Steps)
	}
	task, err := New(v.Task, o)
	if err != nil {
		return 0, nil, err
	}
	target, err := task.NewTarget(v.Chains, task.Defaults.Noise)
	if err != nil {
		return 0, nil, err
	}
	if c, ok := target.(interface{ Close() error }); ok {
		defer c.Close()
	}
	s := task.Defaults.NNSettings(tr)
	s.Warn = func(string) {} // a validation is a figure, not a report
	if v.Thermostat != 0 {
		s.Thermostat = v.Thermostat
	}
	if v.AdaptiveFriction != 0 && tr.Domain.Friction != nnsghmc.FrictionExplicit {
		s.AdaptiveFriction = v.AdaptiveFriction
	}
	kern, err := nnsghmc.New(target, tr, s)
	if err != nil {
		return 0, nil, err
	}
	mon, err := task.NewMonitor(v.Chains)
	if err != nil {
		return 0, nil, err
	}
	if c, ok := mon.(interface{ Close() error }); ok {
		defer c.Close()
	}
	rng := rand.New(rand.NewPCG(seed, 0x76616c6964)) // "valid"
	st, err := kern.Init(task.Init(rng, v.Chains), nil)
	if err != nil {
		return 0, nil, err
	}
	var start float64 // Start's metric at its step
	for step := 1; step <= v.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return 0, nil, err
		}
		err := kern.Step(rng, st)
		if err == nil {
			err = mon.Observe(step, st.Theta)
		}
		if errors.Is(err, samplers.ErrDiverged) {
			return math.Inf(1), nil, nil
		}
		if err != nil {
			return 0, nil, err
		}
		if v.Start != nil && step == v.Start.Step {
			ms, err := mon.Metrics()
			if err != nil {
				return 0, nil, err
			}
			var ok bool
			if start, ok = metric(ms, v.Start.Metric); !ok {
				return 0, nil, fmt.Errorf("validation: task %s reports no metric %q at step %d", v.Task, v.Start.Metric, step)
			}
		}
	}
	temps, err := samplers.KineticTemperatures(st.P, v.Chains)
	if err != nil {
		return 0, nil, err
	}
	hottest := slices.Max(temps)
	if hottest > samplers.RunawayTemperature {
		return math.Inf(1), map[string]float64{kineticTemperatureMax: hottest}, nil
	}
	figure, values, err := v.end(mon)
	if err != nil {
		return 0, nil, err
	}
	values[kineticTemperatureMax] = hottest
	if v.Start == nil {
		return figure, values, nil
	}
	values[v.Start.name()] = start
	return figure * max(1, v.Start.ratio(start)), values, nil
}

// kineticTemperatureMax names the hottest chain's kinetic temperature
// after a validation run's last step among the run's metrics.
const kineticTemperatureMax = "kinetic_temperature_max"

// metric is the value of the metric name among ms.
func metric(ms []tasks.Metric, name string) (float64, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

// end is a run's figure from its metrics after the last step, Start
// aside, and the metrics it is made of.
func (v *Validation) end(mon tasks.Monitor) (float64, map[string]float64, error) {
	ms, err := mon.Metrics()
	if err != nil {
		return 0, nil, err
	}
	summarised := false
	value := func(name string) (float64, error) {
		for {
			if x, ok := metric(ms, name); ok {
				return x, nil
			}
			if summarised {
				return 0, fmt.Errorf("validation: task %s reports no metric %q", v.Task, name)
			}
			// The run's diagnostics (ESS) are in its summary.
			if ms, err = mon.Summary(); err != nil {
				return 0, err
			}
			summarised = true
		}
	}
	if len(v.Bars) == 0 {
		x, err := value(v.Metric)
		if err != nil {
			return 0, nil, err
		}
		return x, map[string]float64{v.Metric: x}, nil
	}
	figure := math.Inf(-1)
	values := map[string]float64{}
	for _, b := range v.Bars {
		x, err := value(b.Metric)
		if err != nil {
			return 0, nil, err
		}
		figure = max(figure, b.ratio(x))
		values[b.Metric] = x
	}
	return figure, values, nil
}

// NNSettings are NNSGHMC's run settings on the task for the trained
// sampler tr: d.NN with the offset β = d.Offset(tr) and the task's step
// sizes (SetSteps), as sample runs NNSGHMC without flags.
func (d Defaults) NNSettings(tr *nnsghmc.Trained) nnsghmc.Settings {
	s := d.NN
	s.Beta = d.Offset(tr)
	SetSteps(&s, d.StepSize["nnsghmc"], d.WarmupSteps, d.WarmupStepSize, d.AlphaCoef)
	return s
}

// SetSteps sets the step sizes of the NNSGHMC settings s: η, after a
// warm-up of warmupSteps steps at warmupEta when warmupSteps > 0, and
// α = alphaCoef/η₀ with η₀ the first step's size when alphaCoef > 0.
func SetSteps(s *nnsghmc.Settings, eta float64, warmupSteps int, warmupEta, alphaCoef float64) {
	first := eta
	s.StepSize = samplers.Constant(eta)
	if warmupSteps > 0 {
		s.StepSize, first = samplers.Warmup(warmupSteps, warmupEta, eta), warmupEta
	}
	if alphaCoef > 0 {
		s.Alpha = alphaCoef / first
	}
}

// Offset is the task's offset β for the trained sampler tr: the size of
// d.NN.Beta with the sign of tr's f_Q where the chains run
// (nnsghmc.Trained.QSign), so that it enlarges |Q_f| = |β + f_Q|
// whichever sign training gave f_Q. A β of the other sign first brings
// Q_f towards 0 and slows the chains.
func (d Defaults) Offset(tr *nnsghmc.Trained) float64 {
	if d.NN.Beta == 0 {
		return 0
	}
	return math.Abs(d.NN.Beta) * tr.QSign()
}
