// Command train meta-trains NNSGHMC's networks on a task.
//
//	go run ./cmd/train -task gaussian10 -out DIR
//
// It writes into --out: train.csv (one row per optimiser step),
// checkpoint.json (after every epoch), sampler.json (the trained sampler, at
// the end; run it with `sample --meta DIR/sampler.json`), train.png/.svg
// (the loss's energy term and gradient norm against steps) and config.json
// (the command, the resolved flags, the training settings, and the
// absolute path and SHA-256 of each input file: --target-cov, --init).
//
// A training set-up with a validation protocol (train --help names it) is
// validated every --validate-every epochs and after the last: the trained
// sampler, with the run settings of the set-up's evaluations, on targets
// and with run seeds that no evaluation in experiments/ uses (seeds 1–10;
// the evaluations report seeds 15 and above). validation.csv gets a row
// per validation, validated/epoch-N.json each validated epoch's networks
// (to choose again, by another protocol, without training again),
// best.json the networks of the best epoch so far, and
// sampler.json at the end is the best epoch's, its epoch and score in its
// "training" record; each validated epoch's record has every run's metrics
// ("validation_runs"), and the progress line names the worst run and its
// metrics, so that a score above 1 says which bar it misses. Nothing
// about the evaluations enters the choice.
// `--resume DIR --revalidate` scores a run's validated epochs again under
// the protocol as it is now (runs that validation.csv already holds are
// not run again, so a protocol with a target added costs that target's
// runs only) and chooses again, before the run continues or, finished,
// writes the new choice as sampler.json.
// `--validate FILE` scores a trained sampler on the task's protocol alone
// and prints the figures, writing nothing.
// `--resume DIR` continues an interrupted run with the flags in
// DIR/config.json and the very input files it started with, and gives the
// same result, bit for bit, as an uninterrupted one; flags given beside it
// must agree with the run's, but --epochs (to extend a run or end it at
// its checkpoint, never before it), --quiet and the data directory.
// Ctrl-C (SIGINT), SIGTERM or SIGHUP writes a checkpoint and exits with
// status 130, 143 or 129; a process killed outright resumes from its last
// checkpoint. --out must be new, empty, or hold nothing but a training
// run's interrupted writes: a directory with a training run is pointed to
// --resume, one with anything else is refused, and so is one that another
// run is writing (a lock file, .lock, marks it; the message names its
// PID). When standard error is not a terminal, a line per epoch reports
// progress and the time left; either way the last line says where the
// outputs are.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/plot"
	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/graph/openblas"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/train"
)

func main() {
	setGC()
	cli.Main("train", run)
}

// trainGCPercent is the garbage collector's target (GOGC) that train uses
// unless the environment sets GOGC: meta-training's heap is mostly large
// float vectors that the collector does not scan, so collecting at 1.5 times
// the live heap instead of Go's default 2 costs no measurable time, and it
// keeps the main job (piano-gru) under 2 GiB, where the default let one
// epoch peak at 2.06 GiB (experiments/BENCHMARKS.md, "Main job memory").
const trainGCPercent = 50

// setGC applies trainGCPercent unless GOGC is set.
func setGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(trainGCPercent)
	}
}

// stdout receives what --validate prints.
var stdout io.Writer = os.Stdout

type options struct {
	task, out, resume, preset string
	init, friction, validate  string
	epochs, chains, subEpochs int
	validateEvery             int
	steps, window             int
	stepSize, lr, energyScale float64
	continueStepSize, qStart  float64
	seed                      uint64
	quiet, float32            bool
	revalidate, freshMomentum bool
	target                    catalog.Options
}

