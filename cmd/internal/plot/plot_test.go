package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/plot/palette/moreland"
)

// checkFigure checks that base.png decodes as a PNG and base.svg looks
// like an SVG document, and that dir holds nothing else.
func checkFigure(t *testing.T, dir, base string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, base+".png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s.png: %v", base, err)
	}
	if r := img.Bounds(); r.Dx() < 100 || r.Dy() < 100 {
		t.Errorf("%s.png is only %v", base, r)
	}
	s, err := os.ReadFile(filepath.Join(dir, base+".svg"))
	if err != nil {
		t.Fatal(err)
	}
	s = bytes.TrimSpace(s)
	if !bytes.HasPrefix(s, []byte("<?xml")) && !bytes.HasPrefix(s, []byte("<svg")) {
		t.Errorf("%s.svg starts with %q", base, s[:min(len(s), 20)])
	}
	if !bytes.HasSuffix(s, []byte("</svg>")) {
		t.Errorf("%s.svg does not end with </svg>", base)
	}
	checkDir(t, dir, base+".png", base+".svg")
}

// checkDir checks that dir holds exactly the named files.
func checkDir(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	sort.Strings(got)
	sort.Strings(want)
	if len(got) != len(want) {
		t.Fatalf("%s holds %q, want %q", dir, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s holds %q, want %q", dir, got, want)
		}
	}
}

func TestLines(t *testing.T) {
	steps := []float64{0, 100, 200, 300, 400, 500}
	for _, logY := range []bool{false, true} {
		dir := t.TempDir()
		err := Lines(filepath.Join(dir, "kl"), "KL divergence", "steps", "KL", logY,
			Series{Name: "NNSGHMC", X: steps, Y: []float64{5, 1, 0.3, math.NaN(), 0.05, 0.04}},
			Series{Name: "SGHMC", X: steps, Y: []float64{5, 2, 1, 0, 0.5, math.Inf(1)},
				Lower: []float64{4, 1.5, 0.8, -1, 0.4, 0.2}, Upper: []float64{6, 2.5, 1.2, 1, 0.6, 0.4}},
			Series{Name: "lone point", X: []float64{1, 2, 3}, Y: []float64{math.NaN(), 2, math.NaN()}},
		)
		if err != nil {
			t.Fatalf("logY=%v: %v", logY, err)
		}
		checkFigure(t, dir, "kl")
	}
}

func TestLinesNothingDrawable(t *testing.T) {
	for _, logY := range []bool{false, true} {
		dir := t.TempDir()
		err := Lines(filepath.Join(dir, "empty"), "", "", "", logY,
			Series{Name: "diverged", X: []float64{0, 1}, Y: []float64{math.NaN(), -1}},
			Series{Name: "none"},
		)
		if err != nil {
			t.Fatalf("logY=%v: %v", logY, err)
		}
		checkFigure(t, dir, "empty")
	}
	dir := t.TempDir()
	if err := Lines(filepath.Join(dir, "flat"), "", "", "", true, Series{X: []float64{0, 1}, Y: []float64{3, 3}}); err != nil {
		t.Fatal(err)
	}
	checkFigure(t, dir, "flat")
}

func TestLinesStripsExtension(t *testing.T) {
	dir := t.TempDir()
	if err := Lines(filepath.Join(dir, "f.png"), "", "", "", false, Series{X: []float64{0, 1}, Y: []float64{0, 1}}); err != nil {
		t.Fatal(err)
	}
	checkFigure(t, dir, "f")
}

func TestLinesErrors(t *testing.T) {
	for name, series := range map[string][]Series{
		"no series":  nil,
		"x y":        {{X: []float64{1, 2}, Y: []float64{1}}},
		"band len":   {{X: []float64{1, 2}, Y: []float64{1, 2}, Lower: []float64{0}, Upper: []float64{2}}},
		"half band":  {{X: []float64{1, 2}, Y: []float64{1, 2}, Lower: []float64{0, 1}}},
		"second bad": {{X: []float64{1}, Y: []float64{1}}, {X: []float64{1}, Y: nil}},
	} {
		dir := t.TempDir()
		if err := Lines(filepath.Join(dir, "f"), "t", "x", "y", false, series...); err == nil {
			t.Errorf("%s: no error", name)
		}
		checkDir(t, dir)
	}
}

