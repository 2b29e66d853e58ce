package catalog

import (
	"context"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// A validation gives the same figures on one core and on two, scores a run
// that loses a chain +Inf, and names its figures target by target.
func TestValidationRun(t *testing.T) {
	tr, err := nnsghmc.Load("../../../experiments/gaussian/sampler.json")
	if err != nil {
		t.Fatal(err)
	}
	v := &Validation{Task: "gaussian20", Seeds: []uint64{1, 2}, Chains: 10, Steps: 200, Metric: "kl", Every: 1,
		Targets: []ValidationTarget{{"calm", Options{TargetSeed: 11, TargetScale: 0.6}}, {"wild", Options{TargetSeed: 4, TargetScale: 0.5}}}}
	var results [2]*ValidationResult
	for i, procs := range []int{1, 2} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			if results[i], err = v.Run(context.Background(), tr, DefaultOptions, nil); err != nil {
				t.Fatal(err)
			}
		}()
	}
	a, b := results[0], results[1]
	if len(a.Figures) != 4 || len(b.Figures) != 4 {
		t.Fatalf("figures %v and %v, want 4", a.Figures, b.Figures)
	}
	for i := range a.Figures {
		if math.Float64bits(a.Figures[i]) != math.Float64bits(b.Figures[i]) {
			t.Errorf("figure %d: %v on one core, %v on two", i, a.Figures[i], b.Figures[i])
		}
	}
	if f := a.Figures; !(f[0] > 0 && f[1] > 0 && !math.IsInf(f[0], 0) && !math.IsInf(f[1], 0)) || !math.IsInf(f[2], 1) || !math.IsInf(f[3], 1) || !math.IsInf(a.Score, 1) {
		t.Errorf("figures %v, score %v: want finite KLs on the calm target and +Inf (lost chains) on the wild one", f, a.Score)
	}
	if names := v.Names(); len(names) != 4 || names[0] != "calm/seed-1" || names[3] != "wild/seed-2" {
		t.Errorf("names %q", names)
	}
}

// A run whose momenta run away without diverging scores +Inf, with the
// hottest chain's kinetic temperature as its metric, where its KL alone
// would give it a figure: on a target stiffer than the sampler's step
// allows (scale 0.15) the toy sampler's chains are at a kinetic
// temperature of about 10¹³ after 20 steps, still finite. A calm target
// keeps its KL, with the temperature beside it.
func TestValidationRunawayMomentaLoseTheRun(t *testing.T) {
	tr, err := nnsghmc.Load("../../../experiments/gaussian/sampler.json")
	if err != nil {
		t.Fatal(err)
	}
	v := Validation{Task: "gaussian20", Seeds: []uint64{1}, Chains: 10, Steps: 20, Metric: "kl", Every: 1,
		Targets: []ValidationTarget{{"stiff", Options{TargetSeed: 11, TargetScale: 0.15}}, {"calm", Options{TargetSeed: 11, TargetScale: 0.6}}}}
	r := validate(t, tr, v)
	stiff, calm := r.Values[0], r.Values[1]
	if !math.IsInf(r.Figures[0], 1) || len(stiff) != 1 || !(stiff[kineticTemperatureMax] > samplers.RunawayTemperature) ||
		math.IsInf(stiff[kineticTemperatureMax], 0) {
		t.Errorf("stiff target: figure %v, metrics %v; want +Inf with a finite temperature above %v", r.Figures[0], stiff, samplers.RunawayTemperature)
	}
	if f := r.Figures[1]; math.IsInf(f, 0) || calm["kl"] != f || !(calm[kineticTemperatureMax] < samplers.RunawayTemperature) {
		t.Errorf("calm target: figure %v, metrics %v; want its KL and a temperature below %v", f, calm, samplers.RunawayTemperature)
	}
	if !strings.Contains(v.Describe(), "kinetic temperature ends above 100") {
		t.Errorf("the description %q does not say so", v.Describe())
	}
}

