// Command sample runs an SG-MCMC sampler on a task and writes its metrics.
//
//	go run ./cmd/sample -task gaussian20 -sampler nnsghmc -chains 50 -steps 12000 -out DIR
//
// It writes into --out: metrics.csv (one row per evaluation point: the
// task's metrics, and for SGHMC and NNSGHMC the chains' kinetic temperature,
// kinetic_temperature and the hottest chain's kinetic_temperature_max,
// which a correct sampler keeps at 1 after burn-in, and the share of
// coordinates running hot across the chains, kinetic_hot_fraction, which it
// keeps at 0.001 (samplers.HotFraction); the first evaluation with a chain
// above samplers.RunawayTemperature, and the end of a run with one, warn of
// it),
// summary.json (the run, its final metrics, the resolved flags and the code
// it was built from) and metrics.png/.svg (the metrics against steps).
//
// With --trace-every N it streams a draw every N steps to trace.bin as the
// run goes (samplers/trace's format, written in place; memory one draw):
// the first --trace-coords coordinates of θ (default 100; 0 for all) of
// every chain, and the sample stat lp (−U). Every draw is handed to the
// operating system as it is taken, so a process that is killed leaves them
// all readable. At the end of the run, also one stopped by a divergence or
// a signal, it completes the stream and, in a build with the tag netcdf
// (go build -tags netcdf ./cmd/sample, with libnetcdf-dev), writes the
// draws as ArviZ InferenceData to trace.nc, which Python opens with
// arviz.from_netcdf; convert --trace converts a trace.bin later.
// metrics.csv grows by a complete row at each evaluation, so a long run can
// be followed; the other files are written atomically. Flags may also come
// from --flagfile FILE.
//
// It also writes config.json (the command, the resolved flags, and the
// absolute path and SHA-256 of each input file: --meta, --target-cov) at
// the start and, on the GRU and MNIST tasks, checkpoint.json at the
// evaluations (the first, then at most one every five minutes, and the
// last) and when a signal stops the run, after the rows of metrics.csv and
// the draws of trace.bin that it counts are on disk. --resume DIR continues the run
// in DIR from its checkpoint with its flags and the very input files it
// started with (--steps may differ, to extend it; a flag that contradicts
// the run, or an input file that has changed, is refused), drops what was
// written after the checkpoint (saying so when rows go), appends to its
// metrics.csv and trace.bin and writes summary.json at the end: the metrics
// and draws are those of an uninterrupted run, bit for bit, but the
// seconds. The Gaussian tasks, whose monitor accumulates over the run (see
// tasks.Resumer), cannot resume.
//
// An --out that holds a sample run is refused unless --force, which deletes
// that run's files first; a directory that holds anything else, a training
// run included, is refused, and so is one that another run is writing (a
// lock file, .lock, marks it; the message names its PID). SIGINT, SIGTERM
// or SIGHUP stops the run: it writes its outputs so far, with the error in
// summary.json, and exits with status 130, 143 or 129. When standard error
// is not a terminal, a line per evaluation reports progress and the time
// left; either way the last line says where the outputs are.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/plot"
	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/graph/openblas"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/gru"
)

func main() { cli.Main("sample", run) }

// options are the command's flags.
type options struct {
	task, sampler, out, meta, gamma string
	resume                          string
	chains, steps, evalEvery        int
	traceEvery, traceCoords         int
	stepSize, lr, friction, noise   float64
	warmupSteps, patience           int
	warmupStepSize, warmupLR        float64
	alphaCoef, sghmcAlpha           float64
	seed                            uint64
	quiet, float32, force, tuneStep bool
	target                          catalog.Options
	nn                              nnFlags
	psgldDecay, psgldLambda         float64
	santaExplore                    int
	adamChen                        bool
	santaAnneal                     float64
	// warn receives the kernel's warnings (samplers.Warn)
	warn samplers.Warn
}