// gauss2 is the log density, up to a constant, of a correlated 2-D
// Gaussian, and its levels at 1, 2 and 3 standard deviations.
func gauss2(x, y float64) float64 {
	const rho = 0.8
	return -(x*x - 2*rho*x*y + y*y) / (2 * (1 - rho*rho))
}

var gaussLevels = []float64{-4.5, -2, -0.5}

// walk returns a random walk of n steps from (x0, y0).
func walk(r *rand.Rand, n int, x0, y0, step float64) (xs, ys []float64) {
	x, y := x0, y0
	for range n {
		xs, ys = append(xs, x), append(ys, y)
		x += step * r.NormFloat64()
		y += step * r.NormFloat64()
	}
	return xs, ys
}

func TestTrajectories(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x1, y1 := walk(r, 300, 0, 0, 0.1)
	x2, y2 := walk(r, 300, 0, 0, 0.05)
	x2[10], y2[20] = math.NaN(), math.Inf(1)
	levels := append([]float64(nil), gaussLevels...)
	dir := t.TempDir()
	err := Trajectories(filepath.Join(dir, "traj"), "2-D Gaussian", "θ₀", "θ₁", gauss2, levels,
		Panel{Title: "NNSGHMC", X: x1, Y: y1},
		Panel{Title: "SGHMC", X: x2, Y: y2},
	)
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, dir, "traj")
	for i := range levels {
		if levels[i] != gaussLevels[i] {
			t.Fatalf("levels changed to %v", levels)
		}
	}
}

func TestTrajectoriesEdgeCases(t *testing.T) {
	nanHole := func(x, y float64) float64 {
		if x > 0 && y > 0 {
			return math.NaN()
		}
		return gauss2(x, y)
	}
	for name, c := range map[string]struct {
		f      func(x, y float64) float64
		panels []Panel
	}{
		"no contour":       {nil, []Panel{{X: []float64{0, 1, 2}, Y: []float64{0, 1, 0}}}},
		"empty path":       {gauss2, []Panel{{Title: "empty"}, {Title: "one point", X: []float64{1}, Y: []float64{1}}}},
		"far away":         {gauss2, []Panel{{X: []float64{100, 101}, Y: []float64{100, 100}}}},
		"linear":           {func(x, y float64) float64 { return x + y }, []Panel{{X: []float64{0, 1}, Y: []float64{0, 1}}}},
		"nan hole":         {nanHole, []Panel{{X: []float64{0, 1}, Y: []float64{0, 1}}}},
		"three panels":     {gauss2, []Panel{{Title: "a"}, {Title: "b"}, {Title: "c"}}},
		"diverged (NaN)":   {gauss2, []Panel{{X: []float64{math.NaN()}, Y: []float64{0}}}},
		"levels not drawn": {func(x, y float64) float64 { return 0 }, []Panel{{X: []float64{0, 1}, Y: []float64{0, 1}}}},
	} {
		dir := t.TempDir()
		if err := Trajectories(filepath.Join(dir, "f"), name, "x", "y", c.f, gaussLevels, c.panels...); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		checkFigure(t, dir, "f")
	}
}

func TestTrajectoriesErrors(t *testing.T) {
	for name, c := range map[string]struct {
		levels []float64
		panels []Panel
	}{
		"no panels": {gaussLevels, nil},
		"x y":       {gaussLevels, []Panel{{X: []float64{1, 2}, Y: []float64{1}}}},
		"no levels": {[]float64{math.NaN()}, []Panel{{X: []float64{1}, Y: []float64{1}}}},
	} {
		dir := t.TempDir()
		if err := Trajectories(filepath.Join(dir, "f"), "t", "x", "y", gauss2, c.levels, c.panels...); err == nil {
			t.Errorf("%s: no error", name)
		}
		checkDir(t, dir)
	}
}

