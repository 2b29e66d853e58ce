package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one curve of a line plot: Y against X, named Name in the
// legend (left out of the legend when empty). Lower and Upper, when not
// nil, bound a shaded band drawn under the curve, such as ±1 standard
// error; they must then both have the length of X.
type Series struct {
	Name         string
	X, Y         []float64
	Lower, Upper []float64
}

// Lines writes a line plot of the series to path+".png" and path+".svg":
// one curve per series in distinct colours and dashes, with a legend of
// the series' names, and, where a series has Lower and Upper, a band of
// its colour. If logY, the y axis has a log scale and its label says so:
// "value" becomes "value (log scale)" (the tick labels are the plain
// values, as 0.01, 1 and 100), and an empty label "log scale".
//
// Text is drawn as CheckText describes: sub- and superscripts that the
// font lacks are spelled out, and Lines returns a *GlyphError, writing
// nothing, if the title, a label or a series' name has another character
// that the font lacks.
//
// Points that cannot be drawn (a NaN or infinite coordinate, or y ≤ 0 on
// a log axis) are skipped and break the curve; band points are skipped
// likewise. A series with no drawable point still has its legend entry.
// Lines returns an error, writing nothing, if there are no series or a
// series' X, Y, Lower and Upper differ in length.
func Lines(path string, title, xlabel, ylabel string, logY bool, series ...Series) error {
	names, err := checkSeries("Lines", &title, &xlabel, &ylabel, series)
	if err != nil {
		return err
	}
	if logY {
		ylabel = logLabel(ylabel)
	}
	p, err := linesPlot(title, xlabel, ylabel, logY, series, names, nil, math.Inf(1))
	if err != nil {
		return fmt.Errorf("plot: Lines: %w", err)
	}
	return save(path, figWidth, figHeight, func(dc draw.Canvas) {
		// A margin, so the last tick label fits even where an SVG viewer
		// substitutes a wider font.
		p.Draw(draw.Crop(dc, vg.Points(4), -vg.Points(10), vg.Points(4), -vg.Points(4)))
	})
}

// Zoom is the second panel of LinesZoomed: the series of the indices in
// Series, each drawn as in the first panel, their points above YMax left
// out so that the y axis fits the rest, under the panel title Title.
type Zoom struct {
	Title  string
	Series []int
	YMax   float64
}

// LinesZoomed writes the line plot of Lines as its first panel, titled
// first, and beside it the zoom panel z, the figure's title over both:
// the learning curves and a zoom on the lower ends of some of them, as
// the paper's Figure 4. It returns an error, writing nothing, for the
// input Lines refuses, an index of z.Series out of range, or a YMax that
// is NaN.
func LinesZoomed(path string, title, first, xlabel, ylabel string, logY bool, z Zoom, series ...Series) error {
	names, err := checkSeries("LinesZoomed", &title, &xlabel, &ylabel, series)
	if err != nil {
		return err
	}
	zt := z.Title
	if err := drawableAll(figText{"first panel's title", &first}, figText{"the zoom's title", &zt}); err != nil {
		return fmt.Errorf("plot: LinesZoomed: %w", err)
	}
	for _, i := range z.Series {
		if i < 0 || i >= len(series) {
			return fmt.Errorf("plot: LinesZoomed: the zoom's series %d: there are %d series", i, len(series))
		}
	}
	if math.IsNaN(z.YMax) {
		return errors.New("plot: LinesZoomed: the zoom's YMax is NaN")
	}
	if logY {
		ylabel = logLabel(ylabel)
	}
	all := make([]int, len(series))
	for i := range all {
		all[i] = i
	}
	var plots [1][]*gplot.Plot
	for _, pn := range []struct {
		title string
		keep  []int
		ymax  float64
	}{{first, all, math.Inf(1)}, {zt, z.Series, z.YMax}} {
		p, err := linesPlot(pn.title, xlabel, ylabel, logY, series, names, pn.keep, pn.ymax)
		if err != nil {
			return fmt.Errorf("plot: LinesZoomed: %w", err)
		}
		scaleText(p, 0.9)
		plots[0] = append(plots[0], p)
	}
	return save(path, 2*figWidth, figHeight, func(dc draw.Canvas) {
		dc = fillTitle(dc, title)
		tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(14), PadTop: vg.Points(4), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10)}
		canvases := gplot.Align(plots[:], tiles, dc)
		for i, p := range plots[0] {
			p.Draw(canvases[0][i])
		}
	})
}