func run(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("sample", pflag.ContinueOnError)
	var o options
	fs.StringVar(&o.task, "task", "gaussian20", "task to sample: one of "+fmt.Sprint(catalog.Names()))
	fs.StringVar(&o.sampler, "sampler", "nnsghmc", "sampler: "+samplerList(func(s *sampler) string { return s.name }))
	fs.IntVar(&o.chains, "chains", 0, "number of parallel chains (default: the task's)")
	fs.IntVar(&o.steps, "steps", 0, "number of sampler steps (default: the task's)")
	fs.IntVar(&o.evalEvery, "eval-every", 0, "steps between evaluation points (default: the task's)")
	fs.Float64Var(&o.stepSize, "step-size", 0, "discretisation step η (default: the task's)")
	fs.Float64Var(&o.lr, "lr", 0, "per-batch learning rate of data tasks, from which η follows ("+lrConversions()+")")
	o.target.RegisterFlags(fs)
	fs.BoolVar(&o.target.Valid, "valid", false, "GRU tasks: also score the validation split, as valid_nll (the paper tunes β on Piano's)")
	fs.BoolVar(&o.target.InitialState, "initial-state", false, "GRU tasks: learn the state before the first frame, h₀ = tanh(b₀) with H more parameters b₀ (the GRU of Chen et al. 2016), instead of h₀ = 0")
	fs.BoolVar(&o.target.ResetAfter, "reset-after", false, "GRU tasks: apply the reset gate after the recurrent product, ĥ = tanh(x·W_h + r⊙(h·U_h) + b_h) (the GRU of Chen et al. 2016), instead of tanh(x·W_h + (r⊙h)·U_h + b_h) (Cho et al. 2014)")
	fs.BoolVar(&o.float32, "float32", false, "evaluate energies in float32")
	fs.IntVar(&o.patience, "patience", 0, "GRU tasks with --valid: stop once valid_nll has not improved for `N` evaluations in a row (the paper's early stopping; summary.json records the best valid_nll, its step and test_nll there either way); 0: run all --steps")
	fs.Float64Var(&o.noise, "noise", -1, "standard deviation σ of gradient noise injected into Gaussian tasks (default: the task's)")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed: the same seed and flags give bit-identical output")
	fs.StringVar(&o.out, "out", "", "output directory (required, but with --resume)")
	fs.StringVar(&o.resume, "resume", "", "continue the run stopped in `DIR` (by a signal, or a session that ended) from its last checkpoint, with its flags (outputs go there too): it gives the metrics of an uninterrupted run; only --steps may differ, to extend a run (and --quiet, --data-dir); not the Gaussian tasks")
	fs.BoolVar(&o.force, "force", false, "replace the run already in --out: its files are deleted first")
	fs.BoolVar(&o.tuneStep, "tune-step", false, "choose the step size by the kernel Stein discrepancy of pilot runs at η/16 … 16η around the task's or --step-size's η (samplers.TuneStepSize; tasks with an exact score: the Gaussian tasks)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress bar, nor progress lines when standard error is not a terminal")
	fs.IntVar(&o.traceEvery, "trace-every", 0, "stream a draw of every chain every `N` steps to trace.bin as the run goes (memory: one draw) and, in a build with -tags netcdf, write the draws at the end as ArviZ InferenceData to trace.nc (else convert --trace does it later); 0: no trace")
	fs.IntVar(&o.traceCoords, "trace-coords", defaultTraceCoords, "what --trace-every traces: the first `N` coordinates of θ of each chain, 8·chains·N bytes a draw; 0: all")
	registerSamplerFlags(fs, &o)
	cli.SetUsage(fs, cli.Help{Name: "sample", Synopsis: "sample [flags] [--out DIR | --resume DIR]",
		Description: "runs an SG-MCMC sampler (" + samplerList(labelIf(false)) + ") or, for reference, an optimiser on every chain (" +
			samplerList(labelIf(true)) + ") on a task and writes its metrics into --out"})
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	var cp *checkpoint
	if o.resume != "" {
		switch {
		case fs.Changed("out") && o.out != o.resume:
			return cli.Usagef("--resume writes into the run's own directory; drop --out")
		case o.force:
			return cli.Usagef("--force replaces a run and --resume continues it: give one of them")
		}
		o.out = o.resume
		if err := runKind.CheckResume(o.resume); err != nil {
			return err
		}
		if err := resumption.Apply(fs, o.resume); err != nil {
			return err
		}
	}
	if err := resumption.Absolute(fs); err != nil {
		return err
	}
	if o.out == "" {
		return cli.Usagef("--out DIR is required")
	}
	if o.float32 {
		o.target.Dtype = graph.Float32
	}
	if err := catalog.OptionFlagsMatch(o.task, fs.Changed); err != nil {
		return cli.Usagef("%v", err)
	}
	task, err := catalog.New(o.task, o.target)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if err := o.resolve(fs, task); err != nil {
		return err
	}
	if err := task.CheckSample(o.chains, o.steps, o.evalEvery); err != nil {
		return cli.Usagef("%v", err)
	}

	target, err := task.NewTarget(o.chains, o.noise)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	// the kernel's warnings: on the progress report, and in summary.json
	var bar *cli.Progress
	var warnings []string
	o.warn = func(msg string) {
		warnings = append(warnings, msg)
		if bar != nil && !o.quiet {
			bar.Note(msg)
			return
		}
		fmt.Fprintln(os.Stderr, "sample: warning: "+msg)
	}
	var tuned *samplers.TuneResult
	if o.tuneStep {
		if tuned, err = o.tune(ctx, fs, task); err != nil {
			return err
		}
	}
	kernel, label, err := o.kernel(fs, task, target)
	if err != nil {
		return err
	}
	var settings map[string]any        // the sampler's own entries of summary.json
	smp, _ := lookupSampler(o.sampler) // o.kernel has found it
	if smp.settings != nil {
		settings = smp.settings(&o, kernel)
	}
	mon, err := task.NewMonitor(o.chains)
	if err != nil {
		return err
	}
	if c, ok := mon.(io.Closer); ok {
		defer c.Close()
	}
	// a run checkpoints only what it can resume: its monitor restores
	// from the positions
	resumer, resumable := mon.(tasks.Resumer)
	d := task.Dim
	if o.resume != "" {
		if !resumable {
			return cli.Usagef("cannot resume %s: the monitor of task %s accumulates its metrics over the run and cannot be restored (the GRU and MNIST tasks' runs resume); start a new run into another --out", o.resume, o.task)
		}
		if cp, err = readCheckpoint(o.resume); err != nil {
			return err
		}
		if err := cp.validate(d, o.chains); err != nil {
			return cli.Usagef("checkpoint %s is not valid: %v; %s", filepath.Join(o.resume, checkpointFile), err, damaged)
		}
		if o.steps < cp.State.Steps {
			return cli.Usagef("--steps %d is before the checkpoint of the run in %s, at step %d", o.steps, o.resume, cp.State.Steps)
		}
		if err := checkFinished(o.resume, cp.State.Steps, o.steps); err != nil {
			return err
		}
	} else if err := runKind.Check(o.out, o.force); err != nil {
		return err
	}
	inputs, err := resumption.Inputs(fs)
	if err != nil {
		return err
	}
	out, err := cli.OpenOutDir(o.out) // only now: no usage error leaves a directory behind
	if err != nil {
		return err
	}
	defer out.Close()
	if o.resume != "" {
		err = out.RemoveTemps(runKind)
	} else {
		err = out.Replace(runKind, o.force)
	}
	if err != nil {
		return err
	}

	pcg := rand.NewPCG(o.seed, 0x73616d706c65) // "sample"
	rng := rand.New(pcg)
	var st *samplers.State
	if cp != nil {
		if st, err = cp.restore(kernel, pcg, target); err != nil {
			return cli.Usagef("cannot resume %s: checkpoint %s: %v; its config.json and checkpoint.json disagree (edited, or written by another version of this program): continue it with that version, or start afresh into another --out", o.resume, checkpointFile, err)
		}
		// the run's warnings so far, those of setting it up again among them
		warnings = slices.Clone(cp.Warnings)
		if w, ok := kernel.(samplers.WarnsOnce); ok {
			w.Warned().Restore(cp.Warned)
		}
	} else if st, err = kernel.Init(task.Init(rng, o.chains), nil); err != nil {
		return err
	}
	done := st.Steps // the steps before this process's

	var header []string
	var rows [][]string
	var metrics *cli.CSVAppender // metrics.csv, from the first evaluation on
	defer func() {
		if metrics != nil {
			metrics.Close()
		}
	}()
	var best earlyStop
	steps := 0 // the last step the monitor accepted
	elapsed := 0.0
	if cp != nil {
		var dropped string
		if header, rows, dropped, err = readRunMetrics(o.resume, cp.Rows, done); err != nil {
			return err
		}
		if dropped != "" {
			fmt.Fprintf(os.Stderr, "sample: %s\n", dropped)
		}
		if header != nil {
			// the rows up to the checkpoint, written whole, then appended to
			path := filepath.Join(o.out, metricsFile)
			if err := cli.WriteCSV(path, header, rows); err != nil {
				return err
			}
			if metrics, err = cli.AppendCSV(path, header); err != nil {
				return err
			}
		}
		if replayEarlyStop(&best, header, rows, o.patience) {
			o.steps = done // it stopped there, and was killed before its summary
		}
		if err := resumer.Resume(done, st.Theta); err != nil {
			return err
		}
		steps, elapsed = done, cp.Seconds
	}
	if err := cli.WriteJSON(filepath.Join(o.out, configFile), map[string]any{"command": runKind.Command, "flags": runFlags(fs),
		"given": resumption.Given(fs), "inputs": inputs, "code": cli.Version()}); err != nil {
		return err
	}
	traceDraws := -1 // a new stream
	if cp != nil {
		traceDraws = cp.TraceDraws
	}
	tr, err := newTracer(o, d, traceDraws)
	if err != nil {
		return err
	}
	defer tr.abort()    // unless finished: the draws so far stay, unfinished
	var start time.Time // of the run, earlier than this process's by its time so far
	saveCheckpoint := func(st *samplers.State) error {
		if !resumable {
			return nil
		}
		c, err := newCheckpoint(st, pcg, target, len(rows), time.Since(start).Seconds())
		if err != nil {
			return err
		}
		c.Warnings = slices.Clone(warnings)
		if w, ok := kernel.(samplers.WarnsOnce); ok {
			c.Warned = w.Warned().Keys()
		}
		// the rows and draws the checkpoint counts reach the disk before it does
		if metrics != nil {
			if err := metrics.Sync(); err != nil {
				return err
			}
		}
		if c.TraceDraws, err = tr.sync(); err != nil {
			return err
		}
		return writeCheckpoint(o.out, c)
	}
	bar = cli.NewProgress(o.steps, label, o.quiet, os.Stderr)
	if a := openblas.Advice(); a != "" {
		bar.Note("note: " + a)
	}
	bar.Skip(done)
	start = time.Now().Add(-time.Duration(elapsed * float64(time.Second)))
	var checkpointed time.Time              // when the latest checkpoint was written: the first evaluation writes one
	warnedHot := firstRunaway(header, rows) // the step whose evaluation warned of a runaway chain, if any
	temperature := smp.momentaAtEquilibrium()
	var blocks []tasks.Block
	if b, ok := mon.(tasks.Blocker); ok {
		blocks = b.Blocks()
	}
	record := func(step int, st *samplers.State) error {
		if err := mon.Observe(step, st.Theta); err != nil {
			return err
		}
		steps = step
		bar.Add(1)
		if err := tr.observe(step, st); err != nil {
			return err
		}
		if step%o.evalEvery == 0 || step == o.steps {
			ms, err := mon.Metrics()
			if err != nil {
				return err
			}
			if temperature {
				t, hot, err := temperatureMetrics(st.P, o.chains, step, blocks)
				if err != nil {
					return err
				}
				if hot != "" && warnedHot < 0 {
					// once: the metrics of every later evaluation include that chain
					o.warn(hot)
					warnedHot = step
				}
				ms = append(ms, t...)
			}
			if header != nil {
				// a run resumed from before a metric was reported keeps its columns
				if ms, err = metricColumns(ms, header[2:]); err != nil {
					return err
				}
			} else {
				h := []string{"step", "seconds"}
				for _, m := range ms {
					h = append(h, m.Name)
				}
				if metrics, err = cli.CreateCSV(filepath.Join(o.out, "metrics.csv"), h); err != nil {
					return err
				}
				header = h
			}
			row := []string{strconv.Itoa(step), cli.FormatFloat(time.Since(start).Seconds())}
			for _, m := range ms {
				row = append(row, cli.FormatFloat(m.Value))
			}
			// a row at each evaluation, so a long run can be followed
			if err := metrics.Append(row); err != nil {
				return err
			}
			rows = append(rows, row)
			if len(ms) > 0 {
				bar.Describe(fmt.Sprintf("%s %s=%.4g", label, ms[0].Name, ms[0].Value))
			}
			bar.Log(step, metricsLine(ms))
			stop := best.observe(step, ms, o.patience)
			if step == o.steps || stop || time.Since(checkpointed) >= checkpointEvery {
				if err := saveCheckpoint(st); err != nil {
					return err
				}
				checkpointed = time.Now()
			}
			if stop {
				bar.Note(fmt.Sprintf("%s has not improved for %d evaluations: stopped at step %d (the best, %.6g, at step %d)",
					gru.MetricValidNLL, o.patience, step, best.valid, best.step))
				return samplers.ErrStop
			}
		}
		return nil
	}
	runErr := samplers.Run(ctx, kernel, rng, st, o.steps-done, record)
	resumeHint := ""
	if runErr != nil && ctx.Err() != nil && errors.Is(runErr, ctx.Err()) {
		runErr = errors.New("interrupted")
		if s := cli.Signal(ctx); s != nil {
			runErr = fmt.Errorf("interrupted by %s", cli.SignalName(s))
		}
		// between steps: the state is whole
		if err := saveCheckpoint(st); err != nil {
			return err
		}
		if resumable {
			resumeHint = "; continue with --resume " + o.out
		}
	}
	hint := ""
	if nn, ok := kernel.(*nnsghmc.NNSGHMC); ok && errors.Is(runErr, samplers.ErrDiverged) {
		hint = frictionHint(nn.Settings(), o.largestStepSize())
	}
	// the chains' temperature at the end of a run that ended whole, where
	// its burn-in is over: a chain that has run away is warned of, unless the
	// evaluation at that step has done so
	var endTemperature []tasks.Metric
	if temperature && runErr == nil {
		var hot string
		if endTemperature, hot, err = temperatureMetrics(st.P, o.chains, st.Steps, blocks); err != nil {
			return err
		}
		if hot != "" && warnedHot != st.Steps {
			o.warn(hot)
		}
	}
	bar.Finish()
	seconds := time.Since(start).Seconds()

	summary := map[string]any{
		"task": o.task, "sampler": o.sampler, "chains": o.chains, "steps": steps, "seed": o.seed,
		"seconds": seconds, "steps_per_second": float64(steps) / seconds,
		"dimension": d, "step_size": o.stepSize, "flags": runFlags(fs), "code": cli.Version(),
	}
	for k, v := range settings {
		summary[k] = v
	}
	best.summarise(summary)
	if tuned != nil {
		summary["tune_step"] = map[string]any{"step_sizes": tuned.StepSizes, "ksd": finiteOrNil(tuned.KSD), "step_size": tuned.StepSize}
	}
	if len(warnings) > 0 {
		summary["warnings"] = warnings
	}
	if len(inputs) > 0 {
		summary["inputs"] = inputs // the sampler or covariance file, for sweep's stale records
	}
	if tr != nil {
		// the draws so far, also of a run stopped by an error or a signal
		n, err := tr.finish(o.out)
		if err != nil {
			return err
		}
		summary["trace_draws"] = n
	}
	if runErr != nil {
		summary["error"] = runErr.Error()
		if hint != "" {
			summary["hint"] = hint
		}
	} else {
		bar.Note("computing the run's summary diagnostics")
		ms, err := mon.Summary()
		if err != nil {
			return err
		}
		for _, m := range append(ms, endTemperature...) {
			summary[m.Name] = m.Value
		}
	}
	if metrics != nil {
		err := metrics.Close()
		metrics = nil
		if err != nil {
			return err
		}
	}
	if err := writeOutputs(o, header, rows, summary); err != nil {
		return err
	}
	if runErr != nil {
		if hint != "" {
			hint = ". " + hint
		}
		return fmt.Errorf("%s after %d steps (outputs so far written to %s%s)%s", runErr, steps, o.out, resumeHint, hint)
	}
	bar.Note("outputs in " + o.out)
	return nil
}

