package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// sampler is a value of --sampler: its flags, its default step size, how
// --lr converts to a step size and how to build its kernel. The command
// reads everything that differs between samplers from the registry
// (samplerTable), so a sampler is added there alone.
type sampler struct {
	name  string // the value of --sampler
	label string // the name in the help and on the progress bar
	// firstOrder samplers take η = lr/N from a per-batch learning rate
	// (samplers.SGLDStepSize); the others η = √(lr/N)
	// (samplers.SGHMCParams), but those whose step size is the learning
	// rate itself, lrIsStep (Adam, whose step does not scale with the
	// gradient).
	firstOrder, lrIsStep bool
	// optimiser marks the references that optimise rather than sample:
	// each chain is an independent optimisation from its own θ₀.
	optimiser bool
	// flags, when not nil, defines the flags that only this sampler reads,
	// storing their values in o; the registry marks them as its own.
	flags func(fs *pflag.FlagSet, o *options)
	// stepSize returns the task's default step size η for this sampler,
	// or 0 if the task has none (then the run needs --step-size or --lr).
	stepSize func(def catalog.Defaults) float64
	// resolve, when not nil, fills in the sampler's own options from the
	// task's defaults def and the flags fs, after the step size is set, and
	// validates them; fromLR converts a per-batch learning rate to a step
	// size for the sampler that runs. The command resolves every sampler's
	// options, whichever runs, so that the resolved flags in summary.json
	// do not depend on --sampler.
	resolve func(o *options, fs *pflag.FlagSet, def catalog.Defaults, fromLR func(lr float64) float64) error
	// build returns the kernel on target t, with the options resolved.
	build func(o *options, fs *pflag.FlagSet, task *catalog.Task, t samplers.Target) (samplers.Kernel, error)
	// settings, when not nil, returns the entries that summary.json adds
	// for the kernel k, read just after build.
	settings func(o *options, k samplers.Kernel) map[string]any
}

// samplerTable is the registry of samplers, in the order the help lists
// them.
var samplerTable []*sampler

// registerSampler adds s to the registry. It refuses a sampler without a
// name, label, kernel or default step size, and a name already taken.
func registerSampler(s sampler) error {
	switch {
	case s.name == "" || s.label == "":
		return errors.New("a sampler needs a name and a label")
	case s.build == nil:
		return fmt.Errorf("sampler %s has no kernel constructor", s.name)
	case s.stepSize == nil:
		return fmt.Errorf("sampler %s has no default step size", s.name)
	}
	if _, err := lookupSampler(s.name); err == nil {
		return fmt.Errorf("sampler %s is registered twice", s.name)
	}
	samplerTable = append(samplerTable, &s)
	return nil
}

// momentaAtEquilibrium tells whether the sampler's momenta are N(0, I) at
// equilibrium (SGHMC's and NNSGHMC's), so that their kinetic temperature
// is 1 for a correct sampler; first-order samplers have none and the
// optimisers' velocities are no such thing.
func (s *sampler) momentaAtEquilibrium() bool { return !s.firstOrder && !s.optimiser }