func run(ctx context.Context, args []string) (err error) {
	fs := pflag.NewFlagSet("train", pflag.ContinueOnError)
	var o options
	fs.StringVar(&o.task, "task", "gaussian10", "task to train on: one with a meta-training set-up, "+strings.Join(catalog.TrainingNames(), ", "))
	fs.StringVar(&o.out, "out", "", "output directory (default runs/train-TASK)")
	fs.StringVar(&o.preset, "preset", "", "quick: a small demo of the task's training that finishes in minutes")
	fs.StringVar(&o.resume, "resume", "", "continue the run whose checkpoint is in DIR, with its flags (outputs go there too); --epochs may differ, to extend a run or end it at its checkpoint")
	fs.StringVar(&o.init, "init", "", "start from the networks of this trained-sampler file instead of random ones (the task's settings still apply)")
	fs.IntVar(&o.epochs, "epochs", 0, "number of epochs (default: the task's)")
	fs.IntVar(&o.subEpochs, "sub-epochs", -1, "continuation unrolls per epoch after the fresh one (default: the task's)")
	fs.IntVar(&o.chains, "chains", 0, "number of parallel chains (default: the task's)")
	fs.IntVar(&o.steps, "steps", 0, "steps per unroll (default: the task's)")
	fs.IntVar(&o.window, "window", 0, "truncated back-propagation window in steps (default: the task's)")
	fs.Float64Var(&o.stepSize, "step-size", 0, "step size η of the unrolled sampler (default: the task's)")
	fs.Float64Var(&o.continueStepSize, "continue-step-size", 0, "step size η of the continuation unrolls (default: --step-size; the MNIST evaluations raise η after the first data epoch, and a sampler trained at one η can be unstable at a larger one)")
	fs.Float64Var(&o.qStart, "q-start", 0, "random f_Q starts as this constant Q_f (its output layer's weights 0), one-signed at every energy; 0: PyTorch's random initialisation, whose f_Q can cross 0 where the chains start and stall training there (default: the task's, 1 on the MNIST and GRU set-ups and 0 elsewhere)")
	fs.BoolVar(&o.freshMomentum, "fresh-momentum", false, "start every continuation unroll of an epoch from the momentum its fresh unroll ended with, as the authors' MNIST scripts do, instead of the momentum the last unroll ended with (default: the task's, false on every set-up)")
	fs.StringVar(&o.friction, "friction-step", string(nnsghmc.FrictionExponential), "the unrolled sampler's friction step: exponential (e^{−η·D_f}·p, stable at any η) or explicit (the paper's (1 − η·D_f)·p, which throws chains out where η·D_f > 2)")
	fs.Float64Var(&o.lr, "lr", 0, "Adam learning rate of both networks (default: the task's)")
	fs.Float64Var(&o.energyScale, "energy-scale", 0, "scale s_u of the networks' energy input u = s_u·Ũ/N (default: the task's; sampler.json records it and sample uses it)")
	fs.IntVar(&o.validateEvery, "validate-every", -1, "run the set-up's validation protocol every N epochs and after the last, and write the best epoch's networks as sampler.json (default: the set-up's N; 0: no validation, the last epoch's networks). The protocols: "+strings.Join(catalog.ValidationProtocols(), "; "))
	fs.StringVar(&o.validate, "validate", "", "score the trained sampler FILE (a sampler.json, validated/epoch-N.json) on the task's validation protocol and print each run's figure and metrics and the score; no training, nothing written")
	fs.BoolVar(&o.revalidate, "revalidate", false, "with --resume: score the run's validated epochs (validated/) again under the set-up's protocol as it is now, running only the runs its validation.csv lacks, and choose again; a finished run then gets the new choice as sampler.json")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed: the same seed and flags give bit-identical output")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress bar, nor progress lines when standard error is not a terminal")
	fs.BoolVar(&o.float32, "float32", false, "evaluate the task's energies and gradients in float32 (the sampler, the losses and the networks stay float64)")
	o.target.RegisterFlags(fs)
	cli.SetUsage(fs, cli.Help{Name: "train", Synopsis: "train [flags] [--out DIR | --resume DIR]",
		Description: "meta-trains NNSGHMC's networks on a task and writes the trained sampler (sampler.json) into --out"})
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	if o.validate != "" {
		return validateFile(ctx, fs, &o, stdout)
	}
	var resumed *train.Checkpoint
	if o.revalidate && o.resume == "" {
		return cli.Usagef("--revalidate scores a run's validations again: give the run with --resume DIR")
	}
	if o.resume != "" {
		if fs.Changed("out") && o.out != o.resume {
			return cli.Usagef("--resume writes into the run's own directory; drop --out")
		}
		o.out = o.resume
		if err := runKind.CheckResume(o.resume); err != nil {
			return err
		}
		if resumed, err = readCheckpoint(o.resume); err != nil {
			return err
		}
		if err := resumption.Apply(fs, o.resume); err != nil {
			return err
		}
	}
	if err := resumption.Absolute(fs); err != nil {
		return err
	}
	switch o.preset {
	case "", "quick":
	default:
		return cli.Usagef("unknown preset %q (want quick)", o.preset)
	}
	if o.preset == "quick" && !fs.Changed("hidden") {
		o.target.Hidden = quickHidden
	}
	if o.out == "" {
		o.out = filepath.Join("runs", "train-"+o.task)
		if o.preset != "" {
			o.out += "-" + o.preset
		}
	}
	if o.resume == "" {
		if err := runKind.Check(o.out, false); err != nil {
			return err
		}
	}
	task, err := o.trainingTask(fs)
	if err != nil {
		return err
	}
	cfg, start, nnSettings, err := o.settings(fs, task)
	if err != nil {
		return err
	}
	if resumed != nil {
		if err := reachesCheckpoint(o.resume, cfg.Epochs, resumed.Position); err != nil {
			return err
		}
	}
	inputs, err := resumption.Inputs(fs)
	if err != nil {
		return err
	}

	prob, err := task.TrainingProblem(cfg.Chains)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	tr, err := train.New(cfg, prob, start, nnSettings, o.seed)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	out, err := cli.OpenOutDir(o.out) // held to the end: no other run writes there meanwhile
	if err != nil {
		return err
	}
	defer out.Close()
	if resumed != nil {
		err = out.RemoveTemps(runKind)
	} else {
		err = out.Replace(runKind, false)
	}
	if err != nil {
		return err
	}
	checkpoint := filepath.Join(o.out, "checkpoint.json")
	var saved *train.Position // where the last checkpoint on disk stands
	if resumed != nil {
		if err := tr.Restore(resumed); err != nil {
			return cli.Usagef("cannot resume %s: %v; its config.json and checkpoint.json disagree (edited, or written by another version of this program): continue it with that version, or start afresh into another --out", o.resume, err)
		}
		saved = &resumed.Position
	}
	if err := cli.WriteJSON(filepath.Join(o.out, cli.ConfigFile), map[string]any{"command": runKind.Command, "flags": cli.Resolved(fs),
		"given": resumption.Given(fs), "inputs": inputs, "training": cfg, "sampler": map[string]any{"settings": nnSettings, "step_size": nnSettings.StepSize(1),
			"inputs": start.Inputs, "d_scale": start.DScale}, "code": cli.Version()}); err != nil {
		return err
	}

	writeCheckpoint := func() error {
		cp, err := tr.Checkpoint()
		if err != nil {
			return err
		}
		if err := cli.WriteFile(checkpoint, cp.Encode); err != nil {
			return err
		}
		saved = &cp.Position
		return nil
	}
	info := map[string]any{
		"task": o.task, "seed": o.seed, "sub_epochs": cfg.SubEpochs, "chains": cfg.Chains,
		"steps": cfg.Steps, "window": cfg.Window, "train_step_size": nnSettings.StepSize(1), "train_dim": task.Dim,
	}
	if cfg.ContinueStepSize > 0 {
		info["continue_step_size"] = cfg.ContinueStepSize
	}
	if cfg.FreshMomentum {
		info["fresh_momentum"] = true
	}
	if cfg.DataPerUnroll {
		info["data_per_unroll"] = true
	}
	if o.init != "" {
		info["init"] = o.init
	}
	if o.float32 {
		info["energy_dtype"] = "float32"
	}
	var val *validator
	if o.preset == "quick" && !fs.Changed("validate-every") {
		o.validateEvery = 0 // a demo
	}
	if v := protocol(task); v != nil && o.validateEvery != 0 {
		every := v.Every
		if o.validateEvery > 0 {
			every = o.validateEvery
		}
		val = newValidator(v, o.target, o.out, every, cfg.Epochs)
		if resumed != nil && !o.revalidate {
			if err := val.resume(tr.Epochs()); err != nil {
				return err
			}
		}
	}
	if o.revalidate && val == nil {
		return cli.Usagef("--revalidate: the run in %s has no validation protocol (task %s, --validate-every %d)", o.resume, o.task, o.validateEvery)
	}
	bar := cli.NewProgress(tr.Unrolls(), "train "+o.task, o.quiet, os.Stderr)
	if a := openblas.Advice(); a != "" {
		bar.Note("note: " + a)
	}
	if o.revalidate {
		if err := val.revalidate(ctx, tr.Epochs(), func(line string) { bar.Log(tr.Completed(), line) }); err != nil {
			bar.Finish()
			if ctx.Err() != nil {
				return fmt.Errorf("%w: the revalidation stopped, and the run is as it was", ctx.Err())
			}
			return err
		}
	}
	bar.Skip(tr.Completed())
	validate := func() error {
		if val == nil || !val.pending(tr.Epochs()) {
			return nil
		}
		info["epochs"] = tr.Epochs()
		line, err := val.validate(ctx, tr, info, tr.Epochs())
		if ctx.Err() != nil {
			return train.ErrInterrupted // the checkpoint stands; a resumed run validates this epoch first
		}
		if err != nil {
			return err
		}
		bar.Log(tr.Completed(), line)
		return nil
	}
	if err = validate(); err == nil {
		err = tr.Run(ctx, func(r train.Row) {
			bar.Describe(fmt.Sprintf("train %s epoch %d %s energy %.4g", o.task, r.Epoch, r.Loss, r.Energy))
			if r.Loss == cfgLastLoss(cfg) {
				bar.Add(1)
			}
		}, func() error {
			if err := writeCheckpoint(); err != nil {
				return err
			}
			bar.Log(tr.Completed(), epochLine(tr, cfg))
			if err := writeRows(o.out, tr.Rows()); err != nil {
				return err
			}
			return validate()
		})
	}
	bar.Finish()
	switch {
	case errors.Is(err, train.ErrInterrupted):
		if werr := writeCheckpoint(); werr != nil {
			return werr
		}
		if werr := writeRows(o.out, tr.Rows()); werr != nil {
			return werr
		}
		return fmt.Errorf("%w: checkpoint written to %s; continue with --resume %s", err, checkpoint, o.out)
	case err != nil:
		var de *train.DivergenceError
		if errors.As(err, &de) {
			return fmt.Errorf("%w; %s", err, lastCheckpoint(checkpoint, saved))
		}
		return err
	}
	if err := writeRows(o.out, tr.Rows()); err != nil {
		return err
	}
	trained := tr.Trained()
	info["epochs"] = tr.Epochs()
	trained.Training = info
	if val != nil {
		chosen, err := val.chosenSampler()
		if err != nil {
			return err
		}
		if chosen != nil {
			trained = chosen
			bar.Note(fmt.Sprintf("sampler.json holds the networks of epoch %d, the best of the validations (validation.csv)", val.chosen))
		} else {
			bar.Note("every validation lost a chain: sampler.json holds the last epoch's networks")
		}
	}
	if err := cli.WriteFile(filepath.Join(o.out, "sampler.json"), trained.Encode); err != nil {
		return err
	}
	bar.Note("outputs in " + o.out)
	return nil
}