func TestContour(t *testing.T) {
	for name, c := range map[string]struct {
		f func(x, y float64) float64
		n int
	}{
		"signed":   {func(x, y float64) float64 { return math.Sin(x) * y }, 30},
		"positive": {func(x, y float64) float64 { return math.Exp(-x*x - y*y) }, 60},
		"constant": {func(x, y float64) float64 { return 2 }, 2},
		// a one-signed range for which gonum's Palette(256) panicked in
		// gonum/plot v0.11 (see TestPalette)
		"palette rounding": {func(x, y float64) float64 {
			if x < 0 {
				return -1.952015349083347
			}
			return -0.5768191776791524
		}, 4},
		"nan": {func(x, y float64) float64 {
			if x*x+y*y < 1 {
				return math.NaN()
			}
			if x > 2 {
				return math.Inf(1)
			}
			return x * y
		}, 40},
	} {
		dir := t.TempDir()
		if err := Contour(filepath.Join(dir, "f"), name, "u", "p", c.f, -3, 3, -3, 3, c.n); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		checkFigure(t, dir, "f")
		// the heat map and the colour bar: embedded as PNG, labelled
		// so, stretched to their boxes (see save)
		s, err := os.ReadFile(filepath.Join(dir, "f.svg"))
		if err != nil {
			t.Fatal(err)
		}
		images := bytes.Count(s, []byte("<image "))
		if n := bytes.Count(s, []byte(`preserveAspectRatio="none" xlink:href="data:image/png;base64,iVBOR`)); images != 2 || n != images || bytes.Count(s, []byte("preserveAspectRatio")) != n {
			t.Errorf("%s: f.svg has %d images, %d of them PNG stretched to their boxes, want 2 and 2", name, images, n)
		}
	}
}

// TestContourReproducible draws a function with many contour paths per
// level several times and wants the same bytes each time: gonum strokes a
// level's paths in map order, which isolines must not pass on.
func TestContourReproducible(t *testing.T) {
	f := func(x, y float64) float64 { return math.Sin(3*x) * math.Sin(3*y) }
	var first map[string][]byte
	for run := range 4 {
		dir := t.TempDir()
		if err := Contour(filepath.Join(dir, "f"), "egg box", "u", "p", f, -3, 3, -3, 3, 60); err != nil {
			t.Fatal(err)
		}
		got := map[string][]byte{}
		for _, ext := range []string{".svg", ".png"} {
			b, err := os.ReadFile(filepath.Join(dir, "f"+ext))
			if err != nil {
				t.Fatal(err)
			}
			got[ext] = b
		}
		if run == 0 {
			first = got
			continue
		}
		for ext, b := range got {
			if !bytes.Equal(b, first[ext]) {
				t.Errorf("run %d: f%s differs from the first run's", run, ext)
			}
		}
	}
}

// TestPalette checks gonum's ColorMap.Palette as Contour uses it: 256
// colours from the map's minimum to its maximum. In gonum/plot v0.11
// Palette panicked ("palette: specified value > maximum") for ranges where
// rounding put its last step just past the maximum, as for the first
// range here; v0.17 takes the maximum itself as the last step.
func TestPalette(t *testing.T) {
	ranges := [][2]float64{{-1.952015349083347, -0.5768191776791524}, {-2.747417927028856, 0.5252229127152306}, {0, 1}, {-1e-300, 1e-300}, {1e300, 1.0000001e300}}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		lo := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(13)-6))
		hi := lo + rng.ExpFloat64()*math.Pow(10, float64(rng.IntN(13)-6))
		if rng.IntN(3) == 0 { // a symmetric range, as for a two-signed f
			m := math.Max(-lo, hi)
			lo, hi = -m, m
		}
		if lo < hi {
			ranges = append(ranges, [2]float64{lo, hi})
		}
	}
	for _, r := range ranges {
		cmap := moreland.SmoothBlueRed()
		cmap.SetMin(r[0])
		cmap.SetMax(r[1])
		var cs []color.Color
		func() {
			defer func() {
				if e := recover(); e != nil {
					t.Fatalf("%v: Palette(256) panics: %v", r, e)
				}
			}()
			cs = cmap.Palette(256).Colors()
		}()
		if len(cs) != 256 {
			t.Fatalf("%v: %d colours, want 256", r, len(cs))
		}
		for i, v := range map[int]float64{0: r[0], 255: r[1]} {
			want, err := cmap.At(v)
			if err != nil {
				t.Fatal(err)
			}
			if cs[i] != want {
				t.Errorf("%v: colour %d is %v, want the map's at %g, %v", r, i, cs[i], v, want)
			}
		}
	}
}

