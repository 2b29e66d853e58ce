package plot

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// grid holds a function's values on a rectangular grid; it implements
// plotter.GridXYZ. Non-finite values are stored as NaN.
type grid struct {
	xs, ys []float64
	z      []float64 // z[r*len(xs)+c]

	finite   int     // how many values are finite
	min, max float64 // range of the finite values
}

// newGrid evaluates f on nx×ny evenly spaced points spanning
// [xmin, xmax]×[ymin, ymax].
func newGrid(f func(x, y float64) float64, xmin, xmax, ymin, ymax float64, nx, ny int) *grid {
	g := &grid{
		xs:  Linspace(xmin, xmax, nx),
		ys:  Linspace(ymin, ymax, ny),
		z:   make([]float64, nx*ny),
		min: math.Inf(1),
		max: math.Inf(-1),
	}
	for r, y := range g.ys {
		for c, x := range g.xs {
			v := f(x, y)
			if !finite(v) {
				v = math.NaN()
			} else {
				g.finite++
				g.min = math.Min(g.min, v)
				g.max = math.Max(g.max, v)
			}
			g.z[r*nx+c] = v
		}
	}
	return g
}

// Dims implements plotter.GridXYZ.
func (g *grid) Dims() (c, r int) { return len(g.xs), len(g.ys) }

// Z implements plotter.GridXYZ.
func (g *grid) Z(c, r int) float64 { return g.z[r*len(g.xs)+c] }

// X implements plotter.GridXYZ.
func (g *grid) X(c int) float64 { return g.xs[c] }

// Y implements plotter.GridXYZ.
func (g *grid) Y(r int) float64 { return g.ys[r] }

// crosses reports whether some level lies strictly inside the grid's range
// of finite values, that is, whether some contour line is drawn.
func (g *grid) crosses(levels []float64) bool {
	for _, l := range levels {
		if g.min < l && l < g.max {
			return true
		}
	}
	return false
}

// crossesBoundary reports whether a contour line at one of levels crosses
// the grid's outer boundary, that is, whether it runs out of the grid.
func (g *grid) crossesBoundary(levels []float64) bool {
	nx, ny := g.Dims()
	var ring []float64
	for c := 0; c < nx; c++ {
		ring = append(ring, g.Z(c, 0))
	}
	for r := 1; r < ny; r++ {
		ring = append(ring, g.Z(nx-1, r))
	}
	for c := nx - 2; c >= 0; c-- {
		ring = append(ring, g.Z(c, ny-1))
	}
	for r := ny - 2; r >= 0; r-- {
		ring = append(ring, g.Z(0, r))
	}
	for i := 1; i < len(ring); i++ {
		a, b := ring[i-1], ring[i]
		if math.IsNaN(a) || math.IsNaN(b) {
			continue
		}
		for _, l := range levels {
			if (a < l) != (b < l) {
				return true
			}
		}
	}
	return false
}

// isolines is a plot.Plotter that draws contour lines of a grid at given
// levels in one line style. On a grid without NaN it uses
// plotter.Contour, which joins segments into paths; gonum's contouring
// does not handle NaN, so on a grid with NaN it draws marching-squares
// segments and leaves out every cell with a NaN corner.
type isolines struct {
	g      *grid
	levels []float64
	style  draw.LineStyle
}

