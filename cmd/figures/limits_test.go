package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// usageError checks that err is a one-line usage error (exit status 2)
// holding each of want.
func usageError(t *testing.T, args []string, err error, want ...string) {
	t.Helper()
	var ue *cli.UsageError
	if !errors.As(err, &ue) || strings.Contains(err.Error(), "\n") {
		t.Errorf("%q: error %v, want a one-line usage error", args, err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q: error %q lacks %q", args, err, w)
		}
	}
}

// samplerFile writes a sampler file with small random networks into a new
// directory and returns its path.
func samplerFile(t *testing.T) string {
	t.Helper()
	tr := nnsghmc.RandomTrained([]int{4}, []int{4}, nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 0.5}, 2, rand.New(rand.NewPCG(1, 2)))
	var buf bytes.Buffer
	if err := tr.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(t.TempDir(), "sampler.json")
	if err := os.WriteFile(meta, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return meta
}

// TestNetsRefusesTooManyPoints is the regression test of "figures nets
// --points 100000" running out of memory after creating its output
// directory, and of --points 20000 running for minutes: --points above
// maxPoints is refused in one line with the estimate and the maximum,
// before the sampler file is read or the output directory made.
func TestNetsRefusesTooManyPoints(t *testing.T) {
	meta := samplerFile(t)
	missing := filepath.Join(t.TempDir(), "missing.json")
	maxLine := fmt.Sprintf("give --points %d or fewer", maxPoints)
	for _, tc := range []struct {
		meta   string
		points int
		want   string
	}{
		// an unreadable sampler file first: the bound comes before it
		{missing, 100000, "--points 100000 is too many: it would take 3e10 network evaluations and about 560 GB of memory; " + maxLine},
		{missing, 20000, "--points 20000 is too many: it would take 1.2e9 network evaluations and about 22 GB of memory; " + maxLine},
		{missing, 1 << 62, "network evaluations and about 1.2e39 B of memory; " + maxLine},
		{meta, maxPoints + 1, fmt.Sprintf("--points %d is too many", maxPoints+1)},
	} {
		out := filepath.Join(t.TempDir(), "D")
		args := []string{"nets", "--meta", tc.meta, "--out", out, "--points", strconv.Itoa(tc.points)}
		usageError(t, args, run(context.Background(), args), tc.want, maxLine)
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%q: %s made (%v)", args, out, err)
		}
	}
	if got := helpOf(t, "nets", "--help"); !strings.Contains(got, fmt.Sprintf("2 to %d", maxPoints)) {
		t.Errorf("the help of --points does not give its bound:\n%s", got)
	}
	// the estimate grows with the square of --points
	e1, b1 := netsCost(1000)
	e2, b2 := netsCost(10000)
	if e2 != 100*e1 || !(b2 > 99*b1) {
		t.Errorf("netsCost: 1000 points %g, %g; 10000 points %g, %g", e1, b1, e2, b2)
	}
}

// TestNetsLookup: nets hands plot.Contour the values it evaluated, at the
// grid's points, and evaluates anywhere else.
func TestNetsLookup(t *testing.T) {
	xs, ys := []float64{-1, 0, 1}, []float64{2, 3}
	z := []float64{1, 2, 3, 4, 5, 6}
	f := lookup(z, xs, ys, func(x, y float64) float64 { return -1 })
	for _, tc := range [][3]float64{{-1, 2, 1}, {1, 2, 3}, {0, 3, 5}, {1, 3, 6}, {0.5, 3, -1}, {0, 2.5, -1}} {
		if got := f(tc[0], tc[1]); got != tc[2] {
			t.Errorf("f(%g, %g) = %g, want %g", tc[0], tc[1], got, tc[2])
		}
	}
}

