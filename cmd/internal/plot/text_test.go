package plot

import (
	"errors"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// svgTexts returns the strings of the text elements of base.svg in dir,
// in order.
func svgTexts(t *testing.T, dir, base string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, base+".svg"))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range regexp.MustCompile(`(?s)<text [^>]*>(.*?)</text>`).FindAllSubmatch(b, -1) {
		texts = append(texts, html.UnescapeString(string(m[1])))
	}
	return texts
}

// count returns how many of texts are s.
func count(texts []string, s string) int {
	n := 0
	for _, x := range texts {
		if x == s {
			n++
		}
	}
	return n
}

// TestFontGlyphs measures which characters the figures' font has: those
// that the commands' titles, labels and legends use, and some that it
// lacks, which gonum draws as nothing.
func TestFontGlyphs(t *testing.T) {
	for _, tc := range []struct {
		runes string
		has   bool
	}{
		// cmd/figures: "f_Q(u, p)", "1·|f_D(u, p, g = 0)|", "θ₀", "θ₁";
		// titles of experiments/*/run.sh: "ηT = 12.5", "σ = 1", "offset β";
		// plot's examples: "KL(q‖p)", "η·T"; others likely in a title
		{"azAZ09 _|·()=,.:-'θηβσ‖₀₁₂₉²³±×−…≥≤ŨαγεμρτΔΣ→∞√≈", true},
		{"∇∈⊤∝∼≲⁰⁹⁻₊ₙₜⱼ\t😀𝔼", false},
	} {
		for _, r := range tc.runes {
			if got := hasGlyph(r); got != tc.has {
				t.Errorf("hasGlyph(%q) = %v, want %v", r, got, tc.has)
			}
		}
	}
}

// TestDrawable: text is drawn as given where the font has every
// character, with sub- and superscripts that it lacks spelled out, and
// refused, naming the character, where it lacks another.
func TestDrawable(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      rune // the character named by the error; 0 for none
	}{
		{"f_Q(u, p)", "f_Q(u, p)", 0},
		{"θ₀ and θ₁₂", "θ₀ and θ₁₂", 0},
		{"ηT = 12.5, σ = 1, Ũ·p ≥ 0", "ηT = 12.5, σ = 1, Ũ·p ≥ 0", 0},
		{"two\nlines", "two\nlines", 0},
		{"x²", "x²", 0},
		{"x⁹", "x^9", 0},
		{"x⁹⁴ and x⁴⁵", "x^94 and x⁴⁵", 0}, // a run is spelled out whole, or not at all
		{"10⁻⁴", "10^-4", 0},
		{"θₙ", "θ_n", 0},
		{"θₜ₊₁", "θ_t+1", 0},
		{"x⁹ₙ", "x^9_n", 0},
		{"", "", 0},
		{"∇U", "", '∇'},
		{"θ ∈ R²", "", '∈'},
		{"a\tb", "", '\t'},
		{"x⁹ ∇", "", '∇'},
	} {
		got, err := drawable(tc.in)
		var ge *GlyphError
		switch {
		case tc.bad == 0 && (err != nil || got != tc.want):
			t.Errorf("drawable(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		case tc.bad != 0 && (!errors.As(err, &ge) || ge.Rune != tc.bad || ge.Text != tc.in):
			t.Errorf("drawable(%q): error %v, want a *GlyphError for %q", tc.in, err, tc.bad)
		}
		if err := CheckText(tc.in); (err != nil) != (tc.bad != 0) {
			t.Errorf("CheckText(%q) = %v", tc.in, err)
		}
	}
	msg := (&GlyphError{Text: "∇U", Rune: '∇'}).Error()
	if want := `"∇U" has the character '∇' (U+2207), which the figures' font, Liberation Sans, cannot draw: write it another way`; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
}

// TestUndrawableTextIsRefused is the regression test of characters that
// the font lacks vanishing from figures: every text of every figure is
// checked, and a figure with such a character is refused, naming it,
// with nothing written.
func TestUndrawableTextIsRefused(t *testing.T) {
	xy := []float64{1, 2}
	line := func(title, x, y, name string) func(string) error {
		return func(p string) error { return Lines(p, title, x, y, true, Series{Name: name, X: xy, Y: xy}) }
	}
	contour := func(title, x, y string) func(string) error {
		return func(p string) error { return Contour(p, title, x, y, gauss2, -1, 1, -1, 1, 5) }
	}
	traj := func(title, x, y, panel string) func(string) error {
		return func(p string) error {
			return Trajectories(p, title, x, y, gauss2, gaussLevels, Panel{Title: "ok", X: xy, Y: xy}, Panel{Title: panel, X: xy, Y: xy})
		}
	}
	for name, draw := range map[string]func(string) error{
		"Lines title":              line("∇U", "x", "y", "s"),
		"Lines x label":            line("t", "∇U", "y", "s"),
		"Lines y label":            line("t", "x", "∇U", "s"),
		"Lines series":             line("t", "x", "y", "∇U"),
		"Contour title":            contour("∇U", "x", "y"),
		"Contour x label":          contour("t", "∇U", "y"),
		"Contour y label":          contour("t", "x", "∇U"),
		"Trajectories title":       traj("∇U", "x", "y", "p"),
		"Trajectories x label":     traj("t", "∇U", "y", "p"),
		"Trajectories y label":     traj("t", "x", "∇U", "p"),
		"Trajectories panel title": traj("t", "x", "y", "∇U"),
	} {
		dir := t.TempDir()
		err := draw(filepath.Join(dir, "f"))
		var ge *GlyphError
		if !errors.As(err, &ge) || ge.Rune != '∇' {
			t.Errorf("%s: error %v, want a *GlyphError for '∇'", name, err)
		}
		checkDir(t, dir)
	}
}