// samplerAnnotation marks a flag that only one sampler reads: its value
// names that sampler (see onlyFor).
const samplerAnnotation = "sampler"

// onlyFor marks the named flags of fs as read by sampler alone.
func onlyFor(fs *pflag.FlagSet, sampler string, names ...string) {
	for _, name := range names {
		if err := fs.SetAnnotation(name, samplerAnnotation, []string{sampler}); err != nil {
			panic(err) // a flag name misspelt here
		}
	}
}

// samplerFlagsMatch refuses a flag of one sampler given to another, which
// would otherwise be silently ignored. fs.Visit goes through the flags given
// in name order, so the same flag is always the one reported.
func samplerFlagsMatch(fs *pflag.FlagSet, sampler string) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		if owner := f.Annotations[samplerAnnotation]; err == nil && len(owner) == 1 && owner[0] != sampler {
			err = cli.Usagef("--%s is a flag of --sampler %s; --sampler %s does not use it", f.Name, owner[0], sampler)
		}
	})
	return err
}

// resolve fills the task's defaults in and validates the options.
func (o *options) resolve(fs *pflag.FlagSet, task *catalog.Task) error {
	def := task.Defaults
	if !fs.Changed("chains") {
		o.chains = def.Chains
	}
	if !fs.Changed("steps") {
		o.steps = def.Steps
	}
	if !fs.Changed("eval-every") {
		o.evalEvery = def.EvalEvery
	}
	if !fs.Changed("noise") {
		o.noise = def.Noise
	}
	smp, err := lookupSampler(o.sampler)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if err := samplerFlagsMatch(fs, o.sampler); err != nil {
		return err
	}
	switch {
	case o.chains < 1:
		return cli.Usagef("--chains must be positive, got %d", o.chains)
	case o.steps < 1:
		return cli.Usagef("--steps must be positive, got %d", o.steps)
	case o.evalEvery < 1:
		return cli.Usagef("--eval-every must be positive, got %d", o.evalEvery)
	case !(o.noise >= 0):
		return cli.Usagef("--noise must be non-negative, got %v", o.noise)
	case o.patience < 0:
		return cli.Usagef("--patience must be non-negative, got %d", o.patience)
	case o.patience > 0 && !o.target.Valid:
		return cli.Usagef("--patience N stops on the validation NLL of the GRU tasks: give --valid too")
	case o.traceEvery < 0:
		return cli.Usagef("--trace-every must be non-negative, got %d", o.traceEvery)
	case o.traceCoords < 0:
		return cli.Usagef("--trace-coords must be non-negative, got %d", o.traceCoords)
	case fs.Changed("trace-coords") && o.traceEvery == 0:
		return cli.Usagef("--trace-coords chooses what --trace-every traces; give --trace-every N too")
	case fs.Changed("step-size") && fs.Changed("lr"):
		return cli.Usagef("give --step-size or --lr, not both")
	case fs.Changed("warmup-step-size") && fs.Changed("warmup-lr"):
		return cli.Usagef("give --warmup-step-size or --warmup-lr, not both")
	}
	for _, f := range []string{"step-size", "lr", "warmup-step-size", "warmup-lr", "alpha-coef", "sghmc-alpha"} {
		if fs.Changed(f) {
			if v, _ := fs.GetFloat64(f); !(v > 0) {
				return cli.Usagef("--%s must be positive, got %v", f, fs.Lookup(f).Value)
			}
		}
	}
	// η from --step-size, else from --lr as the paper converts it, else the
	// task's default for this sampler
	fromLR := func(lr float64) float64 { return smp.fromLR(lr, def.DataSize) }
	switch {
	case fs.Changed("lr"):
		o.stepSize = fromLR(o.lr)
	case !fs.Changed("step-size"):
		o.stepSize = smp.stepSize(def)
		if !(o.stepSize > 0) {
			return cli.Usagef("task %s has no default step size for --sampler %s; give --step-size or --lr", task.Name, o.sampler)
		}
	}
	// every sampler's own options, not only smp's: the flags that
	// summary.json records (cli.Resolved) read the same whichever sampler
	// runs
	for _, s := range samplerTable {
		if s.resolve != nil {
			if err := s.resolve(o, fs, def, fromLR); err != nil {
				return err
			}
		}
	}
	return nil
}

