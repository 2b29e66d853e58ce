package main

import (
	"context"
	"errors"
	"testing"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// withSamplers registers extra beside the built-in samplers for the rest
// of t, and restores the registry when t ends.
func withSamplers(t *testing.T, extra ...sampler) {
	t.Helper()
	saved := samplerTable
	samplerTable = append([]*sampler(nil), saved...)
	t.Cleanup(func() { samplerTable = saved })
	for _, s := range extra {
		if err := registerSampler(s); err != nil {
			t.Fatal(err)
		}
	}
}

// sgldBuild is a kernel constructor for the test samplers.
func sgldBuild(o *options, _ *pflag.FlagSet, _ *catalog.Task, t samplers.Target) (samplers.Kernel, error) {
	return samplers.NewSGLD(t, samplers.SGLDSettings{StepSize: samplers.Constant(o.stepSize)})
}

// TestRegisterSamplerRefusesAnIncompleteSampler: a sampler without a
// default step size, kernel, name or label, or under a name already taken,
// is refused when it is registered.
func TestRegisterSamplerRefusesAnIncompleteSampler(t *testing.T) {
	withSamplers(t)
	step := func(catalog.Defaults) float64 { return 0.1 }
	for _, c := range []struct {
		name string
		s    sampler
		want string
	}{
		{"no default step size", sampler{name: "mine", label: "Mine", build: sgldBuild}, "sampler mine has no default step size"},
		{"no kernel", sampler{name: "mine", label: "Mine", stepSize: step}, "sampler mine has no kernel constructor"},
		{"no name", sampler{label: "Mine", build: sgldBuild, stepSize: step}, "a sampler needs a name and a label"},
		{"no label", sampler{name: "mine", build: sgldBuild, stepSize: step}, "a sampler needs a name and a label"},
		{"a name taken", sampler{name: "sghmc", label: "SGHMC", build: sgldBuild, stepSize: step}, "sampler sghmc is registered twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := len(samplerTable)
			err := registerSampler(c.s)
			if err == nil || err.Error() != c.want {
				t.Errorf("error %v, want %q", err, c.want)
			}
			if len(samplerTable) != n {
				t.Errorf("a refused sampler was registered")
			}
		})
	}
	if err := registerSampler(sampler{name: "mine", label: "Mine", build: sgldBuild, stepSize: step}); err != nil {
		t.Errorf("a complete sampler was refused: %v", err)
	}
}

// TestEverySamplerHasEveryTasksStepSize: every registered sampler has a
// default step size on every task, so that no run falls back on another
// sampler's.
func TestEverySamplerHasEveryTasksStepSize(t *testing.T) {
	for _, name := range catalog.Names() {
		t.Run(name, func(t *testing.T) {
			task, err := catalog.New(name, catalog.DefaultOptions)
			if _, ok := err.(*datadir.MissingError); ok {
				datatest.Skip(t, err.Error())
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range samplerTable {
				if eta := s.stepSize(task.Defaults); !(eta > 0) {
					t.Errorf("--sampler %s has default step size %v on task %s", s.name, eta, name)
				}
			}
		})
	}
}

// TestASamplerWithoutTheTasksStepSizeIsRefused: a run of a sampler whose
// task has no default step size for it is a usage error unless --step-size
// or --lr gives one, rather than a run with another sampler's step.
func TestASamplerWithoutTheTasksStepSizeIsRefused(t *testing.T) {
	withSamplers(t, sampler{name: "mine", label: "Mine", firstOrder: true, build: sgldBuild,
		stepSize: func(def catalog.Defaults) float64 { return def.StepSize["mine"] }})
	dir := t.TempDir()
	err := run(context.Background(), []string{"-task", "gaussian2d", "-sampler", "mine", "-steps", "5", "-chains", "10", "-quiet", "-out", dir})
	var u *cli.UsageError
	if want := "task gaussian2d has no default step size for --sampler mine; give --step-size or --lr"; !errors.As(err, &u) || err.Error() != want {
		t.Errorf("error %v, want the usage error %q", err, want)
	}
	for _, step := range [][]string{{"-step-size", "0.01"}, {"-lr", "0.01"}} {
		err := run(context.Background(), append([]string{"-task", "gaussian2d", "-sampler", "mine", "-steps", "5", "-chains", "10", "-quiet", "-force", "-out", dir}, step...))
		if err != nil {
			t.Errorf("%s: %v", step[0], err)
		}
	}
}
