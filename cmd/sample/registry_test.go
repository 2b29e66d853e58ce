package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
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

// TestOptimisersRunFromTheLearningRate: each optimiser runs on a Gaussian
// task with the step size --lr gives it, as the help says: Adam takes the
// learning rate itself, SGD-M and Santa lr/N, as SGLD; and Santa's
// exploration defaults to 15 % of the task's default steps; summary.json
// records each kernel's settings.
func TestOptimisersRunFromTheLearningRate(t *testing.T) {
	for _, c := range []struct {
		sampler string
		args    []string
		step    float64
		flags   map[string]string
	}{
		{"adam", nil, 0.02, nil},
		{"sgdm", nil, 0.02, nil},
		{"santa", nil, 0.02, map[string]string{"santa-explore": "1800", "santa-anneal": "0.5"}}, // 15 % of 12000
		{"santa", []string{"-santa-explore", "7", "-santa-anneal", "0"}, 0.02, map[string]string{"santa-explore": "7", "santa-anneal": "0"}},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := append([]string{"-task", "gaussian20", "-sampler", c.sampler, "-lr", "0.02", "-chains", "3", "-steps", "20",
			"-eval-every", "10", "-quiet", "-out", out}, c.args...)
		if err := run(context.Background(), args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var sum struct {
			StepSize float64           `json:"step_size"`
			Steps    int               `json:"steps"`
			Flags    map[string]string `json:"flags"`
			Santa    map[string]any    `json:"santa"`
			Adam     map[string]any    `json:"adam"`
			Momentum *float64          `json:"sgdm_momentum"`
		}
		b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		if sum.StepSize != c.step || sum.Steps != 20 {
			t.Errorf("%v: step size %v after %d steps, want %v after 20", args, sum.StepSize, sum.Steps, c.step)
		}
		for k, v := range c.flags {
			if sum.Flags[k] != v {
				t.Errorf("%v: --%s resolved to %q, want %q", args, k, sum.Flags[k], v)
			}
		}
		// the kernel's settings in summary.json
		switch c.sampler {
		case "santa":
			explore, _ := strconv.ParseFloat(c.flags["santa-explore"], 64)
			if sum.Santa["noise"] != "sde" || sum.Santa["decay"] != 0.95 || sum.Santa["explore"] != explore {
				t.Errorf("%v: summary.json's santa: %v", args, sum.Santa)
			}
		case "adam":
			if sum.Adam["beta1"] != 0.9 || sum.Adam["beta2"] != 0.999 || sum.Adam["epsilon"] != 1e-8 {
				t.Errorf("%v: summary.json's adam: %v", args, sum.Adam)
			}
		case "sgdm":
			if sum.Momentum == nil || *sum.Momentum != 0.9 {
				t.Errorf("%v: summary.json's sgdm_momentum: %v", args, sum.Momentum)
			}
		}
	}
}

// TestLRConversions: --lr gives each sampler the step size its doc comment
// names, on N = 1000 data.
func TestLRConversions(t *testing.T) {
	want := map[string]float64{"sgld": 1e-6, "psgld": 1e-6, "sgdm": 1e-6, "santa": 1e-6, "adam": 1e-3, "sghmc": 1e-3, "nnsghmc": 1e-3}
	for _, s := range samplerTable {
		w, ok := want[s.name]
		if !ok {
			t.Errorf("--sampler %s: no expected conversion", s.name)
			continue
		}
		if got := s.fromLR(1e-3, 1000); math.Abs(got-w) > 1e-15 {
			t.Errorf("--sampler %s: --lr 0.001 on 1000 data gives η = %v, want %v", s.name, got, w)
		}
	}
}

// TestDefaultOffsetTakesFQsSign: on jsb-gru, whose default offset has
// size 1.5, a run without --beta gives β the sign of the trained f_Q (a
// constant +1 or −1 here), as summary.json records it; --beta is taken as
// given, against f_Q's sign too.
func TestDefaultOffsetTakesFQsSign(t *testing.T) {
	needData(t, jsbData)
	for _, c := range []struct {
		fq   float64
		args []string
		want float64
	}{
		{1, nil, 1.5},
		{-1, nil, -1.5},
		{1, []string{"-beta", "-0.7"}, -0.7},
	} {
		tr := nnsghmc.RandomTrained([]int{3}, []int{3}, nnsghmc.Inputs{EnergyScale: -1, GradScale: 30, MomentumScale: 1}, 20, rand.New(rand.NewPCG(1, 1)))
		last := len(tr.Q.W) - 1
		clear(tr.Q.W[last])
		tr.Q.B[last][0] = c.fq
		dir := t.TempDir()
		meta := filepath.Join(dir, "sampler.json")
		var b bytes.Buffer
		if err := tr.Encode(&b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(meta, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out")
		args := append([]string{"-task", "jsb-gru", "-sampler", "nnsghmc", "-meta", meta, "-hidden", "4", "-chains", "2", "-steps", "2",
			"-eval-every", "2", "-quiet", "-out", out}, c.args...)
		if err := run(context.Background(), args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var sum struct {
			NN struct {
				Beta float64 `json:"beta"`
			} `json:"nnsghmc"`
			Flags map[string]string `json:"flags"`
		}
		s, _ := os.ReadFile(filepath.Join(out, "summary.json"))
		if err := json.Unmarshal(s, &sum); err != nil {
			t.Fatal(err)
		}
		if sum.NN.Beta != c.want {
			t.Errorf("f_Q = %g, %v: β = %g, want %g", c.fq, c.args, sum.NN.Beta, c.want)
		}
		if got := sum.Flags["beta"]; got != strconv.FormatFloat(c.want, 'g', -1, 64) {
			t.Errorf("f_Q = %g, %v: the flags recorded --beta %s, want the β it ran with, %g", c.fq, c.args, got, c.want)
		}
	}
}