// nnSampler is NNSGHMC's trained sampler, --meta's or seeded random
// networks with the task's input scalings, and its settings: the task's,
// with the offset β signed by the sampler's f_Q (catalog.Defaults.Offset),
// the step size (and the warm-up's), α from --alpha-coef and the flags
// given.
func (o *options) nnSampler(fs *pflag.FlagSet, task *catalog.Task, t samplers.Target) (*nnsghmc.Trained, nnsghmc.Settings, error) {
	def := task.Defaults
	s := def.NN
	var trained *nnsghmc.Trained
	if o.meta != "" {
		if fs.Changed("q-hidden") || fs.Changed("d-hidden") {
			return nil, s, cli.Usagef("--q-hidden and --d-hidden shape random networks; a trained sampler (--meta) brings its own")
		}
		var err error
		if trained, err = nnsghmc.Load(o.meta); err != nil {
			return nil, s, cli.Usagef("%v", err)
		}
	} else {
		qh, dh := def.QHidden, def.DHidden
		if fs.Changed("q-hidden") {
			qh = o.nn.qHidden
		}
		if fs.Changed("d-hidden") {
			dh = o.nn.dHidden
		}
		if err := task.CheckNets(qh, dh, o.chains); err != nil {
			return nil, s, cli.Usagef("%v", err)
		}
		trained = nnsghmc.RandomTrained(qh, dh, def.NNInputs, def.NNDScale, rand.New(rand.NewPCG(o.seed, 0x6e657473))) // "nets"
	}
	s.Beta = def.Offset(trained)
	catalog.SetSteps(&s, o.stepSize, o.warmupSteps, o.warmupStepSize, o.alphaCoef)
	if err := o.nn.apply(fs, &s); err != nil {
		return nil, s, err
	}
	o.nn.beta = s.Beta // the flags recorded say the β it runs with
	if o.gamma != "" {
		g, err := nnsghmc.ParseGamma(o.gamma)
		if err != nil {
			return nil, s, cli.Usagef("--gamma: %v", err)
		}
		s.Gamma = g
	}
	s.Warn = o.warn
	return trained, s, nil
}

