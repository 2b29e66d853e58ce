package main

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/plot"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/samplers/trace"
)

// fakeRun writes a run directory with a metric at steps 10 and 20.
func fakeRun(t *testing.T, kl10, kl20 float64, summary string) string {
	t.Helper()
	dir := t.TempDir()
	csv := "step,seconds,kl\n10,1," + ftoa(kl10) + "\n20,2," + ftoa(kl20) + "\n"
	os.WriteFile(filepath.Join(dir, "metrics.csv"), []byte(csv), 0o644)
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte(summary), 0o644)
	return dir
}

// fakeTrace writes a run directory with a trace.bin of 2 chains of θ with
// dim coordinates, coords traced, and draws draws at steps 1, 2, …: chain k
// at step s has θ_i = 100·k + 10·s + i.
func fakeTrace(t *testing.T, dim int, coords []int, draws int) string {
	t.Helper()
	dir := t.TempDir()
	w, err := trace.Create(filepath.Join(dir, "trace.bin"), trace.Header{Chains: 2, Dim: dim, Coords: coords})
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, 2*dim)
	for s := 1; s <= draws; s++ {
		for i := 0; i < dim; i++ {
			for k := 0; k < 2; k++ {
				theta[i*2+k] = float64(100*k + 10*s + i) // coordinate-major, as samplers.State
			}
		}
		if err := w.Write(s, theta); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTrajectoriesDrawChain0: trajectories draws θ_0, θ_1 of chain 0 at
// every draw of a run's trace.bin.
func TestTrajectoriesDrawChain0(t *testing.T) {
	dir := fakeTrace(t, 2, []int{0, 1}, 3)
	p, err := chainPath(filepath.Join(dir, "trace.bin"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{10, 20, 30}; !reflect.DeepEqual(p.X, want) {
		t.Errorf("θ_0 %v, want %v", p.X, want)
	}
	if want := []float64{11, 21, 31}; !reflect.DeepEqual(p.Y, want) {
		t.Errorf("θ_1 %v, want %v", p.Y, want)
	}
	fig := filepath.Join(t.TempDir(), "fig")
	if err := run(context.Background(), []string{"trajectories", "-out", fig, "A=" + dir, "B=" + dir}); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".png", ".svg"} {
		if info, err := os.Stat(fig + ext); err != nil || info.Size() == 0 {
			t.Errorf("%s%s: %v", fig, ext, err)
		}
	}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// capture runs f with standard output redirected and returns what it printed.
func capture(t *testing.T, f func() error) string {
	t.Helper()
	out, err := clitest.Stdout(t, f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTableAveragesRunsAndReportsFailures(t *testing.T) {
	a := fakeRun(t, 1, 0.5, `{"ess": 10}`)
	b := fakeRun(t, 3, 0.7, `{"ess": 20}`)
	c := fakeRun(t, 2, 0.1, `{"error": "chain 3 diverged at step 4"}`)
	out := capture(t, func() error {
		return run(context.Background(), []string{"table", "-metric", "kl", "-steps", "10,20", "-summary", "ess", "two=" + a + "," + b, "bad=" + c})
	})
	for _, want := range []string{"| run | kl at 10 | kl at 20 | ess | stopped |\n| --- | --- | --- | --- | --- |\n", "| two | 2 ± 1 | 0.6 ± 0.1 | 15 ± 5 |  |", "| bad | 2 | 0.1 | — | chain 3 diverged at step 4 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestTableShowsRankDiagnostics: the rank-normalised diagnostics that
// cmd/sample's Gaussian summaries hold beside the older ones tabulate like
// any other summary value.
func TestTableShowsRankDiagnostics(t *testing.T) {
	a := fakeRun(t, 1, 0.5, `{"rhat_max": 1.001, "rhat_rank_max": 1.062, "ess_bulk_min": 1338.4, "ess_tail_min": 97.2}`)
	out := capture(t, func() error {
		return run(context.Background(), []string{"table", "-summary", "rhat_max,rhat_rank_max,ess_bulk_min,ess_tail_min", "A=" + a})
	})
	for _, want := range []string{"| run | rhat_max | rhat_rank_max | ess_bulk_min | ess_tail_min |", "| A | 1.001 | 1.062 | 1338 | 97.2 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestCurvesWritesFigures(t *testing.T) {
	a := fakeRun(t, 1, 0.5, `{}`)
	out := filepath.Join(t.TempDir(), "kl")
	if err := run(context.Background(), []string{"curves", "-metric", "kl", "-out", out, "-steps-per-unit", "10", "A=" + a}); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".png", ".svg"} {
		if st, err := os.Stat(out + ext); err != nil || st.Size() == 0 {
			t.Errorf("missing %s: %v", ext, err)
		}
	}
}

func TestCurvesLeaveOutRunsStoppedBeforeScoring(t *testing.T) {
	a := fakeRun(t, 1, 0.5, `{}`)
	stopped := t.TempDir()
	os.WriteFile(filepath.Join(stopped, "summary.json"), []byte(`{"error": "chain 1 diverged at step 3"}`), 0o644)
	going := t.TempDir()
	os.WriteFile(filepath.Join(going, "summary.json"), []byte(`{}`), 0o644)
	out := filepath.Join(t.TempDir(), "kl")
	if err := run(context.Background(), []string{"curves", "-metric", "kl", "-out", out, "A=" + a, "B=" + stopped}); err != nil {
		t.Fatalf("a run that stopped before scoring should be left out: %v", err)
	}
	if _, err := os.Stat(out + ".png"); err != nil {
		t.Error(err)
	}
	err := run(context.Background(), []string{"curves", "-metric", "kl", "-out", out, "A=" + a, "C=" + going})
	if err == nil || !strings.Contains(err.Error(), "no metrics.csv") {
		t.Errorf("a run with neither metrics nor error: got %v, want an error naming the missing metrics.csv", err)
	}
}

func TestBadInput(t *testing.T) {
	a := fakeRun(t, 1, 0.5, `{}`)
	for _, args := range [][]string{
		{},
		{"pie"},
		{"curves", "-metric", "kl", "A=" + a},
		{"curves", "-metric", "nope", "-out", filepath.Join(t.TempDir(), "x"), "A=" + a},
		{"table", "A"},
		{"table", "A=" + filepath.Join(a, "missing")},
	} {
		if err := run(context.Background(), args); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}

// TestNetsWriteThePlottedValues: nets writes, beside each contour plot, the
// network's value at every grid point, ends of the ranges included, with
// the momentum scale applied as the sampler applies it.
func TestNetsWriteThePlottedValues(t *testing.T) {
	cfg := nnsghmc.RandomTrained([]int{4}, []int{4}, nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 0.5}, 2, rand.New(rand.NewPCG(1, 2)))
	dir := t.TempDir()
	meta := filepath.Join(dir, "sampler.json")
	var buf bytes.Buffer
	if err := cfg.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(meta, buf.Bytes(), 0o644)
	out := filepath.Join(dir, "nets")
	if err := run(context.Background(), []string{"nets", "--meta", meta, "--out", out, "--points", "3", "--energy=-2,2", "--momentum=-4,0"}); err != nil {
		t.Fatal(err)
	}
	cols, err := readCSV(filepath.Join(out, "f_q.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"-2", "0", "2", "-2", "0", "2", "-2", "0", "2"}; !reflect.DeepEqual(cols["u"], want) {
		t.Errorf("u column %v, want %v", cols["u"], want)
	}
	if want := []string{"-4", "-4", "-4", "-2", "-2", "-2", "0", "0", "0"}; !reflect.DeepEqual(cols["p"], want) {
		t.Errorf("p column %v, want %v", cols["p"], want)
	}
	for i := range cols["f_q"] {
		u, _ := strconv.ParseFloat(cols["u"][i], 64)
		p, _ := strconv.ParseFloat(cols["p"][i], 64)
		want := make([]float64, 1)
		cfg.Q.Eval([]float64{u, 0.5 * p}, want)
		if got, _ := strconv.ParseFloat(cols["f_q"][i], 64); got != want[0] {
			t.Errorf("f_Q(%v, %v): file %v, network %v", u, p, got, want[0])
		}
	}
	// s_D·|f_D(u, m·p, g)| at the middle of the energy range, u = 0
	cols, err = readCSV(filepath.Join(out, "f_d_momentum_gradient.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range cols["f_d_momentum_gradient"] {
		p, _ := strconv.ParseFloat(cols["p"][i], 64)
		g, _ := strconv.ParseFloat(cols["g"][i], 64)
		f := make([]float64, 1)
		cfg.D.Eval([]float64{0, 0.5 * p, g}, f)
		if got, _ := strconv.ParseFloat(cols["f_d_momentum_gradient"][i], 64); got != 2*math.Abs(f[0]) {
			t.Errorf("s_D·|f_D(0, %v, %v)|: file %v, network %v", p, g, got, 2*math.Abs(f[0]))
		}
	}
	if len(cols["g"]) != 9 {
		t.Errorf("%d rows in f_d_momentum_gradient.csv, want 9", len(cols["g"]))
	}
	for _, name := range []string{"f_q", "f_d_energy_momentum", "f_d_momentum_gradient"} {
		for _, ext := range []string{".png", ".svg", ".csv"} {
			if info, err := os.Stat(filepath.Join(out, name+ext)); err != nil || info.Size() == 0 {
				t.Errorf("%s%s: %v", name, ext, err)
			}
		}
	}
	if err := run(context.Background(), []string{"nets", "--meta", meta, "--out", out, "--points", "1"}); err == nil {
		t.Error("--points 1 accepted")
	}
}

// --ymax leaves out the points above it, so that the y axis fits the
// others: a zoom on the lower curves, the higher keeping their legend entry.
func TestCurvesZoom(t *testing.T) {
	low, high := fakeRun(t, 1, 0.5, `{}`), fakeRun(t, 40, 30, `{}`)
	ticks := func(extra ...string) string {
		t.Helper()
		out := filepath.Join(t.TempDir(), "kl")
		args := append([]string{"curves", "-metric", "kl", "-out", out, "--log=false"}, extra...)
		if err := run(context.Background(), append(args, "Low="+low, "High="+high)); err != nil {
			t.Fatal(err)
		}
		svg, err := os.ReadFile(out + ".svg")
		if err != nil {
			t.Fatal(err)
		}
		return string(svg)
	}
	all, zoom := ticks(), ticks("--ymax", "5")
	for _, c := range []struct {
		svg, text string
		want      bool
	}{{all, ">30<", true}, {zoom, ">30<", false}, {zoom, ">0.6<", true}, {zoom, ">High<", true}} {
		if got := strings.Contains(c.svg, c.text); got != c.want {
			t.Errorf("%q in the figure: %v, want %v", c.text, got, c.want)
		}
	}
}

// TestCurvesZoomPanel: --zoom draws a second panel of the named runs
// alone (the figure then names Low twice and High once), a name without a
// run is passed over, and one naming no run at all draws the curves alone.
func TestCurvesZoomPanel(t *testing.T) {
	low, high := fakeRun(t, 1, 0.5, `{}`), fakeRun(t, 40, 30, `{}`)
	for _, c := range []struct {
		zoom          string
		low, high     int
		zoomed, named bool
	}{
		{"Low", 2, 1, true, true},
		{"Low,Missing", 2, 1, true, true},
		{"Missing", 1, 1, false, false},
	} {
		out := filepath.Join(t.TempDir(), "kl")
		if err := run(context.Background(), []string{"curves", "-metric", "kl", "-out", out, "--log=false", "--zoom", c.zoom, "Low=" + low, "High=" + high}); err != nil {
			t.Fatalf("--zoom %s: %v", c.zoom, err)
		}
		b, err := os.ReadFile(out + ".svg")
		if err != nil {
			t.Fatal(err)
		}
		svg := string(b)
		if n, m := strings.Count(svg, ">Low<"), strings.Count(svg, ">High<"); n != c.low || m != c.high {
			t.Errorf("--zoom %s: Low named %d times, High %d, want %d and %d", c.zoom, n, m, c.low, c.high)
		}
		if got := strings.Contains(svg, ">zoom on Low<"); got != c.named {
			t.Errorf("--zoom %s: the zoom's title there: %v, want %v", c.zoom, got, c.named)
		}
		if got := strings.Contains(svg, ">all runs<"); got != c.zoomed {
			t.Errorf("--zoom %s: a first panel titled: %v, want %v", c.zoom, got, c.zoomed)
		}
	}
}

// TestZoomOn checks the zoom's y range: --zoom-ymax where given, else the
// zoomed runs' lowest point plus a tenth of all the points' range; and
// that a run with no point in that range is left out and named as above.
func TestZoomOn(t *testing.T) {
	series := []plot.Series{
		{Name: "a", Y: []float64{10, 4, 2, math.NaN()}},
		{Name: "b", Y: []float64{12, 6, 3}},
		{Name: "c", Y: []float64{22, math.Inf(1), 20}},
	}
	for _, c := range []struct {
		names []string
		ymax  float64
		want  plot.Zoom
	}{
		{[]string{"a", "b"}, math.NaN(), plot.Zoom{Title: "zoom on a, b", Series: []int{0, 1}, YMax: 2 + 2}},
		{[]string{"b"}, math.NaN(), plot.Zoom{Title: "zoom on b", Series: []int{1}, YMax: 3 + 2}},
		{[]string{"c", "x"}, 21, plot.Zoom{Title: "zoom on c", Series: []int{2}, YMax: 21}},
		{[]string{"a", "c"}, math.NaN(), plot.Zoom{Title: "zoom on a (c above 4)", Series: []int{0}, YMax: 2 + 2}},
		{[]string{"b", "c"}, 5, plot.Zoom{Title: "zoom on b (c above 5)", Series: []int{1}, YMax: 5}},
	} {
		got, err := zoomOn(series, c.names, c.ymax)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v, ymax %g: %+v %v, want %+v", c.names, c.ymax, got, err, c.want)
		}
	}
	if _, err := zoomOn([]plot.Series{{Name: "a", Y: []float64{math.NaN()}}}, []string{"a"}, math.NaN()); err == nil {
		t.Error("a zoom on no finite value: no error")
	}
	if z, err := zoomOn(series, []string{"c"}, 5); err == nil {
		t.Errorf("a zoom whose every run lies above --zoom-ymax: %+v, no error", z)
	}
}