// The MNIST validation tasks sample on the training split less its last
// 10,000 images (of their digits) and score on those.
func TestValidationTasksHoldOutTheirData(t *testing.T) {
	haveData(t, "mnist/train-labels-idx1-ubyte.gz")
	full, err := New("mnist-relu", DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	data, err := New("mnist-data", DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want float64
	}{{"mnist-valid", full.Defaults.DataSize - 10000}, {"mnist-data-valid", data.Defaults.DataSize - 10000}} {
		task, err := New(c.name, DefaultOptions)
		if err != nil {
			t.Fatal(err)
		}
		if task.Defaults.DataSize != c.want {
			t.Errorf("%s samples on %v images, want %v", c.name, task.Defaults.DataSize, c.want)
		}
	}
}

// A validation scores the mean of its figures, or with Worst the largest.
func TestValidationScore(t *testing.T) {
	tr, err := nnsghmc.Load("../../../experiments/gaussian/sampler.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, worst := range []bool{false, true} {
		v := &Validation{Task: "gaussian20", Seeds: []uint64{1}, Chains: 10, Steps: 200, Metric: "kl", Every: 1, Worst: worst,
			Targets: []ValidationTarget{{"a", Options{TargetSeed: 11, TargetScale: 0.6}}, {"b", Options{TargetSeed: 13, TargetScale: 0.5}}}}
		r, err := v.Run(context.Background(), tr, DefaultOptions, nil)
		if err != nil {
			t.Fatal(err)
		}
		f := r.Figures
		want := (f[0] + f[1]) / 2
		if worst {
			want = max(f[0], f[1])
		}
		if f[0] == f[1] || r.Score != want {
			t.Errorf("worst %v: figures %v, score %v, want %v from two different figures", worst, f, r.Score, want)
		}
	}
}

// With Bars a run's figure is the largest of its metrics over their bars:
// the same runs scored by each metric alone give it.
func TestValidationBars(t *testing.T) {
	tr, err := nnsghmc.Load("../../../experiments/gaussian/sampler.json")
	if err != nil {
		t.Fatal(err)
	}
	base := Validation{Task: "gaussian20", Seeds: []uint64{1}, Chains: 10, Steps: 300, Every: 1,
		Targets: []ValidationTarget{{"a", Options{TargetSeed: 11, TargetScale: 0.6}}, {"b", Options{TargetSeed: 13, TargetScale: 0.5}}}}
	kl, ess := base, base
	kl.Metric, ess.Metric = "kl", "ess"
	bars := base
	bars.Bars = []Bar{{Metric: "kl", Bound: 0.03}, {Metric: "ess", Bound: 50, AtLeast: true}}
	k, e, r := validate(t, tr, kl).Figures, validate(t, tr, ess).Figures, validate(t, tr, bars)
	for i, b := range r.Figures {
		want := max(k[i]/0.03, 50/e[i])
		if b != want || k[i]/0.03 == 50/e[i] {
			t.Errorf("target %d: figure %v, want max(%v/0.03, 50/%v) = %v", i, b, k[i], e[i], want)
		}
		// the metrics the figure is made of come with it, and the hottest chain's temperature
		if v := r.Values[i]; len(v) != 3 || v["kl"] != k[i] || v["ess"] != e[i] || !(v[kineticTemperatureMax] > 0) {
			t.Errorf("target %d: values %v, want kl %v, ess %v and %s", i, v, k[i], e[i], kineticTemperatureMax)
		}
	}
	if got, want := bars.ScoreName(), "mean max(kl/0.03, 50/ess)"; got != want {
		t.Errorf("ScoreName %q, want %q", got, want)
	}
}

// A start bar multiplies a run's figure by how far the run misses it at
// its step, records the value as METRIC@STEP, and changes the figures'
// description, so that figures made without it are not taken for its.
func TestValidationStartBar(t *testing.T) {
	tr, err := nnsghmc.Load("../../../experiments/gaussian/sampler.json")
	if err != nil {
		t.Fatal(err)
	}
	plain := Validation{Task: "gaussian20", Seeds: []uint64{1, 2}, Chains: 10, Steps: 200, Metric: "kl", Every: 1,
		Targets: []ValidationTarget{{"calm", Options{TargetSeed: 11, TargetScale: 0.6}}}}
	base := validate(t, tr, plain)
	for _, bound := range []float64{1e-6, 1e6} {
		v := plain
		v.Start = &Bar{Metric: "kl", Bound: bound, Step: 50}
		res := validate(t, tr, v)
		for i, f := range res.Figures {
			start, ok := res.Values[i]["kl@50"]
			if !ok || !(start > 0) {
				t.Fatalf("bound %g, run %d: metrics %v, want kl@50", bound, i, res.Values[i])
			}
			if want := base.Figures[i] * max(1, start/bound); f != want {
				t.Errorf("bound %g, run %d: figure %v, want %v × max(1, %v/%g) = %v", bound, i, f, base.Figures[i], start, bound, want)
			}
		}
		if bound == 1e-6 && !(res.Score > 1e3*base.Score) {
			t.Errorf("a missed start bar leaves the score at %v (without it %v)", res.Score, base.Score)
		}
		if v.SameFigures(plain.Describe()) || plain.SameFigures(v.Describe()) || !v.SameFigures(v.Describe()) {
			t.Errorf("SameFigures does not tell %q from %q", v.ScoreName(), plain.ScoreName())
		}
	}
	longer := plain
	longer.Steps = 300
	if longer.SameFigures(plain.Describe()) {
		t.Error("SameFigures takes figures of 200 steps for 300")
	}
	more := plain
	more.Targets = append(more.Targets, ValidationTarget{"wild", Options{TargetSeed: 4, TargetScale: 0.5}})
	if !more.SameFigures(plain.Describe()) {
		t.Error("SameFigures refuses the figures of a protocol with fewer targets")
	}
	late := plain
	late.Start = &Bar{Metric: "kl", Bound: 1, Step: 500}
	if _, err := late.Run(context.Background(), tr, DefaultOptions, nil); err == nil {
		t.Error("a start bar after the last step gives no error")
	}
}

// validate runs v for tr with the default options, failing t on an error.
func validate(t *testing.T, tr *nnsghmc.Trained, v Validation) *ValidationResult {
	t.Helper()
	res, err := v.Run(context.Background(), tr, DefaultOptions, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The thermostat and the adaptive friction of a protocol change the
// figures' description, so that figures made without them are not taken
// for theirs; the adaptive friction reaches a sampler of the exponential
// friction step (its figures differ from the plain protocol's) and leaves
// one of the explicit step, which cannot take it, as it is.
func TestValidationSamplerSettings(t *testing.T) {
	plain := Validation{Task: "gaussian20", Seeds: []uint64{1}, Chains: 4, Steps: 30, Metric: "kl", Every: 1,
		Targets: []ValidationTarget{{"calm", Options{TargetSeed: 11, TargetScale: 0.6}}}}
	cooled, adaptive := plain, plain
	cooled.Thermostat, adaptive.AdaptiveFriction = 3, 0.1
	for _, v := range []Validation{cooled, adaptive} {
		if v.SameFigures(plain.Describe()) || plain.SameFigures(v.Describe()) || !v.SameFigures(v.Describe()) {
			t.Errorf("SameFigures does not tell %q from %q", v.Describe(), plain.Describe())
		}
	}
	for _, tc := range []struct {
		file  string
		takes bool
	}{{"../../../experiments/gaussian/sampler.json", false}, {"../../../experiments/mnist-nt/sampler.json", true}} {
		tr, err := nnsghmc.Load(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		a, b := validate(t, tr, plain), validate(t, tr, adaptive)
		if differ := a.Figures[0] != b.Figures[0]; differ != tc.takes {
			t.Errorf("%s (%s friction step): figures %v without the adaptive friction and %v with it, want them to differ: %v",
				tc.file, tr.Domain.Friction, a.Figures, b.Figures, tc.takes)
		}
	}
}