// Plot implements plot.Plotter.
func (l *isolines) Plot(c draw.Canvas, p *gplot.Plot) {
	var levels []float64
	for _, v := range l.levels {
		if finite(v) {
			levels = append(levels, v)
		}
	}
	if len(levels) == 0 || l.g.finite == 0 {
		return
	}
	nx, ny := l.g.Dims()
	if l.g.finite == nx*ny {
		ct := &plotter.Contour{
			GridXYZ:    l.g,
			Levels:     levels, // sorted in place by gonum; a copy
			LineStyles: []draw.LineStyle{l.style},
			Min:        math.Inf(-1),
			Max:        math.Inf(1),
		}
		// gonum strokes a level's paths in map order, so the same plot
		// would come out in a different byte order each time: collect
		// the strokes and draw them sorted.
		rec := &strokeRecorder{Canvas: c.Canvas}
		ct.Plot(draw.Canvas{Canvas: rec, Rectangle: c.Rectangle}, p)
		rec.flush()
		return
	}

	trX, trY := p.Transforms(&c)
	c.SetLineStyle(l.style)
	var pts [4]vg.Point
	for i := 0; i < nx-1; i++ {
		for j := 0; j < ny-1; j++ {
			// Corners counter-clockwise from the bottom left.
			x := [4]float64{l.g.X(i), l.g.X(i + 1), l.g.X(i + 1), l.g.X(i)}
			y := [4]float64{l.g.Y(j), l.g.Y(j), l.g.Y(j + 1), l.g.Y(j + 1)}
			z := [4]float64{l.g.Z(i, j), l.g.Z(i+1, j), l.g.Z(i+1, j+1), l.g.Z(i, j+1)}
			if math.IsNaN(z[0] + z[1] + z[2] + z[3]) {
				continue
			}
			for _, lv := range levels {
				// Crossing on edge k, from corner k to corner k+1.
				var on [4]bool
				n := 0
				for k := 0; k < 4; k++ {
					a, b := z[k], z[(k+1)%4]
					if (a < lv) == (b < lv) {
						continue
					}
					t := (lv - a) / (b - a)
					pts[k] = vg.Point{
						X: trX(x[k] + t*(x[(k+1)%4]-x[k])),
						Y: trY(y[k] + t*(y[(k+1)%4]-y[k])),
					}
					on[k] = true
					n++
				}
				switch n {
				case 2:
					var ends []vg.Point
					for k := 0; k < 4; k++ {
						if on[k] {
							ends = append(ends, pts[k])
						}
					}
					c.StrokeLines(l.style, ends)
				case 4:
					// A saddle: the centre decides which corners the
					// lines cut off. Corner k lies between edges k-1 and k.
					centre := (z[0] + z[1] + z[2] + z[3]) / 4
					if (centre < lv) == (z[0] < lv) {
						c.StrokeLines(l.style, []vg.Point{pts[0], pts[1]}) // corner 1
						c.StrokeLines(l.style, []vg.Point{pts[2], pts[3]}) // corner 3
					} else {
						c.StrokeLines(l.style, []vg.Point{pts[3], pts[0]}) // corner 0
						c.StrokeLines(l.style, []vg.Point{pts[1], pts[2]}) // corner 2
					}
				}
			}
		}
	}
}

// niceLevels returns about eight contour levels at round numbers strictly
// inside (min, max).
func niceLevels(min, max float64) []float64 {
	if !(min < max) {
		return nil
	}
	var levels []float64
	step, _ := niceStep((max - min) / 8)
	first := math.Ceil(min / step)
	for i := 0; i <= 20; i++ { // counted: k++ stalls for huge k
		if v := clean((first+float64(i))*step, step); v > min && v < max {
			levels = append(levels, v)
		}
	}
	return levels
}

// niceStep returns the smallest of 1, 2, 2.5 and 5 times a power of ten
// that is at least raw (> 0), and the number of parts a minor tick
// divides it into.
func niceStep(raw float64) (step float64, parts int) {
	mag := math.Pow10(int(math.Floor(math.Log10(raw))))
	for _, m := range []struct {
		f     float64
		parts int
	}{{1, 5}, {2, 4}, {2.5, 5}, {5, 5}} {
		if m.f*mag >= raw*(1-1e-9) {
			return m.f * mag, m.parts
		}
	}
	return 10 * mag, 5
}

// clean rounds v, a multiple of step, to three more significant digits
// than step needs at v's magnitude, removing the noise of k*step (so
// 3*0.1 is 0.3, not 0.30000000000000004), and turns -0 into 0.
func clean(v, step float64) float64 {
	switch {
	case v == 0:
		return 0
	case !finite(v) || !(step > 0):
		return v
	}
	digits := int(math.Floor(math.Log10(math.Abs(v)))) - int(math.Floor(math.Log10(step))) + 3
	digits = min(max(digits, 1), 17)
	c, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', digits, 64), 64)
	if err != nil {
		return v
	}
	return c
}

// linTicks is a plot.Ticker for a linear axis: four to seven labelled ticks
// at round numbers, with four or five unlabelled ones between each pair,
// labelled without gonum's trailing zeros ("250", not "250.00").
type linTicks struct{}