// lookupSampler returns the registered sampler called name.
func lookupSampler(name string) (*sampler, error) {
	for _, s := range samplerTable {
		if s.name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown sampler %q (want %s)", name, samplerList(func(s *sampler) string { return s.name }))
}

// samplerList lists the registered samplers as "a, b, c or d", each as
// field gives it, leaving out those for which it gives "".
func samplerList(field func(*sampler) string) string {
	var names []string
	for _, s := range samplerTable {
		if n := field(s); n != "" {
			names = append(names, n)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// labelIf returns the field for samplerList that gives the labels of the
// optimisers (optimiser) or of the samplers (!optimiser).
func labelIf(optimiser bool) func(*sampler) string {
	return func(s *sampler) string {
		if s.optimiser != optimiser {
			return ""
		}
		return s.label
	}
}

// lrConversions says how --lr converts to each sampler's step size, as in
// "SGLD, pSGLD: lr/N; SGHMC, NNSGHMC: √(lr/N); Adam: lr".
func lrConversions() string {
	var first, second, same []string
	for _, s := range samplerTable {
		switch {
		case s.lrIsStep:
			same = append(same, s.label)
		case s.firstOrder:
			first = append(first, s.label)
		default:
			second = append(second, s.label)
		}
	}
	var parts []string
	for _, p := range []struct {
		labels []string
		rule   string
	}{{first, "lr/N"}, {second, "√(lr/N)"}, {same, "lr"}} {
		if len(p.labels) > 0 {
			parts = append(parts, strings.Join(p.labels, ", ")+": "+p.rule)
		}
	}
	return strings.Join(parts, "; ")
}

// fromLR returns s's step size for the per-batch learning rate lr on n
// data.
func (s *sampler) fromLR(lr, n float64) float64 {
	switch {
	case s.lrIsStep:
		return lr
	case s.firstOrder:
		return samplers.SGLDStepSize(lr, n)
	}
	eta, _ := samplers.SGHMCParams(lr, n, 0)
	return eta
}

// registerSamplerFlags defines every registered sampler's own flags in fs,
// each marked as that sampler's (see samplerFlagsMatch).
func registerSamplerFlags(fs *pflag.FlagSet, o *options) {
	for _, s := range samplerTable {
		if s.flags == nil {
			continue
		}
		own := pflag.NewFlagSet(s.name, pflag.ContinueOnError)
		s.flags(own, o)
		own.VisitAll(func(f *pflag.Flag) { onlyFor(own, s.name, f.Name) })
		fs.AddFlagSet(own)
	}
}

// taskStepSize is a sampler's default step size from the task's table of
// them (catalog.Defaults.StepSize), under the sampler's name.
func taskStepSize(name string) func(catalog.Defaults) float64 {
	return func(def catalog.Defaults) float64 { return def.StepSize[name] }
}

func init() {
	for _, s := range []sampler{
		{
			name: "sgld", label: "SGLD", firstOrder: true, stepSize: taskStepSize("sgld"),
			build: func(o *options, _ *pflag.FlagSet, _ *catalog.Task, t samplers.Target) (samplers.Kernel, error) {
				s := samplers.DefaultSGLDSettings()
				s.StepSize = samplers.Constant(o.stepSize)
				return samplers.NewSGLD(t, s)
			},
		},
		{
			name: "sghmc", label: "SGHMC", stepSize: taskStepSize("sghmc"),
			flags: func(fs *pflag.FlagSet, o *options) {
				fs.Float64Var(&o.friction, "friction", 0, "SGHMC friction C (default: the task's)")
				fs.Float64Var(&o.sghmcAlpha, "sghmc-alpha", 0, "SGHMC friction in the authors' velocity form: C = sghmc-alpha/η")
			},
			resolve: func(o *options, fs *pflag.FlagSet, def catalog.Defaults, _ func(float64) float64) error {
				switch {
				case fs.Changed("friction"):
				case fs.Changed("sghmc-alpha"):
					o.friction = o.sghmcAlpha / o.stepSize
				case def.SGHMCAlpha > 0:
					o.friction = def.SGHMCAlpha / o.stepSize
				default:
					o.friction = def.Friction
				}
				if !(o.friction >= 0) {
					return cli.Usagef("--friction must be non-negative, got %v", o.friction)
				}
				return nil
			},
			build: func(o *options, _ *pflag.FlagSet, _ *catalog.Task, t samplers.Target) (samplers.Kernel, error) {
				s := samplers.DefaultSGHMCSettings()
				s.StepSize, s.Friction, s.Warn = samplers.Constant(o.stepSize), o.friction, o.warn
				return samplers.NewSGHMC(t, s)
			},
			settings: func(o *options, _ samplers.Kernel) map[string]any {
				return map[string]any{"friction": o.friction}
			},
		},
		{
			name: "psgld", label: "pSGLD", firstOrder: true, stepSize: taskStepSize("psgld"),
			flags: func(fs *pflag.FlagSet, o *options) {
				def := samplers.DefaultPSGLDSettings()
				fs.Float64Var(&o.psgldDecay, "psgld-decay", def.Decay, "pSGLD's RMS decay ρ")
				fs.Float64Var(&o.psgldLambda, "psgld-lambda", def.Lambda, "pSGLD's preconditioner floor λ")
			},
			build: func(o *options, _ *pflag.FlagSet, _ *catalog.Task, t samplers.Target) (samplers.Kernel, error) {
				s := samplers.DefaultPSGLDSettings()
				s.StepSize, s.Decay, s.Lambda = samplers.Constant(o.stepSize), o.psgldDecay, o.psgldLambda
				return samplers.NewPSGLD(t, s)
			},
		},
		{
			name: "nnsghmc", label: "NNSGHMC", stepSize: taskStepSize("nnsghmc"),
			flags: func(fs *pflag.FlagSet, o *options) {
				fs.IntVar(&o.warmupSteps, "warmup-steps", -1, "NNSGHMC: steps run with the warm-up step size before switching to --step-size (default: the task's)")
				fs.Float64Var(&o.warmupStepSize, "warmup-step-size", 0, "NNSGHMC: the warm-up step size η (default: the task's)")
				fs.Float64Var(&o.warmupLR, "warmup-lr", 0, "NNSGHMC: the warm-up per-batch learning rate of data tasks, η = √(lr/N)")
				fs.Float64Var(&o.alphaCoef, "alpha-coef", 0, "NNSGHMC: set α = alpha-coef/η with the first step size (the authors: 0.01 on MNIST)")
				fs.StringVar(&o.gamma, "gamma", "", "NNSGHMC's Γ: exact (autodiff), fd (finite differences) or none (ablation, not a valid sampler)")
				fs.StringVar(&o.meta, "meta", "", "trained NNSGHMC sampler file (default: seeded random networks)")
				o.nn.register(fs)
			},
			resolve: func(o *options, fs *pflag.FlagSet, def catalog.Defaults, fromLR func(float64) float64) error {
				// the warm-up
				if !fs.Changed("warmup-steps") {
					o.warmupSteps = def.WarmupSteps
				}
				switch {
				case fs.Changed("warmup-lr"):
					o.warmupStepSize = fromLR(o.warmupLR)
				case !fs.Changed("warmup-step-size"):
					o.warmupStepSize = def.WarmupStepSize
				}
				if o.warmupSteps > 0 && !(o.warmupStepSize > 0) {
					return cli.Usagef("--warmup-steps needs a warm-up step size (--warmup-step-size or --warmup-lr)")
				}
				if !fs.Changed("alpha-coef") {
					o.alphaCoef = def.AlphaCoef
				}
				return nil
			},
			build: func(o *options, fs *pflag.FlagSet, task *catalog.Task, t samplers.Target) (samplers.Kernel, error) {
				trained, s, err := o.nnSampler(fs, task, t)
				if err != nil {
					return nil, err
				}
				return nnsghmc.New(t, trained, s)
			},
			settings: func(o *options, k samplers.Kernel) map[string]any {
				nn := k.(*nnsghmc.NNSGHMC)
				tr := nn.Trained() // the networks are in --meta or drawn from --seed
				m := map[string]any{"nnsghmc": nn.Settings(), "nnsghmc_inputs": tr.Inputs, "nnsghmc_d_scale": tr.DScale, "nnsghmc_domain": tr.Domain}
				if o.warmupSteps > 0 {
					m["warmup_steps"], m["warmup_step_size"] = o.warmupSteps, o.warmupStepSize
				}
				return m
			},
		},
		{
			// the optimisers: point estimates, each chain an independent run
			name: "santa", label: "Santa", firstOrder: true, optimiser: true, stepSize: taskStepSize("santa"),
			flags: func(fs *pflag.FlagSet, o *options) {
				def := samplers.DefaultSantaSettings()
				fs.IntVar(&o.santaExplore, "santa-explore", -1, "Santa: steps of its exploration stage (annealed sampling) before its refinement stage (optimisation) (default: 15 % of the task's default --steps, the share of the authors' music runs)")
				fs.Float64Var(&o.santaAnneal, "santa-anneal", def.Anneal, "Santa: γ of its annealing, the inverse temperature β_t = t^γ of step t (0: temperature 1 throughout)")
			},
			resolve: func(o *options, fs *pflag.FlagSet, def catalog.Defaults, _ func(float64) float64) error {
				if !fs.Changed("santa-explore") {
					o.santaExplore = def.Steps * 15 / 100
				}
				switch {
				case o.santaExplore < 0:
					return cli.Usagef("--santa-explore must be a non-negative number of steps, got %d", o.santaExplore)
				case !(o.santaAnneal >= 0):
					return cli.Usagef("--santa-anneal must be non-negative, got %v", o.santaAnneal)
				}
				return nil
			},
			build: func(o *options, _ *pflag.FlagSet, _ *catalog.Task, t samplers.Target) (samplers.Kernel, error) {
				s := samplers.DefaultSantaSettings()
				s.StepSize, s.Explore, s.Anneal = samplers.Constant(o.stepSize), o.santaExplore, o.santaAnneal
				return samplers.NewSanta(t, s)
			},
			settings: func(_ *options, k samplers.Kernel) map[string]any {
				s := k.(*samplers.Santa).Settings()
				return map[string]any{"santa": map[string]any{"decay": s.Decay, "lambda": s.Lambda, "alpha0": s.Alpha0,
					"anneal": s.Anneal, "explore": s.Explore, "noise": s.Noise.String()}}
			},
		},
		{
			name: "adam", label: "Adam", lrIsStep: true, optimiser: true, stepSize: taskStepSize("adam"),
			flags: func(fs *pflag.FlagSet, o *options) {
				fs.BoolVar(&o.adamChen, "adam-chen", false, "Adam: as the music code of Chen et al. (2016) runs it (samplers.ChenAdamSettings): each chain's gradient rescaled to norm 5 at every step, and that code's bias corrections 1 − 0.1ᵗ and 1 − 0.001ᵗ")
			},
			build: func(o *options, _ *pflag.FlagSet, _ *catalog.Task, t samplers.Target) (samplers.Kernel, error) {
				s := samplers.DefaultAdamSettings()
				if o.adamChen {
					s = samplers.ChenAdamSettings()
				}
				s.StepSize = samplers.Constant(o.stepSize)
				return samplers.NewAdam(t, s)
			},
			settings: func(_ *options, k samplers.Kernel) map[string]any {
				s := k.(*samplers.Adam).Settings()
				return map[string]any{"adam": map[string]any{"beta1": s.Beta1, "beta2": s.Beta2, "epsilon": s.Epsilon,
					"rescale": s.Rescale, "chen_corrections": s.ChenCorrections}}
			},
		},
		{
			name: "sgdm", label: "SGD-M", firstOrder: true, optimiser: true, stepSize: taskStepSize("sgdm"),
			build: func(o *options, _ *pflag.FlagSet, _ *catalog.Task, t samplers.Target) (samplers.Kernel, error) {
				s := samplers.DefaultSGDMSettings()
				s.StepSize = samplers.Constant(o.stepSize)
				return samplers.NewSGDM(t, s)
			},
			settings: func(_ *options, k samplers.Kernel) map[string]any {
				return map[string]any{"sgdm_momentum": k.(*samplers.SGDM).Settings().Momentum}
			},
		},
	} {
		if err := registerSampler(s); err != nil {
			panic(err)
		}
	}
}

// kernel builds the sampler named by --sampler, and returns its label.
func (o *options) kernel(fs *pflag.FlagSet, task *catalog.Task, t samplers.Target) (samplers.Kernel, string, error) {
	s, err := lookupSampler(o.sampler)
	if err != nil {
		return nil, "", cli.Usagef("%v", err)
	}
	k, err := s.build(o, fs, task, t)
	if err != nil {
		var u *cli.UsageError
		if errors.As(err, &u) {
			return nil, "", err
		}
		return nil, "", usage(err)
	}
	return k, s.label, nil
}