// tune sets the step size by samplers.TuneStepSize: pilot runs of the
// sampler at nine step sizes around the resolved one, from the task's
// initial positions, ranked by the kernel Stein discrepancy of their draws
// against the task's exact score.
func (o *options) tune(ctx context.Context, fs *pflag.FlagSet, task *catalog.Task) (*samplers.TuneResult, error) {
	if task.Score == nil {
		return nil, cli.Usagef("--tune-step needs the exact score ∇ log π of the task's target (the Gaussian tasks have it; %s does not): give --step-size instead", o.task)
	}
	t, err := task.NewTarget(o.chains, o.noise)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	smp, err := lookupSampler(o.sampler)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	warn, eta := o.warn, o.stepSize
	o.warn = func(string) {} // the pilots' warnings are the candidates' own
	defer func() { o.warn = warn }()
	build := func(step float64) (samplers.Kernel, error) {
		o.stepSize = step
		return smp.build(o, fs, task, t)
	}
	s := samplers.DefaultTuneSettings(eta)
	s.Seed = o.seed
	if !o.quiet {
		fmt.Fprintf(os.Stderr, "sample: tuning the step size: %d pilot runs of %d steps, η = %.3g to %.3g\n", len(s.StepSizes), s.Steps, s.StepSizes[0], s.StepSizes[len(s.StepSizes)-1])
	}
	theta0 := task.Init(rand.New(rand.NewPCG(o.seed, 0x74756e65)), o.chains) // "tune"
	r, err := samplers.TuneStepSize(ctx, t, build, theta0, task.Score, s)
	o.stepSize = eta
	if err != nil {
		return nil, err
	}
	o.stepSize = r.StepSize
	if !o.quiet {
		fmt.Fprintf(os.Stderr, "sample: step size %.4g (KSD %.3g)\n", r.StepSize, r.KSD[slices.Index(r.StepSizes, r.StepSize)])
	}
	return &r, nil
}