// testValidation, when not nil, replaces the set-up's validation protocol
// (tests shorten it).
var testValidation func(*catalog.Validation) *catalog.Validation

// trainingTask builds o's task, with the dtype of --float32, and refuses
// flags the task does not read and a task without a meta-training set-up.
func (o *options) trainingTask(fs *pflag.FlagSet) (*catalog.Task, error) {
	if err := catalog.OptionFlagsMatch(o.task, fs.Changed); err != nil {
		return nil, cli.Usagef("%v", err)
	}
	if o.float32 {
		o.target.Dtype = graph.Float32
	}
	task, err := catalog.New(o.task, o.target)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	if task.Training == nil {
		return nil, cli.Usagef("task %q has no meta-training set-up (those that have one: %s)", o.task, strings.Join(catalog.TrainingNames(), ", "))
	}
	return task, nil
}

// protocol is the validation protocol of task's set-up (nil: none), as
// testValidation leaves it.
func protocol(task *catalog.Task) *catalog.Validation {
	v := task.Training.Validation
	if v != nil && testValidation != nil {
		v = testValidation(v)
	}
	return v
}

// quickHidden is the GRU width of --preset quick.
const quickHidden = 16

// cfgLastLoss names the loss whose row ends an unroll.
func cfgLastLoss(cfg train.Config) string {
	if cfg.InChain != nil {
		return "in-chain"
	}
	return "cross-chain"
}