func TestContourErrors(t *testing.T) {
	f := func(x, y float64) float64 { return x }
	for name, c := range map[string]struct {
		f                      func(x, y float64) float64
		xmin, xmax, ymin, ymax float64
		n                      int
	}{
		"n < 2":   {f, 0, 1, 0, 1, 1},
		"nil f":   {nil, 0, 1, 0, 1, 10},
		"x range": {f, 1, 1, 0, 1, 10},
		"y range": {f, 0, 1, 0, math.Inf(1), 10},
		"all nan": {func(x, y float64) float64 { return math.NaN() }, 0, 1, 0, 1, 10},
	} {
		dir := t.TempDir()
		if err := Contour(filepath.Join(dir, "f"), "t", "x", "y", c.f, c.xmin, c.xmax, c.ymin, c.ymax, c.n); err == nil {
			t.Errorf("%s: no error", name)
		}
		checkDir(t, dir)
	}
}

func TestLogTicks(t *testing.T) {
	for _, r := range [][2]float64{{1e-3, 10}, {0.2, 0.8}, {0.31, 0.39}, {1e-12, 1e12}, {5, 5.0001}} {
		labels := 0
		for _, tk := range (logTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" && tk.Value >= r[0] && tk.Value <= r[1] {
				labels++
			}
		}
		if labels < 2 || labels > 12 {
			t.Errorf("range %v: %d labels", r, labels)
		}
	}
	// the ends of an axis narrower than two decades are labelled, so that
	// curves lying there can be read off
	for _, tc := range []struct {
		min, max float64
		want     string
	}{
		{0.0207, 0.45, "0.03 0.05 0.1 0.2 0.4"},
		{0.2, 0.8, "0.2 0.5 0.8"},
		{0.011, 0.09, "0.02 0.05 0.09"},
	} {
		var got []string
		for _, tk := range (logTicks{}).Ticks(tc.min, tc.max) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("range [%g, %g]: labels %q, want %q", tc.min, tc.max, s, tc.want)
		}
	}
}

func TestTickLabel(t *testing.T) {
	for v, want := range map[float64]string{1e-5: "1e-5", 0.001: "0.001", 1e6: "1e6", 100: "100", 2e-7: "2e-7"} {
		if got := tickLabel(v); got != want {
			t.Errorf("tickLabel(%g) = %q, want %q", v, got, want)
		}
	}
}