// Ticks implements plot.Ticker.
func (linTicks) Ticks(min, max float64) []gplot.Tick {
	if !(min < max) || !finite(min) || !finite(max) {
		return (gplot.DefaultTicks{}).Ticks(min, max)
	}
	step, parts := niceStep((max - min) / 6)
	minor := step / float64(parts)
	var ticks []gplot.Tick
	first := math.Ceil(min / minor)
	for i := 0; i <= 10*parts; i++ {
		k := first + float64(i)
		v := clean(k*minor, minor)
		if v > max {
			break
		}
		if v < min {
			continue
		}
		t := gplot.Tick{Value: v}
		if math.Mod(k, float64(parts)) == 0 {
			t.Label = tickLabel(v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// logTicks is a plot.Ticker for a log-scale axis. Unlike gonum's
// LogTicks it labels ranges narrower than a decade, and it thins the
// labels of ranges spanning many decades.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(min, max float64) []gplot.Tick {
	if !(min > 0) || !(max > min) || math.IsInf(max, 0) {
		return nil
	}
	lo := int(math.Floor(math.Log10(min))) - 1
	hi := int(math.Ceil(math.Log10(max))) + 1
	in := func(v float64) bool { return v >= min*(1-1e-9) && v <= max*(1+1e-9) }

	decades := 0
	for e := lo; e <= hi; e++ {
		if in(math.Pow10(e)) {
			decades++
		}
	}
	var ticks []gplot.Tick
	if decades >= 3 {
		step := 1
		for decades/step > 6 {
			step++
		}
		for e := lo; e <= hi; e++ {
			base := clean(math.Pow10(e), math.Pow10(e))
			if in(base) {
				t := gplot.Tick{Value: base}
				if ((e%step)+step)%step == 0 {
					t.Label = tickLabel(base)
				}
				ticks = append(ticks, t)
			}
			if step == 1 {
				for m := 2; m <= 9; m++ {
					if v := clean(float64(m)*base, base); in(v) {
						ticks = append(ticks, gplot.Tick{Value: v})
					}
				}
			}
		}
		return ticks
	}

	// At most two powers of ten in range: label mantissas 1, 2 and 5, or all
	// mantissas when that gives too few labels.
	for _, labelled := range []func(m int) bool{
		func(m int) bool { return m == 1 || m == 2 || m == 5 },
		func(int) bool { return true },
	} {
		ticks = ticks[:0]
		labels := 0
		for e := lo; e <= hi; e++ {
			for m := 1; m <= 9; m++ {
				v := clean(float64(m)*math.Pow10(e), math.Pow10(e))
				if !in(v) {
					continue
				}
				t := gplot.Tick{Value: v}
				if labelled(m) {
					t.Label = tickLabel(v)
					labels++
				}
				ticks = append(ticks, t)
			}
		}
		if labels >= 2 {
			labelEnds(ticks)
			return ticks
		}
	}
	return (gplot.DefaultTicks{}).Ticks(min, max)
}

// labelEnds labels the lowest and the highest of the ticks (in increasing
// order) where the nearest label is 1.5 times or more away from it, so
// that curves near either end of the axis can be read off: on an axis
// from 0.021 to 0.45 the labels 0.05, 0.1 and 0.2 gain 0.03 and 0.4.
func labelEnds(ticks []gplot.Tick) {
	first, last := -1, -1
	for i, t := range ticks {
		if t.Label != "" {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return
	}
	if lo := &ticks[0]; ticks[first].Value >= 1.5*lo.Value {
		lo.Label = tickLabel(lo.Value)
	}
	if hi := &ticks[len(ticks)-1]; hi.Value >= 1.5*ticks[last].Value {
		hi.Label = tickLabel(hi.Value)
	}
}

// tickLabel formats a tick value briefly: 0.001, 250, 100000, 1e-5, 1e6.
// v should be rounded with clean.
func tickLabel(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		mant, exp := s[:i], s[i+1:]
		exp = strings.TrimPrefix(exp, "+")
		neg := strings.HasPrefix(exp, "-")
		exp = strings.TrimLeft(strings.TrimPrefix(exp, "-"), "0")
		if neg {
			exp = "-" + exp
		}
		s = mant + "e" + exp
	}
	return s
}

// Linspace returns n evenly spaced values from a to b, both included: the
// points at which Contour evaluates its function along each axis.
func Linspace(a, b float64, n int) []float64 {
	v := make([]float64, n)
	if n == 1 {
		v[0] = a
		return v
	}
	for i := range v {
		v[i] = a + (b-a)*float64(i)/float64(n-1)
	}
	v[n-1] = b
	return v
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// strokeRecorder is a vg.Canvas that holds back the paths it is asked to
// stroke and draws them, sorted, on flush. Everything else goes straight
// through, so it suits only a plotter that strokes every path in one
// line style, as isolines does.
type strokeRecorder struct {
	vg.Canvas
	paths []vg.Path
}

// Stroke implements vg.Canvas.
func (r *strokeRecorder) Stroke(p vg.Path) { r.paths = append(r.paths, p) }

// flush strokes the held paths in the order of comparePaths.
func (r *strokeRecorder) flush() {
	slices.SortStableFunc(r.paths, comparePaths)
	for _, p := range r.paths {
		r.Canvas.Stroke(p)
	}
	r.paths = nil
}

// comparePaths orders paths by their components' kinds and points, in turn.
func comparePaths(a, b vg.Path) int {
	for i := range min(len(a), len(b)) {
		if c := cmp.Or(
			cmp.Compare(a[i].Type, b[i].Type),
			cmp.Compare(a[i].Pos.X, b[i].Pos.X),
			cmp.Compare(a[i].Pos.Y, b[i].Pos.Y),
		); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}