// settings resolves the task's training set-up with the flags, and the
// starting networks (random from --seed, or --init's).
func (o *options) settings(fs *pflag.FlagSet, task *catalog.Task) (train.Config, *nnsghmc.Trained, nnsghmc.Settings, error) {
	t := task.Training
	cfg := t.Config
	if t.Config.Cross != nil {
		c := *t.Config.Cross
		cfg.Cross = &c
	}
	if t.Config.InChain != nil {
		c := *t.Config.InChain
		cfg.InChain = &c
	}
	stepSize, energyScale, qStart := t.StepSize, t.NN.EnergyScale, t.QStart
	if o.preset == "quick" {
		cfg.Epochs, cfg.SubEpochs, cfg.Chains, cfg.Steps, cfg.Window = 2, 1, 6, 12, 6
		if cfg.InChain != nil {
			c := *cfg.InChain
			c.Burn, c.Thin, c.FirstChain, c.Stride = 6, 2, [2]int{0, 1}, [2]int{2, 3}
			cfg.InChain = &c
		}
	}
	positive := func(x float64) bool { return x > 0 && !math.IsInf(x, 1) }
	for _, f := range []struct {
		name string
		set  func()
		ok   bool
		want string
	}{
		{"epochs", func() { cfg.Epochs = o.epochs }, o.epochs > 0, "a positive integer"},
		{"sub-epochs", func() { cfg.SubEpochs = o.subEpochs }, o.subEpochs >= 0, "an integer ≥ 0"},
		{"chains", func() { cfg.Chains = o.chains }, o.chains > 0, "a positive integer"},
		{"steps", func() { cfg.Steps = o.steps }, o.steps > 0, "a positive integer"},
		{"window", func() { cfg.Window = o.window }, o.window > 0, "a positive integer"},
		{"step-size", func() { stepSize = o.stepSize }, positive(o.stepSize), "a positive finite number"},
		{"continue-step-size", func() { cfg.ContinueStepSize = o.continueStepSize }, positive(o.continueStepSize), "a positive finite number"},
		{"lr", func() { cfg.QAdam.LR, cfg.DAdam.LR = o.lr, o.lr }, positive(o.lr), "a positive finite number"},
		{"energy-scale", func() { energyScale = o.energyScale }, o.energyScale != 0, "a non-zero number"},
		{"q-start", func() { qStart = o.qStart }, !math.IsNaN(o.qStart) && !math.IsInf(o.qStart, 0), "a finite number"},
		{"fresh-momentum", func() { cfg.FreshMomentum = o.freshMomentum }, true, ""},
	} {
		if fs.Changed(f.name) {
			if !f.ok {
				return cfg, nil, nnsghmc.Settings{}, cli.Usagef("--%s: invalid value %s (want %s)", f.name, fs.Lookup(f.name).Value, f.want)
			}
			f.set()
		}
	}
	if least, why := cfg.MinChains(); cfg.Chains < least {
		return cfg, nil, nnsghmc.Settings{}, cli.Usagef("--chains %d: this training set-up needs at least %d chains (%s)", cfg.Chains, least, why)
	}
	withStart := *t
	withStart.QStart = qStart
	start, s, err := withStart.Sampler(stepSize, o.seed, o.init)
	if err != nil {
		return cfg, nil, s, cli.Usagef("--init: %v", err)
	}
	start.Inputs.EnergyScale = energyScale
	if s.Friction, err = nnsghmc.ParseFriction(o.friction); err != nil {
		return cfg, nil, s, cli.Usagef("--friction-step: %v", err)
	}
	// sizes first: Validate lists the losses' times
	if err := task.CheckTrain(cfg); err != nil {
		return cfg, nil, s, cli.Usagef("%v", err)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, nil, s, cli.Usagef("%v", err)
	}
	return cfg, start, s, nil
}

