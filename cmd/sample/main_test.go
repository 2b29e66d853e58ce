package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
	"github.com/metasgmcmc/metasgmcmc/samplers/trace"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// TestMain lets tests run the command itself as a subprocess (see
// clitest.Main).
func TestMain(m *testing.M) { os.Exit(clitest.Main(m, main, datatest.Main)) }

func TestBadInputGivesOneLineAndStatus2(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.flags")
	os.WriteFile(bad, []byte("--steps 10\n--no-such-flag 3\n"), 0o644)
	cov2 := filepath.Join(dir, "cov2")
	os.WriteFile(cov2, []byte("1 0\n0 1\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-task", "nope", "-out", dir}, `unknown task "nope"`},
		{[]string{"-sampler", "hmc", "-out", dir, "-steps", "1"}, `unknown sampler "hmc"`},
		{[]string{"-chains", "0", "-out", dir}, "--chains must be positive"},
		{[]string{"-step-size", "-0.1", "-out", dir}, "--step-size must be positive"},
		{[]string{"-steps", "-5", "-out", dir}, "--steps must be positive"},
		{[]string{"-gamma", "approx", "-out", dir, "-steps", "1"}, `unknown gamma "approx"`},
		{[]string{"-flagfile", filepath.Join(dir, "missing.flags"), "-out", dir}, "cannot read flag file"},
		{[]string{"-flagfile", bad, "-out", dir}, "line 2: unknown flag --no-such-flag"},
		{[]string{"-meta", filepath.Join(dir, "none.json"), "-out", dir, "-steps", "1"}, "cannot read sampler file"},
		{[]string{"-steps", "3"}, "--out DIR is required"},
		{[]string{"-sampler", "sghmc", "-meta", "sampler.json", "-out", dir}, "--meta is a flag of --sampler nnsghmc; --sampler sghmc does not use it"},
		{[]string{"-sampler", "sgld", "-friction", "1", "-out", dir}, "--friction is a flag of --sampler sghmc"},
		{[]string{"-sampler", "nnsghmc", "-psgld-decay", "0.9", "-out", dir}, "--psgld-decay is a flag of --sampler psgld"},
		{[]string{"-sampler", "adam", "-santa-explore", "10", "-out", dir}, "--santa-explore is a flag of --sampler santa; --sampler adam does not use it"},
		{[]string{"-task", "gaussian20", "-valid", "-out", dir}, "--valid is a flag of the GRU tasks; task gaussian20 does not use it"},
		{[]string{"-task", "gaussian20", "-hidden", "50", "-out", dir}, "--hidden is a flag of the GRU tasks"},
		{[]string{"-task", "gaussian20", "-initial-state", "-out", dir}, "--initial-state is a flag of the GRU tasks"},
		{[]string{"-task", "gaussian20", "-reset-after", "-out", dir}, "--reset-after is a flag of the GRU tasks"},
		{[]string{"-task", "gaussian20", "-download", "-out", dir}, "--download is a flag of the MNIST tasks"},
		{[]string{"-task", "gaussian20", "-target-cov", cov2, "-out", dir}, "is 2×2; this task's target is 20-D"},
		{[]string{"-task", "gaussian20", "-target-cov", filepath.Join(dir, "none"), "-out", dir}, "cannot read the covariance"},
		{[]string{"-task", "gaussian20", "-target-cov", cov2, "-target-seed", "3", "-out", dir}, "--target-cov replaces the covariance"},
		{[]string{"-task", "gaussian2d", "-target-cov", cov2, "-out", dir}, "--target-cov is a flag of the toy Gaussian"},
		{[]string{"-task", "gaussian20", "-patience", "2", "-out", dir}, "--patience N stops on the validation NLL of the GRU tasks: give --valid too"},
		{[]string{"-patience", "-1", "-out", dir}, "--patience must be non-negative, got -1"},
	}
	for _, tc := range tests {
		code, stderr := clitest.Command(t, tc.args...)
		clitest.CheckUsageError(t, "sample", tc.args, code, stderr, tc.want)
	}
}