// TestWriteExamples writes one figure of each kind into the directory
// named by $PLOT_EXAMPLES_DIR, for a person to look at; it is skipped
// when that is not set.
func TestWriteExamples(t *testing.T) {
	dir := os.Getenv("PLOT_EXAMPLES_DIR")
	if dir == "" {
		t.Skip("PLOT_EXAMPLES_DIR not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))

	// KL divergence against steps, log scale.
	var steps, kl1, kl2 []float64
	for s := 0; s <= 20000; s += 250 {
		steps = append(steps, float64(s))
		kl1 = append(kl1, 3*math.Exp(-float64(s)/1500)+0.01*math.Exp(0.2*r.NormFloat64()))
		kl2 = append(kl2, 3*math.Exp(-float64(s)/5000)+0.03*math.Exp(0.2*r.NormFloat64()))
	}
	if err := Lines(filepath.Join(dir, "kl"), "KL divergence on a 2-D Gaussian", "sampler steps", "KL(q‖p)", true,
		Series{Name: "NNSGHMC", X: steps, Y: kl1}, Series{Name: "SGHMC", X: steps, Y: kl2}); err != nil {
		t.Fatal(err)
	}

	// Test error against epochs with ±1 s.e. bands.
	var epochs []float64
	for e := 1; e <= 100; e++ {
		epochs = append(epochs, float64(e))
	}
	var ss []Series
	for i, name := range []string{"NNSGHMC", "SGHMC", "SGLD", "PSGLD"} {
		s := Series{Name: name, X: epochs}
		for _, e := range epochs {
			m := 0.017 + 0.002*float64(i) + 0.08*math.Exp(-e/(8+4*float64(i)))
			se := 0.0008 + 0.002*math.Exp(-e/20)
			s.Y = append(s.Y, m+0.0004*r.NormFloat64())
			s.Lower = append(s.Lower, m-se)
			s.Upper = append(s.Upper, m+se)
		}
		ss = append(ss, s)
	}
	if err := Lines(filepath.Join(dir, "test-error"), "MNIST test error", "epoch", "test error", false, ss...); err != nil {
		t.Fatal(err)
	}
	if err := LinesZoomed(filepath.Join(dir, "test-error-zoomed"), "MNIST test error", "all samplers", "epoch", "test error", false,
		Zoom{Title: "NNSGHMC and SGHMC, zoomed", Series: []int{0, 1}, YMax: 0.03}, ss...); err != nil {
		t.Fatal(err)
	}

	// Two chains on a correlated 2-D Gaussian, SGHMC-like dynamics.
	chain := func(eta, alpha float64, n int) (xs, ys []float64) {
		const rho = 0.8
		x, y, px, py := 2.5, -2.0, 0.0, 0.0
		for range n {
			xs, ys = append(xs, x), append(ys, y)
			gx := (x - rho*y) / (1 - rho*rho)
			gy := (y - rho*x) / (1 - rho*rho)
			px = (1-alpha)*px - eta*gx + math.Sqrt(2*alpha*eta)*r.NormFloat64()
			py = (1-alpha)*py - eta*gy + math.Sqrt(2*alpha*eta)*r.NormFloat64()
			x, y = x+px, y+py
		}
		return xs, ys
	}
	x1, y1 := chain(0.01, 0.1, 400)
	x2, y2 := chain(0.01, 0.5, 400)
	if err := Trajectories(filepath.Join(dir, "trajectories"), "One chain on a 2-D Gaussian, same time η·T", "θ₀", "θ₁", gauss2, gaussLevels,
		Panel{Title: "NNSGHMC", X: x1, Y: y1}, Panel{Title: "SGHMC", X: x2, Y: y2}); err != nil {
		t.Fatal(err)
	}

	// A learned-network-like function of two inputs, undefined in a corner.
	fQ := func(u, p float64) float64 {
		if u > 2.5 && p > 2.5 {
			return math.NaN()
		}
		return math.Tanh(0.8*u-0.3*p) + 0.5*math.Tanh(0.5*u*p) - 0.2
	}
	if err := Contour(filepath.Join(dir, "contour"), "f_Q(u, p)", "energy U", "momentum p", fQ, -4, 4, -4, 4, 80); err != nil {
		t.Fatal(err)
	}
}

func TestTicksExtremeRanges(t *testing.T) {
	for _, r := range [][2]float64{{1e20, 1e20 + 1e5}, {-1e-300, 1e-300}, {0, 1e300}, {-3, 3}} {
		if n := len(niceLevels(r[0], r[1])); n == 0 {
			t.Errorf("niceLevels%v: none", r)
		}
		labels := 0
		for _, tk := range (linTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" {
				labels++
			}
		}
		if labels < 2 {
			t.Errorf("linTicks%v: %d labels", r, labels)
		}
	}
}

func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	errs := make(chan error, 3)
	go func() {
		errs <- Lines(filepath.Join(dir, "a"), "a", "x", "y", true, Series{Name: "s", X: []float64{1, 2}, Y: []float64{1, 2}})
	}()
	go func() {
		errs <- Trajectories(filepath.Join(dir, "b"), "b", "x", "y", gauss2, gaussLevels, Panel{X: []float64{0, 1}, Y: []float64{0, 1}})
	}()
	go func() {
		errs <- Contour(filepath.Join(dir, "c"), "c", "x", "y", gauss2, -1, 1, -1, 1, 10)
	}()
	for range 3 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	checkDir(t, dir, "a.png", "a.svg", "b.png", "b.svg", "c.png", "c.svg")
}

// TestSeriesStyles checks that the first seven series differ in colour and
// the first 42 in colour or dash, so that no two lines of a figure look
// alike.
func TestSeriesStyles(t *testing.T) {
	colours := map[color.NRGBA]int{}
	styles := map[string]int{}
	for i := range 42 {
		c := seriesColor(i)
		if j, ok := colours[c]; ok && i < 7 {
			t.Errorf("series %d has series %d's colour %v", i, j, c)
		}
		colours[c] = i
		key := fmt.Sprint(c, seriesDash(i))
		if j, ok := styles[key]; ok {
			t.Errorf("series %d has series %d's colour and dash %s", i, j, key)
		}
		styles[key] = i
	}
}