// writeRows writes train.csv and its figure.
func writeRows(dir string, rows []train.Row) error {
	header := []string{"epoch", "unroll", "loss", "energy", "grad_norm", "seconds"}
	var out [][]string
	series := map[string]*[2]plot.Series{}
	var order []string
	for i, r := range rows {
		out = append(out, []string{strconv.Itoa(r.Epoch), strconv.Itoa(r.Unroll), r.Loss,
			cli.FormatFloat(r.Energy), cli.FormatFloat(r.GradNorm), cli.FormatFloat(r.Seconds)})
		s, ok := series[r.Loss]
		if !ok {
			s = &[2]plot.Series{{Name: r.Loss + " energy"}, {Name: r.Loss + " gradient norm"}}
			series[r.Loss] = s
			order = append(order, r.Loss)
		}
		x := float64(i + 1)
		s[0].X, s[0].Y = append(s[0].X, x), append(s[0].Y, r.Energy)
		s[1].X, s[1].Y = append(s[1].X, x), append(s[1].Y, r.GradNorm)
	}
	if err := cli.WriteCSV(filepath.Join(dir, "train.csv"), header, out); err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	var ss []plot.Series
	for _, name := range order {
		ss = append(ss, series[name][0], series[name][1])
	}
	return plot.Lines(filepath.Join(dir, "train"), "meta-training", "optimiser step", "value", true, ss...)
}

