package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Panel is one chain's path in the plane for Trajectories: the points
// (X[t], Y[t]) in the order visited, under the heading Title.
type Panel struct {
	Title string
	X, Y  []float64
}

// Trajectories writes side-by-side panels to path+".png" and
// path+".svg", under the figure title title, one per panel, each with
// its x axis labelled xlabel and its y axis ylabel: the
// contour lines of contour at levels, in grey, and the panel's path as a
// thin line in the panel's colour (the colours of Lines' series, in the
// same order), its start marked with a dot and its end with a filled triangle.
// Figure 1 of the paper, middle and right, is two such panels: one chain
// of NNSGHMC and one of SGHMC on a 2-D Gaussian.
//
// All panels share one square range in x and y, large enough for every
// path and, where they close, for all the contour lines (say the
// target's log density at 1, 2 and 3 standard deviations): starting from
// the paths' bounding box, the range is grown until no contour line
// runs out of it. A nil contour draws paths only. The figure is 6×4
// inches for one or two panels and 3 inches wider per further panel.
//
// Non-finite points are skipped and break the path. Trajectories returns
// an error, writing nothing, if there are no panels, a panel's X and Y
// differ in length, contour is not nil but no level is finite, or the
// title, a label or a panel's title has a character that the font lacks
// (a *GlyphError; see CheckText).
func Trajectories(path, title, xlabel, ylabel string, contour func(x, y float64) float64, levels []float64, panels ...Panel) error {
	if len(panels) == 0 {
		return errors.New("plot: Trajectories: no panels")
	}
	titles := make([]string, len(panels))
	texts := []figText{{"title", &title}, {"x label", &xlabel}, {"y label", &ylabel}}
	for i, pn := range panels {
		if len(pn.X) != len(pn.Y) {
			return fmt.Errorf("plot: Trajectories: panel %d (%q): %d x values but %d y values", i, pn.Title, len(pn.X), len(pn.Y))
		}
		titles[i] = pn.Title
		texts = append(texts, figText{fmt.Sprintf("panel %d", i), &titles[i]})
	}
	if err := drawableAll(texts...); err != nil {
		return fmt.Errorf("plot: Trajectories: %w", err)
	}
	var lv []float64
	for _, v := range levels {
		if finite(v) {
			lv = append(lv, v)
		}
	}
	if contour != nil && len(lv) == 0 {
		return errors.New("plot: Trajectories: no finite contour levels")
	}

	// The paths' bounding box.
	b := box{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
	for _, pn := range panels {
		for t := range pn.X {
			if finite(pn.X[t]) && finite(pn.Y[t]) {
				b = b.add(pn.X[t], pn.Y[t])
			}
		}
	}
	if b.x0 > b.x1 {
		b = box{-1, 1, -1, 1}
	}
	b = b.square()

	var g *grid
	if contour != nil {
		b = contourBox(contour, lv, b)
		b = b.scale(1.08)
		g = newGrid(contour, b.x0, b.x1, b.y0, b.y1, 161, 161)
	} else {
		b = b.scale(1.08)
	}

	textScale := 1.0
	if len(panels) > 1 {
		textScale = 0.9
	}
	plots := make([][]*gplot.Plot, 1)
	for i, pn := range panels {
		p := newPlot(titles[i], xlabel, ylabel)
		scaleText(p, textScale)
		var leg legend
		leg.size = legendSize * vg.Length(textScale) * 0.9

		if g != nil {
			iso := &isolines{g: g, levels: lv, style: draw.LineStyle{Color: color.Gray{Y: 130}, Width: vg.Points(0.8)}}
			p.Add(iso)
			leg.add("target", &plotter.Line{LineStyle: iso.style})
		}

		style := draw.LineStyle{Color: seriesColor(i), Width: vg.Points(0.7)}
		ok := func(t int) bool { return finite(pn.X[t]) && finite(pn.Y[t]) }
		rs := runs(len(pn.X), ok)
		for _, run := range rs {
			if len(run) < 2 {
				continue
			}
			xys := make(plotter.XYs, len(run))
			for j, t := range run {
				xys[j] = plotter.XY{X: pn.X[t], Y: pn.Y[t]}
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return fmt.Errorf("plot: Trajectories: panel %d (%q): %w", i, pn.Title, err)
			}
			l.LineStyle = style
			p.Add(l)
		}
		leg.add("path", &plotter.Line{LineStyle: style})

		if len(rs) > 0 {
			first := rs[0][0]
			last := rs[len(rs)-1][len(rs[len(rs)-1])-1]
			for _, m := range []struct {
				name  string
				t     int
				shape draw.GlyphDrawer
			}{
				{"start", first, draw.CircleGlyph{}},
				{"end", last, draw.PyramidGlyph{}},
			} {
				sc, err := plotter.NewScatter(plotter.XYs{{X: pn.X[m.t], Y: pn.Y[m.t]}})
				if err != nil {
					return fmt.Errorf("plot: Trajectories: panel %d (%q): %w", i, pn.Title, err)
				}
				sc.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3.5), Shape: m.shape}
				p.Add(sc)
				leg.add(m.name, sc)
			}
		}
		p.Add(&leg)

		p.X.Min, p.X.Max = b.x0, b.x1
		p.Y.Min, p.Y.Max = b.y0, b.y1
		plots[0] = append(plots[0], p)
	}

	w := figWidth
	if n := len(panels); n > 2 {
		w = vg.Length(n) * 3 * vg.Inch
	}
	return save(path, w, figHeight, func(dc draw.Canvas) {
		dc = fillTitle(dc, title)
		tiles := draw.Tiles{
			Rows:      1,
			Cols:      len(panels),
			PadX:      vg.Points(10),
			PadTop:    vg.Points(4),
			PadBottom: vg.Points(6),
			PadLeft:   vg.Points(6),
			PadRight:  vg.Points(10),
		}
		canvases := gplot.Align(plots, tiles, dc)
		for i, p := range plots[0] {
			p.Draw(canvases[0][i])
		}
	})
}