// finiteOrNil returns x with its infinities as nil, for JSON.
func finiteOrNil(x []float64) []any {
	out := make([]any, len(x))
	for i, v := range x {
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			out[i] = v
		}
	}
	return out
}

// largestStepSize is the largest step size η the run takes: --step-size,
// or the warm-up's when that is larger.
func (o *options) largestStepSize() float64 {
	if o.warmupSteps > 0 && o.warmupStepSize > o.stepSize {
		return o.warmupStepSize
	}
	return o.stepSize
}

// frictionHint explains an NNSGHMC divergence that its explicit friction
// step can cause: p ← p − η·D_f·p overshoots, and the momentum grows, where
// η·D_f > 2. It returns "" under the exponential step, which cannot
// overshoot, and when D_f is clamped below 2/η.
func frictionHint(nn nnsghmc.Settings, eta float64) string {
	limit := 2 / eta
	if nn.Friction != nnsghmc.FrictionExplicit || (nn.DMax > 0 && nn.DMax < limit) {
		return ""
	}
	bound := "D_f has no upper clamp (d_max 0)"
	if nn.DMax > 0 {
		bound = fmt.Sprintf("D_f may reach d_max = %g (η·d_max = %.3g at η = %.3g)", nn.DMax, eta*nn.DMax, eta)
	}
	return fmt.Sprintf("NNSGHMC's friction step p ← p − η·D_f·p overshoots where η·D_f > 2, and here %s: --friction-step exponential, or a --d-max below 2/η = %.4g, prevents that", bound, limit)
}