// TestScriptsSpelledOut: a superscript that the font lacks reaches the
// figure spelled out, and the caller's series are left as they were.
func TestScriptsSpelledOut(t *testing.T) {
	dir := t.TempDir()
	series := []Series{{Name: "step 10⁹", X: []float64{1, 2}, Y: []float64{1, 2}}}
	if err := Lines(filepath.Join(dir, "f"), "rate 10⁻⁹", "θₙ", "y", false, series...); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, dir, "f")
	for _, want := range []string{"rate 10^-9", "θ_n", "step 10^9"} {
		if !slices.Contains(texts, want) {
			t.Errorf("figure lacks %q: %q", want, texts)
		}
	}
	if series[0].Name != "step 10⁹" {
		t.Errorf("Lines changed the series' name to %q", series[0].Name)
	}
}

// TestLinesLogAxisSaysSo is the regression test of train.png's log axis,
// labelled "value" with plain tick values: a log-scale axis says so in
// its label.
func TestLinesLogAxisSaysSo(t *testing.T) {
	for _, tc := range []struct {
		logY          bool
		ylabel, label string
	}{
		{true, "value", "value (log scale)"},
		{true, "KL(q‖p)", "KL(q‖p) (log scale)"},
		{true, "", "log scale"},
		{true, "KL, log scale", "KL, log scale"},
		{false, "value", "value"},
	} {
		dir := t.TempDir()
		if err := Lines(filepath.Join(dir, "f"), "meta-training", "optimiser step", tc.ylabel, tc.logY,
			Series{Name: "energy", X: []float64{1, 2, 3}, Y: []float64{0.01, 1, 100}}); err != nil {
			t.Fatal(err)
		}
		texts := svgTexts(t, dir, "f")
		if count(texts, tc.label) != 1 {
			t.Errorf("log %v, label %q: figure's texts %q, want one %q", tc.logY, tc.ylabel, texts, tc.label)
		}
		if !tc.logY && slices.ContainsFunc(texts, func(s string) bool { return regexp.MustCompile("log").MatchString(s) }) {
			t.Errorf("linear axis: figure's texts %q mention log", texts)
		}
	}
}

// TestTrajectoriesLabelAxes is the regression test of trajectories
// figures without axis labels: every panel's axes are labelled.
func TestTrajectoriesLabelAxes(t *testing.T) {
	for _, panels := range []int{1, 2, 3} {
		var ps []Panel
		for range panels {
			ps = append(ps, Panel{Title: "chain", X: []float64{0, 1}, Y: []float64{0, 1}})
		}
		dir := t.TempDir()
		if err := Trajectories(filepath.Join(dir, "f"), "paths", "θ₀", "θ₁", gauss2, gaussLevels, ps...); err != nil {
			t.Fatal(err)
		}
		texts := svgTexts(t, dir, "f")
		if count(texts, "θ₀") != panels || count(texts, "θ₁") != panels {
			t.Errorf("%d panels: figure's texts %q, want θ₀ and θ₁ on each", panels, texts)
		}
	}
}

// TestLinesZoomed checks the two panels of LinesZoomed: every series
// named in the first, the zoom's series alone in the second, whose y axis
// fits their points at or below YMax, the figure's title once over both.
func TestLinesZoomed(t *testing.T) {
	x := []float64{0, 100, 200, 300, 400, 500, 600}
	series := []Series{
		{Name: "fast", X: x, Y: []float64{40, 12, 6, 4.5, 4.2, 4.1, 4.05}},
		{Name: "slow", X: x, Y: []float64{40, 25, 15, 9, 6, 4.8, 4.4}},
		{Name: "reference", X: x, Y: []float64{40, 35, 30, 27, 25, 24, 23.5}},
	}
	dir := t.TempDir()
	if err := LinesZoomed(filepath.Join(dir, "f"), "learning curves", "all runs", "data epoch", "test NLL", false,
		Zoom{Title: "zoom on the samplers", Series: []int{0, 1}, YMax: 6}, series...); err != nil {
		t.Fatal(err)
	}
	checkFigure(t, dir, "f")
	texts := svgTexts(t, dir, "f")
	for s, n := range map[string]int{"learning curves": 1, "all runs": 1, "zoom on the samplers": 1, "fast": 2, "slow": 2, "reference": 1, "data epoch": 2, "test NLL": 2} {
		if count(texts, s) != n {
			t.Errorf("%d texts %q, want %d: %q", count(texts, s), s, n, texts)
		}
	}
	// the first panel's y axis runs to 40, the zoom's to about 6
	if count(texts, "40") != 1 {
		t.Errorf("texts %q: want one y tick label 40, the first panel's", texts)
	}
	for _, err := range []error{
		LinesZoomed(filepath.Join(dir, "g"), "", "", "", "", false, Zoom{Series: []int{3}, YMax: 6}, series...),
		LinesZoomed(filepath.Join(dir, "g"), "", "", "", "", false, Zoom{Series: []int{0}, YMax: math.NaN()}, series...),
		LinesZoomed(filepath.Join(dir, "g"), "", "", "", "", false, Zoom{Title: "\u4e00", Series: []int{0}, YMax: 6}, series...),
		LinesZoomed(filepath.Join(dir, "g"), "", "", "", "", false, Zoom{Series: []int{0}, YMax: 6}),
	} {
		if err == nil {
			t.Error("bad input: no error")
		}
	}
	checkFigure(t, dir, "f")
}