func TestRunWritesOutputsReproducibly(t *testing.T) {
	outs := []string{t.TempDir(), t.TempDir()}
	for _, out := range outs {
		args := []string{"-task", "gaussian20", "-sampler", "nnsghmc", "-chains", "4", "-steps", "30",
			"-eval-every", "10", "-q-hidden", "5", "-d-hidden", "5", "-seed", "3", "-quiet", "-out", out}
		if err := run(context.Background(), args); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"metrics.csv", "metrics.png", "metrics.svg", "summary.json"} {
		a, err := os.ReadFile(filepath.Join(outs[0], name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "metrics.csv" {
			b, _ := os.ReadFile(filepath.Join(outs[1], name))
			a, b = dropColumn(a, 1), dropColumn(b, 1) // seconds differ
			if !bytes.Equal(a, b) {
				t.Errorf("%s differs between two runs with the same seed", name)
			}
		}
	}
	var sum map[string]any
	b, _ := os.ReadFile(filepath.Join(outs[0], "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"task", "sampler", "chains", "steps", "seed", "seconds", "steps_per_second", "kl", "ess", "flags",
		"ess_min", "rhat_max", "rhat_rank_max", "ess_bulk_min", "ess_tail_min", "kinetic_temperature", "kinetic_temperature_max", "kinetic_hot_fraction"} {
		if _, ok := sum[key]; !ok {
			t.Errorf("summary.json lacks %q", key)
		}
	}
	if sum["steps"].(float64) != 30 || sum["chains"].(float64) != 4 {
		t.Errorf("summary: %v steps, %v chains", sum["steps"], sum["chains"])
	}
	m, _ := os.ReadFile(filepath.Join(outs[0], "metrics.csv"))
	if lines := strings.Split(strings.TrimSpace(string(m)), "\n"); len(lines) != 4 || lines[0] != "step,seconds,kl,kinetic_temperature,kinetic_temperature_max,kinetic_hot_fraction" {
		t.Errorf("metrics.csv:\n%s", m)
	}
	entries, _ := os.ReadDir(outs[0])
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestKineticTemperatureOfMomentumSamplers: metrics.csv reports the
// chains' kinetic temperature for the samplers whose momenta are N(0, I) at
// equilibrium, and for no other; on the 20-D toy, after 1,000 steps of
// SGHMC or NNSGHMC at the task's step size, 50 chains' mean is within 0.1
// of 1 (its Monte-Carlo spread about 0.02) and at most 2 of the 20
// coordinates run hot.
func TestKineticTemperatureOfMomentumSamplers(t *testing.T) {
	for _, tc := range []struct {
		sampler string
		want    bool
	}{{"sghmc", true}, {"nnsghmc", true}, {"sgld", false}, {"psgld", false}, {"adam", false}, {"sgdm", false}, {"santa", false}} {
		out := t.TempDir()
		args := []string{"-task", "gaussian20", "-sampler", tc.sampler, "-chains", "50", "-steps", "1000", "-eval-every", "1000", "-quiet", "-out", out}
		if err := run(context.Background(), args); err != nil {
			t.Fatal(err)
		}
		rows := readMetrics(t, filepath.Join(out, "metrics.csv"))
		header := strings.Join(rows[0], ",")
		if has := strings.HasSuffix(header, ",kinetic_temperature,kinetic_temperature_max,kinetic_hot_fraction"); has != tc.want {
			t.Errorf("%s: metrics.csv's header %q", tc.sampler, header)
			continue
		}
		if !tc.want {
			continue
		}
		last := rows[len(rows)-1]
		mean, _ := strconv.ParseFloat(last[len(last)-3], 64)
		max, _ := strconv.ParseFloat(last[len(last)-2], 64)
		hot, _ := strconv.ParseFloat(last[len(last)-1], 64)
		// 20 coordinates: a share of 0.1 is 2 of them, each hot at
		// equilibrium with probability 0.001
		if math.Abs(mean-1) > 0.1 || max < mean || hot > 0.1 {
			t.Errorf("%s: kinetic temperature %v, hottest chain %v, hot share %v", tc.sampler, mean, max, hot)
		}
	}
}

// TestRunawayTemperatureIsWarnedOf: the hottest chain is named, with its
// temperature and the step, when it passes samplers.RunawayTemperature;
// a chain at equilibrium, or merely warm, is not warned of.
func TestRunawayTemperatureIsWarnedOf(t *testing.T) {
	for _, tc := range []struct {
		p    []float64 // 2 chains of 2 coordinates
		mean float64
		want string
	}{
		{[]float64{1, 0.5, -1, 1.5}, 1.125, ""},
		{[]float64{10, 0.5, -10, 1.5}, 50.625, ""},
		{[]float64{1, 30, -1, -20}, 325.5, "chain 1's kinetic temperature (its mean squared momentum) is 650 at step 7,"},
		{[]float64{1, math.NaN(), -1, 1}, math.NaN(), "chain 1's kinetic temperature (its mean squared momentum) is NaN at step 7,"},
	} {
		ms, hot, err := temperatureMetrics(tc.p, 2, 7, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !(ms[0].Value == tc.mean || math.IsNaN(tc.mean) && math.IsNaN(ms[0].Value)) || ms[0].Name != "kinetic_temperature" || ms[1].Name != "kinetic_temperature_max" {
			t.Errorf("%v: metrics %v, want the mean %v", tc.p, ms, tc.mean)
		}
		if tc.want == "" && hot != "" || !strings.HasPrefix(hot, tc.want) {
			t.Errorf("%v: warning %q, want %q", tc.p, hot, tc.want)
		}
	}
}

// TestRunawayChainIsWarnedOfWhenItHappens: the first evaluation that finds
// a chain above samplers.RunawayTemperature warns of it (into summary.json
// too), even where the run ends with every chain cooled; the end of a run
// adds its own warning only for a hot chain that its last evaluation did not
// already name. SGHMC on a stiff Gaussian (scale 0.05) from the task's
// start runs hot through its burn-in.
func TestRunawayChainIsWarnedOfWhenItHappens(t *testing.T) {
	for _, tc := range []struct {
		scale, stepSize string
		steps           string
		want            []string // the steps named by the temperature warnings, in order
	}{
		{"0.6", "0.05", "400", nil},                     // calm throughout
		{"0.05", "0.01", "400", []string{"20"}},         // hot at step 20, cooled (63) by the end
		{"0.05", "0.005", "400", []string{"20", "400"}}, // hot at 20 and still at the end
		{"0.05", "0.01", "20", []string{"20"}},          // hot at its last evaluation: named once
	} {
		out := t.TempDir()
		err := run(context.Background(), []string{"-task", "gaussian20", "-sampler", "sghmc", "-target-scale", tc.scale,
			"-step-size", tc.stepSize, "-chains", "3", "-steps", tc.steps, "-eval-every", "20", "-quiet", "-force", "-out", out})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var summary struct{ Warnings []string }
		if err := json.Unmarshal(b, &summary); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range summary.Warnings {
			if _, rest, ok := strings.Cut(w, "kinetic temperature (its mean squared momentum) is "); ok {
				_, step, _ := strings.Cut(rest, " at step ")
				step, _, _ = strings.Cut(step, ",")
				got = append(got, step)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("scale %s, η %s, %s steps: temperature warnings at steps %v, want %v (%q)", tc.scale, tc.stepSize, tc.steps, got, tc.want, summary.Warnings)
		}
	}
}

// TestBlockTemperatures: each named block's temperature is its momenta's
// mean square over the chains, after the hot share, by hand for two chains
// of three coordinates (coordinate-major).
func TestBlockTemperatures(t *testing.T) {
	p := []float64{1, 3, 2, 0, 4, 2} // coordinate 0: 1, 3; 1: 2, 0; 2: 4, 2
	blocks := []tasks.Block{{Name: "a", Lo: 0, Hi: 1}, {Name: "bc", Lo: 1, Hi: 3}}
	ms, _, err := temperatureMetrics(p, 2, 1, blocks)
	if err != nil {
		t.Fatal(err)
	}
	want := []tasks.Metric{{Name: "kinetic_temperature_a", Value: 5}, {Name: "kinetic_temperature_bc", Value: 6}}
	if len(ms) != 5 || ms[2].Name != "kinetic_hot_fraction" || !slices.Equal(ms[3:], want) {
		t.Errorf("metrics %v, want the chains' three then %v", ms, want)
	}
}

func dropColumn(csv []byte, col int) []byte {
	var out []string
	for _, line := range strings.Split(string(csv), "\n") {
		f := strings.Split(line, ",")
		if len(f) > col {
			f = append(f[:col], f[col+1:]...)
		}
		out = append(out, strings.Join(f, ","))
	}
	return []byte(strings.Join(out, "\n"))
}

func TestDivergenceIsReportedNotPrinted(t *testing.T) {
	out := t.TempDir()
	err := run(context.Background(), []string{"-task", "gaussian20", "-sampler", "sgld", "-step-size", "5", "-chains", "3",
		"-steps", "200", "-quiet", "-out", out})
	if err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Fatalf("want a divergence error, got %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if !strings.Contains(string(b), "diverged") {
		t.Errorf("summary.json does not report the divergence:\n%s", b)
	}
}

// small is a quick NNSGHMC run on the toy Gaussian.
var small = []string{"-task", "gaussian20", "-sampler", "nnsghmc", "-chains", "4", "-steps", "30",
	"-eval-every", "10", "-q-hidden", "5", "-d-hidden", "5", "-seed", "3", "-quiet"}

// TestOutRefusesAnExistingRunUnlessForce: a second run into an --out that
// holds a run is refused and leaves it alone; with --force it replaces the
// run, and no file of the old one (trace.bin, and the trace.csv of a run
// from before --trace-every) stays beside the new.
func TestOutRefusesAnExistingRunUnlessForce(t *testing.T) {
	out := t.TempDir()
	if err := run(context.Background(), append(small, "-trace-every", "10", "-out", out)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "trace.csv"), []byte("step,chain,theta_0\n1,0,0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	code, stderr := clitest.Command(t, append(small, "-seed", "4", "-out", out)...)
	more := 4 // metrics.svg, summary.json, trace.bin, trace.csv
	if trace.NetCDF {
		more++ // trace.nc
	}
	want := fmt.Sprintf("sample: error: %s already holds a sample run (config.json, metrics.csv, metrics.png and %d more); give --force to replace it, or choose another --out\n", out, more)
	if code != 2 || stderr != want {
		t.Errorf("second run: status %d, stderr %q; want 2, %q", code, stderr, want)
	}
	if after, _ := os.ReadFile(filepath.Join(out, "summary.json")); !bytes.Equal(before, after) {
		t.Error("the refused run changed summary.json")
	}
	if err := run(context.Background(), append(small, "-seed", "4", "-force", "-out", out)); err != nil {
		t.Fatal(err)
	}
	var names []string
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "config.json metrics.csv metrics.png metrics.svg summary.json" {
		t.Errorf("after --force: %s", got)
	}
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if !strings.Contains(string(b), `"seed": 4`) {
		t.Errorf("summary.json is not the new run's:\n%s", b)
	}
}

// TestUsageErrorsLeaveNoOutDir: every usage error, also those found only
// when the sampler is built, is reported before --out is created; NaN and
// infinite values of float flags are refused.
func TestUsageErrorsLeaveNoOutDir(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-noise", "NaN"}, "--noise must be a finite number, got NaN"},
		{[]string{"-noise", "-1"}, "--noise must be non-negative"},
		{[]string{"-noise", "Inf"}, "--noise must be a finite number, got +Inf"},
		{[]string{"-target-scale", "NaN"}, "--target-scale must be a finite number"},
		{[]string{"-target-scale", "0"}, "--target-scale must be a positive number, got 0"},
		{[]string{"-step-size", "Inf"}, "--step-size must be a finite number"},
		{[]string{"-sampler", "psgld", "-lr", "NaN"}, "--lr must be a finite number"},
		{[]string{"-sampler", "sghmc", "-friction", "-Inf"}, "--friction must be a finite number"},
		{[]string{"-sampler", "psgld", "-psgld-decay", "1.5"}, "pSGLD decay must be in [0, 1)"},
		{[]string{"-sampler", "santa", "-santa-explore", "-2"}, "--santa-explore must be a non-negative number of steps, got -2"},
		{[]string{"-sampler", "santa", "-santa-anneal", "-1"}, "--santa-anneal must be non-negative, got -1"},
		{[]string{"-sampler", "santa", "-santa-anneal", "NaN"}, "--santa-anneal must be a finite number"},
		{[]string{"-sampler", "adam", "-lr", "Inf"}, "--lr must be a finite number"},
		{[]string{"-alpha", "-1"}, "NNSGHMC alpha"},
		{[]string{"-beta", "NaN"}, "--beta must be a finite number"},
		{[]string{"-gamma", "approx"}, `unknown gamma "approx"`},
		{[]string{"-meta", "none.json"}, "cannot read sampler file"},
		{[]string{"-task", "nope"}, `unknown task "nope"`},
	}
	root := t.TempDir()
	for i, tc := range tests {
		out := filepath.Join(root, strconv.Itoa(i), "out")
		code, stderr := clitest.Command(t, append(tc.args, "-steps", "3", "-out", out)...)
		clitest.CheckUsageError(t, "sample", tc.args, code, stderr, tc.want)
		if _, err := os.Stat(filepath.Join(root, strconv.Itoa(i))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: left a directory behind (%v)", tc.args, err)
		}
	}
}

// TestRepeatedFlagFiles: every --flagfile applies, in order, the command
// line overriding them; a binary flag file gets a one-line error naming it.
func TestRepeatedFlagFiles(t *testing.T) {
	dir := t.TempDir()
	base, over, bin := filepath.Join(dir, "base.flags"), filepath.Join(dir, "over.flags"), filepath.Join(dir, "bin.flags")
	os.WriteFile(base, []byte("--task gaussian20\n--chains 3\n--steps 30\n--eval-every 10\n--q-hidden 5\n--d-hidden 5\n"), 0o644)
	os.WriteFile(over, []byte("--steps 20\n--seed 7\n"), 0o644)
	os.WriteFile(bin, []byte{0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03, '\n', 0xff, 0xfe, 0x1b, '[', '2', 'J'}, 0o644)
	out := filepath.Join(dir, "out")
	if err := run(context.Background(), []string{"-flagfile", base, "-flagfile", over, "-seed", "8", "-quiet", "-out", out}); err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Chains, Steps int
		Seed          uint64
	}
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil || sum.Chains != 3 || sum.Steps != 20 || sum.Seed != 8 {
		t.Errorf("summary: %+v (%v); want 3 chains from the first file, 20 steps from the second, seed 8 from the command line", sum, err)
	}
	code, stderr := clitest.Command(t, "-flagfile", base, "-flagfile", bin, "-out", filepath.Join(dir, "bin"))
	want := "sample: error: flag file " + bin + " is not a text file (byte 0 is 0x1f); a flag file holds one flag per line, as --name=value\n"
	if code != 2 || stderr != want {
		t.Errorf("binary flag file: status %d, stderr %q; want 2, %q", code, stderr, want)
	}
}

// long is a run that takes minutes: tests stop it.
var long = []string{"-task", "gaussian20", "-sampler", "sgld", "-chains", "4", "-steps", "2000000", "-eval-every", "100"}

// TestSignalsStopWithASummary: SIGINT and SIGTERM stop a run, which writes
// its summary with the error and exits with 130 and 143; while it runs, a
// second run into the same --out is refused with a line naming the
// directory and the first run's PID; the log (stderr is not a terminal)
// reports progress and where the outputs are.
func TestSignalsStopWithASummary(t *testing.T) {
	for _, sig := range clitest.StopSignals {
		t.Run(sig.Name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			first := clitest.Start(t, append(long, "-out", out)...)
			clitest.WaitFor(t, filepath.Join(out, "metrics.csv"))

			code, stderr := clitest.Command(t, append(small, "-out", out)...)
			want := fmt.Sprintf("sample: error: %s is in use by another run (PID %d on ", out, first.Cmd.Process.Pid)
			if code != 1 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("second run: status %d, stderr %q; want 1 and %q...", code, stderr, want)
			}
			// not "continue it with --resume": it is still going
			code, stderr = clitest.Command(t, "-resume", out)
			want = fmt.Sprintf("sample: error: cannot resume %s: it is in use by a run that is still going (PID %d on ", out, first.Cmd.Process.Pid)
			if code != 1 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("--resume of the running run: status %d, stderr %q; want 1 and %q...", code, stderr, want)
			}

			first.Stop(t, sig)
			lines := clitest.LogLines(first.Stderr.String())
			last := lines[len(lines)-1]
			if !regexp.MustCompile(`^sample: interrupted by ` + sig.Name + ` after [0-9]+ steps \(outputs so far written to ` + regexp.QuoteMeta(out) + `\)$`).MatchString(last) {
				t.Errorf("last line of stderr: %q", last)
			}
			if len(lines) < 2 || !regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d SGLD: 100/2000000 \(0%\), .* elapsed, ETA .*: kl=`).MatchString(lines[0]) {
				t.Errorf("no progress line in the log:\n%s", first.Stderr)
			}
			var sum map[string]any
			b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
			if err := json.Unmarshal(b, &sum); err != nil || sum["error"] != "interrupted by "+sig.Name {
				t.Errorf("summary.json: error %q (%v)", sum["error"], err)
			}
			if _, err := os.Stat(filepath.Join(out, ".lock")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("lock file left behind: %v", err)
			}
		})
	}
}

// TestLogWhenNotATerminal: without a terminal, a run logs its progress and,
// at the end, where its outputs are.
func TestLogWhenNotATerminal(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	args := append(append([]string{}, small[:len(small)-1]...), "-out", out) // without -quiet
	code, stderr := clitest.Command(t, args...)
	lines := clitest.LogLines(stderr)
	if code != 0 || len(lines) < 3 {
		t.Fatalf("status %d, stderr:\n%s", code, stderr)
	}
	stamp := `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d NNSGHMC: `
	for i, re := range []string{
		stamp + `10/30 \(33%\), .* elapsed, ETA .*: kl=\S+ kinetic_temperature=\S+ kinetic_temperature_max=\S+ kinetic_hot_fraction=\S+$`,
		stamp + `finished 30/30 \(100%\), .* elapsed$`,
		stamp + `computing the run's summary diagnostics$`,
		stamp + `outputs in ` + regexp.QuoteMeta(out) + `$`,
	} {
		j := []int{0, len(lines) - 3, len(lines) - 2, len(lines) - 1}[i]
		if !regexp.MustCompile(re).MatchString(lines[j]) {
			t.Errorf("line %d %q does not match %s", j+1, lines[j], re)
		}
	}
	if code, stderr := clitest.Command(t, append(small, "-out", filepath.Join(t.TempDir(), "q"))...); code != 0 || stderr != "" {
		t.Errorf("-quiet: status %d, stderr %q", code, stderr)
	}
}

// TestSummaryRecordsTheInputFiles checks that summary.json, the file a
// sweep's record keeps, names each input file with its content's hash, so
// that the sweep can tell a record whose file has changed since.
func TestSummaryRecordsTheInputFiles(t *testing.T) {
	dir := t.TempDir()
	cov := filepath.Join(dir, "cov")
	var rows strings.Builder
	for i := 0; i < 20; i++ {
		for j := 0; j < 20; j++ {
			if j > 0 {
				rows.WriteString(" ")
			}
			rows.WriteString(map[bool]string{true: "1", false: "0"}[i == j])
		}
		rows.WriteString("\n")
	}
	os.WriteFile(cov, []byte(rows.String()), 0o644)
	out := filepath.Join(dir, "run")
	if err := run(context.Background(), []string{"-task", "gaussian20", "-sampler", "sghmc", "-chains", "4", "-steps", "20", "-target-cov", cov, "-quiet", "-out", out}); err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Inputs map[string]struct{ Path, SHA256 string } `json:"inputs"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256([]byte(rows.String()))
	if in := sum.Inputs["target-cov"]; in.Path != cov || in.SHA256 != hex.EncodeToString(want[:]) {
		t.Errorf("summary.json inputs %+v, want target-cov %s with its SHA-256", sum.Inputs, cov)
	}
}