func usage(err error) error {
	if err == nil {
		return nil
	}
	return cli.Usagef("%v", err)
}

// metricColumns returns the metrics named by columns, in their order: a
// resumed run writes the columns its metrics.csv began with, whatever the
// metrics reported since.
func metricColumns(ms []tasks.Metric, columns []string) ([]tasks.Metric, error) {
	out := make([]tasks.Metric, len(columns))
	for i, c := range columns {
		j := slices.IndexFunc(ms, func(m tasks.Metric) bool { return m.Name == c })
		if j < 0 {
			return nil, fmt.Errorf("metrics.csv has a column %q that this run does not report; resume it with the version that started it, or start it again", c)
		}
		out[i] = ms[j]
	}
	return out, nil
}

func writeOutputs(o options, header []string, rows [][]string, summary map[string]any) error {
	if header != nil {
		if err := plotMetrics(filepath.Join(o.out, "metrics"), o, header, rows); err != nil {
			return err
		}
	}
	return cli.WriteJSON(filepath.Join(o.out, "summary.json"), summary)
}

// plotMetrics draws every metric against steps, one figure with one curve
// per metric on a log scale (the metrics are positive divergences and
// errors).
func plotMetrics(path string, o options, header []string, rows [][]string) error {
	var series []plot.Series
	for j := 2; j < len(header); j++ {
		s := plot.Series{Name: header[j]}
		for _, r := range rows {
			x, _ := strconv.ParseFloat(r[0], 64)
			y, _ := strconv.ParseFloat(r[j], 64)
			s.X, s.Y = append(s.X, x), append(s.Y, y)
		}
		series = append(series, s)
	}
	title := fmt.Sprintf("%s on %s (%d chains, seed %d)", o.sampler, o.task, o.chains, o.seed)
	return plot.Lines(path, title, "step", "metric", true, series...)
}