// writeRun writes a run directory with metric kl at the given steps (kl
// = step/10) and the given summary.json.
func writeRun(t *testing.T, steps []int, summary string) string {
	t.Helper()
	dir := t.TempDir()
	if steps != nil {
		csv := "step,seconds,kl\n"
		for _, s := range steps {
			csv += fmt.Sprintf("%d,1,%g\n", s, float64(s)/10)
		}
		if err := os.WriteFile(filepath.Join(dir, "metrics.csv"), []byte(csv), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte(summary), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTableRefusesMissingStepsAndKeys is the regression test of "figures
// table" printing an empty column ("—") for a --steps step that is not an
// evaluation step of a run, or a --summary key that a run's summary.json
// lacks: either is refused in one line naming the run, the step or key,
// and the steps or numeric keys the run has. A run that stopped (its
// summary records an error) lacks the steps after it stopped and the
// summary of its chains: those cells stay empty.
func TestTableRefusesMissingStepsAndKeys(t *testing.T) {
	var long []int
	for s := 10; s <= 1000; s += 10 {
		long = append(long, s)
	}
	a := writeRun(t, []int{10, 20, 30}, `{"ess": 10, "rhat_max": 1.01, "sampler": "sghmc", "stopped_early": false, "flags": {"steps": "30"}}`)
	b := writeRun(t, []int{10, 20}, `{"ess_min": 4}`)
	l := writeRun(t, long, `{"ess": 3}`)
	empty := writeRun(t, []int{10}, `{"task": "gaussian2d"}`)
	noMetrics := writeRun(t, nil, `{"ess": 1}`)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-steps", "15", "A=" + a},
			[]string{"run A: " + filepath.Join(a, "metrics.csv") + " has no evaluation at step 15; its steps are 10, 20, 30: give --steps some of them"}},
		{[]string{"-steps", "10,1005", "L=" + l},
			[]string{"run L: ", "has no evaluation at step 1005; its steps are 10, 20, 30, …, 990, 1000 (100 steps): give --steps"}},
		// in one run and not another: the run that lacks it
		{[]string{"-steps", "30", "A=" + a, "B=" + b}, []string{"run B: " + filepath.Join(b, "metrics.csv") + " has no evaluation at step 30; its steps are 10, 20"}},
		{[]string{"-steps", "30", "AB=" + a + "," + b}, []string{"run AB: " + filepath.Join(b, "metrics.csv") + " has no evaluation at step 30"}},
		{[]string{"-steps", "10", "N=" + noMetrics}, []string{"run N: " + noMetrics + " has no metrics.csv for --steps"}},
		{[]string{"-summary", "esss", "A=" + a},
			[]string{"run A: " + filepath.Join(a, "summary.json") + ` has no value "esss"; its numeric values are ess, rhat_max: give --summary some of them`}},
		{[]string{"-summary", "ess", "A=" + a, "B=" + b}, []string{"run B: " + filepath.Join(b, "summary.json") + ` has no value "ess"; its numeric values are ess_min`}},
		{[]string{"-summary", "ess", "AB=" + a + "," + b}, []string{"run AB: " + filepath.Join(b, "summary.json") + ` has no value "ess"`}},
		{[]string{"-summary", "sampler", "A=" + a}, []string{`has "sampler" as a string, not a number; its numeric values are ess, rhat_max`}},
		{[]string{"-summary", "stopped_early", "A=" + a}, []string{`has "stopped_early" as false, not a number`}},
		{[]string{"-summary", "flags", "A=" + a}, []string{`has "flags" as an object, not a number`}},
		{[]string{"-summary", "ess", "E=" + empty}, []string{`has no value "ess", and no numeric values: leave out --summary ess`}},
	} {
		args := append([]string{"table"}, tc.args...)
		out, err := clitestStdout(t, args)
		usageError(t, args, err, tc.want...)
		if out != "" {
			t.Errorf("%q: printed %q", args, out)
		}
	}

	// a run that stopped: empty cells after its last evaluation, and for
	// the summary of its chains; a step it passed is still checked
	stopped := writeRun(t, []int{10}, `{"error": "chain 3 diverged at step 14"}`)
	early := writeRun(t, nil, `{"error": "chain 1 diverged at step 3"}`)
	out := capture(t, func() error {
		return run(context.Background(), []string{"table", "-steps", "10,20", "-summary", "ess", "A=" + a, "S=" + stopped, "E=" + early})
	})
	for _, want := range []string{"| A | 1 | 2 | 10 |  |", "| S | 1 | — | — | chain 3 diverged at step 14 |", "| E | — | — | — | chain 1 diverged at step 3 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	args := []string{"table", "-steps", "5", "S=" + stopped}
	_, err := clitestStdout(t, args)
	usageError(t, args, err, "run S: ", "has no evaluation at step 5; its steps are 10")
}

// clitestStdout runs the command with args and returns what it printed on
// standard output and its error.
func clitestStdout(t *testing.T, args []string) (string, error) {
	t.Helper()
	var err error
	out := capture(t, func() error {
		err = run(context.Background(), args)
		return nil
	})
	return out, err
}

// TestTextsTheFontCannotDraw is the regression test of characters vanishing
// from figures: a title, label or run name with a character that the
// figures' font lacks is refused in one line naming it, before anything is
// read or written.
func TestTextsTheFontCannotDraw(t *testing.T) {
	a := fakeRun(t, 1, 0.5, `{}`)
	tr := fakeTrace(t, 2, []int{0, 1}, 3)
	fig := filepath.Join(t.TempDir(), "fig")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"curves", "-out", fig, "-title", "∇U at step 10⁴", "A=" + a}, `--title: "∇U at step 10⁴" has the character '∇' (U+2207), which the figures' font, Liberation Sans, cannot draw: write it another way`},
		{[]string{"curves", "-out", fig, "-xlabel", "θ ∈ R", "A=" + a}, `--xlabel: "θ ∈ R" has the character '∈' (U+2208)`},
		{[]string{"curves", "-out", fig, "-ylabel", "a\tb", "A=" + a}, `--ylabel: "a\tb" has the character '\t' (U+0009)`},
		{[]string{"curves", "-out", fig, "∇=" + a}, `the name of run ∇=` + a + `: "∇" has the character '∇'`},
		{[]string{"curves", "-out", fig, "A=" + filepath.Join(a, "missing"), "∇=" + a}, `the name of run ∇=`},
		{[]string{"trajectories", "-out", fig, "-title", "∇U", "A=" + tr}, `--title: "∇U" has the character '∇'`},
		{[]string{"trajectories", "-out", fig, "∇=" + tr}, `the name of run ∇=`},
	} {
		usageError(t, tc.args, run(context.Background(), tc.args), tc.want)
		checkNoFigure(t, fig)
	}
	// sub- and superscripts that the font lacks are spelled out
	if err := run(context.Background(), []string{"curves", "-out", fig, "-title", "KL at step 10⁹", "A=" + a}); err != nil {
		t.Fatal(err)
	}
	if svg, err := os.ReadFile(fig + ".svg"); err != nil || !bytes.Contains(svg, []byte(">KL at step 10^9</text>")) {
		t.Errorf("the title is not spelled out (%v):\n%s", err, svg)
	}
}

// checkNoFigure checks that neither FIG.png nor FIG.svg exists.
func checkNoFigure(t *testing.T, fig string) {
	t.Helper()
	for _, ext := range []string{".png", ".svg"} {
		if _, err := os.Stat(fig + ext); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s%s written", fig, ext)
		}
	}
}

// TestTrajectoriesLabelAxes is the regression test of the trajectories
// figure without axis labels: every panel has θ₀ on its x axis and θ₁ on
// its y axis.
func TestTrajectoriesLabelAxes(t *testing.T) {
	dir := fakeTrace(t, 2, []int{0, 1}, 3)
	fig := filepath.Join(t.TempDir(), "fig")
	if err := run(context.Background(), []string{"trajectories", "-out", fig, "A=" + dir, "B=" + dir}); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(fig + ".svg")
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"θ₀", "θ₁"} {
		if n := bytes.Count(svg, []byte(">"+label+"</text>")); n != 2 {
			t.Errorf("%d axes labelled %s, want 2", n, label)
		}
	}
}