// readCheckpoint reads and validates the checkpoint of the run in dir.
func readCheckpoint(dir string) (*train.Checkpoint, error) {
	path := filepath.Join(dir, "checkpoint.json")
	if _, err := os.Stat(path); err != nil {
		return nil, cli.Usagef("cannot read checkpoint %s: %v; give --resume the output directory of a run (it writes checkpoint.json after every epoch and when interrupted)", path, err)
	}
	cp, err := train.ReadCheckpoint(path)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	return cp, nil
}

// runKind is what train writes into --out.
var runKind = cli.RunKind{
	Command: cli.KindTrain,
	Files:   []string{cli.ConfigFile, "checkpoint.json", "train.csv", "train.png", "train.svg", "validation.csv", bestFile, "sampler.json"},
	Keep:    func(dir string) string { return "continue it with --resume " + dir + ", or choose another --out" },
}

// reachesCheckpoint refuses --epochs that end a resumed run in dir before
// its checkpoint at pos: a run can be extended, or ended at its
// checkpoint, not cut back.
func reachesCheckpoint(dir string, epochs int, pos train.Position) error {
	done := pos.Epoch // epochs the checkpoint has begun
	if pos.Unroll > 0 {
		done++
	}
	if epochs < done {
		at := fmt.Sprintf("after epoch %d", pos.Epoch)
		if pos.Unroll > 0 {
			at = fmt.Sprintf("in epoch %d", done)
		}
		return cli.Usagef("--epochs %d is before the checkpoint of the run in %s, %s: give --epochs %d or more", epochs, dir, at, done)
	}
	return nil
}

// resumption says how a run resumes with its flags: --epochs extends or
// ends it; --quiet and the data directory do not change its result.
var resumption = cli.RunFlags{
	Files:  []string{"target-cov", "init"},
	Free:   map[string]bool{"epochs": true, "quiet": true, "data-dir": true, "download": true},
	Own:    map[string]bool{"resume": true, "out": true, "revalidate": true, cli.FlagFileFlag: true},
	Change: "only --epochs may change, to extend or end it",
	// a config.json from before "given" was recorded: the flags that
	// differ from their defaults, but the GRU width that --preset quick
	// sets by itself
	Legacy: func(fs *pflag.FlagSet, flags map[string]string) map[string]bool {
		set := map[string]bool{}
		for name, v := range flags {
			if f := fs.Lookup(name); f != nil && v != f.DefValue &&
				!(name == "hidden" && flags["preset"] == "quick" && v == strconv.Itoa(quickHidden)) {
				set[name] = true
			}
		}
		return set
	},
	Damaged: "restore the file, or start afresh into another --out",
}

// lastCheckpoint says which checkpoint a failed run leaves on disk at path:
// the one at pos, or none.
func lastCheckpoint(path string, pos *train.Position) string {
	switch {
	case pos == nil:
		return "no checkpoint was written (the first is at the end of the first epoch)"
	case pos.Unroll > 0:
		return fmt.Sprintf("the last checkpoint, %s, holds the run after unroll %d of epoch %d", path, pos.Unroll, pos.Epoch+1)
	case pos.Epoch == 0:
		return fmt.Sprintf("the last checkpoint, %s, holds the run before its first unroll", path)
	}
	return fmt.Sprintf("the last checkpoint, %s, holds the run after epoch %d", path, pos.Epoch)
}