// checkSeries returns the series' names, drawable, and makes the labels
// drawable (CheckText), or returns an error naming the function fn, for
// input that Lines refuses.
func checkSeries(fn string, title, xlabel, ylabel *string, series []Series) ([]string, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("plot: %s: no series", fn)
	}
	for i, s := range series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("plot: %s: series %d (%q): %d x values but %d y values", fn, i, s.Name, len(s.X), len(s.Y))
		}
		if (s.Lower == nil) != (s.Upper == nil) {
			return nil, fmt.Errorf("plot: %s: series %d (%q): Lower and Upper must both be set or both be nil", fn, i, s.Name)
		}
		if s.Lower != nil && (len(s.Lower) != len(s.X) || len(s.Upper) != len(s.X)) {
			return nil, fmt.Errorf("plot: %s: series %d (%q): %d x values but %d lower and %d upper bounds", fn, i, s.Name, len(s.X), len(s.Lower), len(s.Upper))
		}
	}
	names := make([]string, len(series))
	texts := []figText{{"title", title}, {"x label", xlabel}, {"y label", ylabel}}
	for i, s := range series {
		names[i] = s.Name
		texts = append(texts, figText{fmt.Sprintf("series %d", i), &names[i]})
	}
	if err := drawableAll(texts...); err != nil {
		return nil, fmt.Errorf("plot: %s: %w", fn, err)
	}
	return names, nil
}

// linesPlot returns the line plot of the series of the indices in keep
// (all where keep is nil), named names, each in the colour and dash of
// its index, their points with y above ymax left out (a gap). The labels
// are drawn as given: the caller makes them drawable.
func linesPlot(title, xlabel, ylabel string, logY bool, series []Series, names []string, keep []int, ymax float64) (*gplot.Plot, error) {
	if keep == nil {
		keep = make([]int, len(series))
		for i := range keep {
			keep[i] = i
		}
	}
	p := newPlot(title, xlabel, ylabel)
	if logY {
		p.Y.Scale = gplot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	p.Add(&plotter.Grid{
		Vertical:   draw.LineStyle{Color: color.Gray{Y: 225}, Width: vg.Points(0.5)},
		Horizontal: draw.LineStyle{Color: color.Gray{Y: 225}, Width: vg.Points(0.5)},
	})
	ok := func(x, y float64) bool { return finite(x) && finite(y) && (!logY || y > 0) && y <= ymax }

	// Bands first, so that every curve is drawn over every band.
	bands := make([]*plotter.Polygon, len(series))
	for _, i := range keep {
		s := series[i]
		if s.Lower == nil {
			continue
		}
		var rings []plotter.XYer
		for _, run := range runs(len(s.X), func(k int) bool {
			return ok(s.X[k], s.Lower[k]) && ok(s.X[k], s.Upper[k])
		}) {
			ring := make(plotter.XYs, 0, 2*len(run))
			for _, k := range run {
				ring = append(ring, plotter.XY{X: s.X[k], Y: s.Upper[k]})
			}
			for j := len(run) - 1; j >= 0; j-- {
				ring = append(ring, plotter.XY{X: s.X[run[j]], Y: s.Lower[run[j]]})
			}
			rings = append(rings, ring)
		}
		c := seriesColor(i)
		c.A = 0x40
		band := &plotter.Polygon{Color: c}
		if len(rings) > 0 {
			var err error
			if band, err = plotter.NewPolygon(rings...); err != nil {
				return nil, fmt.Errorf("series %d (%q): %w", i, s.Name, err)
			}
			band.Color = c
			band.LineStyle.Width = 0
			p.Add(band)
		}
		bands[i] = band
	}

	var leg legend
	anyPoint := false
	for _, i := range keep {
		s := series[i]
		style := draw.LineStyle{
			Color:  seriesColor(i),
			Width:  vg.Points(1.5),
			Dashes: seriesDash(i),
		}
		for _, run := range runs(len(s.X), func(k int) bool { return ok(s.X[k], s.Y[k]) }) {
			xys := make(plotter.XYs, len(run))
			for j, k := range run {
				xys[j] = plotter.XY{X: s.X[k], Y: s.Y[k]}
			}
			anyPoint = true
			if len(xys) == 1 {
				// A lone point between gaps would be invisible as a line.
				sc, err := plotter.NewScatter(xys)
				if err != nil {
					return nil, fmt.Errorf("series %d (%q): %w", i, s.Name, err)
				}
				sc.GlyphStyle = draw.GlyphStyle{Color: style.Color, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
				p.Add(sc)
				continue
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("series %d (%q): %w", i, s.Name, err)
			}
			l.LineStyle = style
			p.Add(l)
		}
		thumb := &plotter.Line{LineStyle: style}
		if bands[i] != nil {
			leg.add(names[i], bands[i], thumb)
		} else {
			leg.add(names[i], thumb)
		}
	}
	if !anyPoint && logY {
		p.Y.Min, p.Y.Max = 1, 10
	}
	if logY && p.Y.Min == p.Y.Max {
		p.Y.Min, p.Y.Max = p.Y.Min/math.Sqrt(10), p.Y.Max*math.Sqrt(10)
	}
	p.Add(&leg)
	return p, nil
}

// logLabel returns the label of a log-scale axis: label followed by
// " (log scale)", or "log scale" for an empty label, unless label already
// says "log scale".
func logLabel(label string) string {
	switch {
	case label == "":
		return "log scale"
	case strings.Contains(label, "log scale"):
		return label
	}
	return label + " (log scale)"
}

// runs returns the maximal runs of consecutive indices in [0, n) for which
// keep is true.
func runs(n int, keep func(k int) bool) [][]int {
	var out [][]int
	var cur []int
	for k := 0; k < n; k++ {
		if keep(k) {
			cur = append(cur, k)
			continue
		}
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