// contourBox returns a box around b, grown about its centre until the
// contour lines of f at levels no longer run out of it. If they run out
// of every box tried (say f is linear), it returns the smallest box in
// which some contour line shows, and b if none does.
func contourBox(f func(x, y float64) float64, levels []float64, b box) box {
	const n = 81
	var first *box
	cur := b
	for i := 0; i < 12; i++ {
		g := newGrid(f, cur.x0, cur.x1, cur.y0, cur.y1, n, n)
		if g.crosses(levels) {
			if !g.crossesBoundary(levels) {
				return cur
			}
			if first == nil {
				c := cur
				first = &c
			}
		}
		cur = cur.scale(1.5)
	}
	if first != nil {
		return *first
	}
	return b
}

// box is a rectangle [x0, x1]×[y0, y1] in data coordinates.
type box struct{ x0, x1, y0, y1 float64 }

// add returns the smallest box holding b and (x, y).
func (b box) add(x, y float64) box {
	return box{math.Min(b.x0, x), math.Max(b.x1, x), math.Min(b.y0, y), math.Max(b.y1, y)}
}

// square returns the square box with b's centre whose side is b's longer
// side, or a unit square about the centre if b is a point.
func (b box) square() box {
	cx, cy := (b.x0+b.x1)/2, (b.y0+b.y1)/2
	h := math.Max(b.x1-b.x0, b.y1-b.y0) / 2
	if !(h > 0) {
		h = math.Max(0.5, 0.05*math.Max(math.Abs(cx), math.Abs(cy)))
	}
	return box{cx - h, cx + h, cy - h, cy + h}
}

// scale returns b scaled by f about its centre.
func (b box) scale(f float64) box {
	cx, cy := (b.x0+b.x1)/2, (b.y0+b.y1)/2
	hx, hy := f*(b.x1-b.x0)/2, f*(b.y1-b.y0)/2
	return box{cx - hx, cx + hx, cy - hy, cy + hy}
}
