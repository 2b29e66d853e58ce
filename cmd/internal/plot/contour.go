package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Contour writes a heat map of f over [xmin, xmax]×[ymin, ymax], with
// black contour lines at round values and a colour bar, to path+".png"
// and path+".svg". f is evaluated on an n×n grid of evenly spaced points,
// each the centre of one cell of the heat map; the paper's Figure 3 shows
// the learned f_Q(u, p) and f_D(u, p, g) this way over two of their
// inputs.
//
// The colours are Moreland's smooth blue–red map. When f takes both signs
// on the grid, the map is centred on zero (white-grey is 0, blue negative,
// red positive); otherwise it spans f's range. The contour levels are
// marked on the colour bar too. Cells where f is NaN or infinite are left
// blank, and contour lines stop at them.
//
// Contour returns an error, writing nothing, if f is nil, n < 2, the
// ranges are not finite with xmin < xmax and ymin < ymax, f has no finite
// value on the grid, or the title or a label has a character that the
// font lacks (a *GlyphError; see CheckText).
//
// Contour's memory grows with n²: ContourBytes estimates it.
func Contour(path, title, xlabel, ylabel string, f func(x, y float64) float64, xmin, xmax, ymin, ymax float64, n int) error {
	switch {
	case f == nil:
		return errors.New("plot: Contour: nil function")
	case n < 2:
		return fmt.Errorf("plot: Contour: grid size %d, need at least 2", n)
	case !finite(xmin) || !finite(xmax) || !(xmin < xmax):
		return fmt.Errorf("plot: Contour: bad x range [%g, %g]", xmin, xmax)
	case !finite(ymin) || !finite(ymax) || !(ymin < ymax):
		return fmt.Errorf("plot: Contour: bad y range [%g, %g]", ymin, ymax)
	}
	if err := drawableAll(figText{"title", &title}, figText{"x label", &xlabel}, figText{"y label", &ylabel}); err != nil {
		return fmt.Errorf("plot: Contour: %w", err)
	}
	g := newGrid(f, xmin, xmax, ymin, ymax, n, n)
	if g.finite == 0 {
		return errors.New("plot: Contour: the function has no finite value on the grid")
	}

	// The colour range.
	lo, hi := g.min, g.max
	switch {
	case lo == hi:
		d := math.Abs(lo) / 10
		if d == 0 {
			d = 1
		}
		lo, hi = lo-d, hi+d
	case lo < 0 && hi > 0:
		m := math.Max(-lo, hi)
		lo, hi = -m, m
	}
	cmap := moreland.SmoothBlueRed()
	cmap.SetMin(lo)
	cmap.SetMax(hi)
	levels := niceLevels(g.min, g.max)

	p := newPlot(title, xlabel, ylabel)
	hm := plotter.NewHeatMap(upsampled{g, rasterScale(n)}, cmap.Palette(256))
	hm.Min, hm.Max = lo, hi
	hm.NaN = nil // blank
	hm.Rasterized = true
	p.Add(noGlyphs{hm})
	p.Add(&isolines{g: g, levels: levels, style: draw.LineStyle{Color: color.Black, Width: vg.Points(0.7)}})
	// Heat map cells reach half a cell past the outer grid points.
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = hm.DataRange()
	p.X.Padding, p.Y.Padding = 0, 0

	bar := gplot.New()
	bar.HideX()
	bar.X.Padding, bar.Y.Padding = 0, 0
	bar.Y.Tick.Label.Font = font.From(sans, tickSize)
	bar.Y.Tick.Marker = linTicks{}
	bar.Add(&plotter.ColorBar{ColorMap: cmap, Vertical: true, Colors: 256})
	for _, l := range levels {
		ln, err := plotter.NewLine(plotter.XYs{{X: 0, Y: l}, {X: 1, Y: l}})
		if err != nil {
			return fmt.Errorf("plot: Contour: %w", err)
		}
		ln.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(0.7)}
		bar.Add(ln)
	}
	bar.X.Min, bar.X.Max = 0, 1
	bar.Y.Min, bar.Y.Max = lo, hi

	return save(path, figWidth, figHeight, func(dc draw.Canvas) {
		const barWidth, gap, margin = 0.2 * vg.Inch, 0.15 * vg.Inch, 0.1 * vg.Inch
		// Measure what the bar's axis takes around its data area.
		trial := draw.Crop(dc, dc.Max.X-dc.Min.X-vg.Inch, 0, 0, 0)
		td := bar.DataCanvas(trial)
		left, right := td.Min.X-trial.Min.X, trial.Max.X-td.Max.X
		below, above := td.Min.Y-trial.Min.Y, trial.Max.Y-td.Max.Y
		stripW := left + barWidth + right + margin

		main := draw.Crop(dc, 0, -(stripW + gap), 0, 0)
		main = draw.Crop(main, vg.Points(4), 0, vg.Points(4), -vg.Points(4))
		md := p.DataCanvas(main)
		strip := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: dc.Max.X - stripW, Y: md.Min.Y - below},
			Max: vg.Point{X: dc.Max.X - margin, Y: md.Max.Y + above},
		}}
		p.Draw(main)
		bar.Draw(strip)
	})
}

// rasterScale returns the number of heat-map pixels along each axis per
// cell of an n×n grid: enough for at least 600 pixels a side.
func rasterScale(n int) int { return max(1, (600+n-1)/n) }

// ContourBytes estimates the memory, in bytes, that Contour allocates for
// an n×n grid: 8 bytes a grid point for the values, and for the heat map
// a raster of 8 bytes a pixel (n·k pixels a side, at least 600: k pixels
// a cell) drawn once for the PNG and once for the SVG, which embeds it
// PNG-encoded in base64, that is about 3 raster sizes more at worst.
// n may be far larger than Contour can draw; the estimate is a float64
// so as not to overflow.
func ContourBytes(n int) float64 {
	if n < 1 {
		return 0
	}
	side := float64(n)
	if n < 600 {
		side *= float64(rasterScale(n))
	}
	return 8*float64(n)*float64(n) + 5*8*side*side
}

// upsampled presents each cell of a grid as k×k cells of the same value
// and the same total extent. gonum's vector heat map shows hairline seams
// between cells, and its raster heat map has one pixel per cell, which
// the canvas scales with interpolation, blurring the edges of cells and
// of blank regions; with k pixels per cell the edges stay sharp.
type upsampled struct {
	g *grid
	k int
}

// Dims implements plotter.GridXYZ.
func (u upsampled) Dims() (c, r int) {
	c, r = u.g.Dims()
	return c * u.k, r * u.k
}

// Z implements plotter.GridXYZ.
func (u upsampled) Z(c, r int) float64 { return u.g.Z(c/u.k, r/u.k) }

// X implements plotter.GridXYZ.
func (u upsampled) X(c int) float64 { return sub(u.g.xs, c, u.k) }

// Y implements plotter.GridXYZ.
func (u upsampled) Y(r int) float64 { return sub(u.g.ys, r, u.k) }

// sub returns the centre of the i-th of k equal parts of each cell
// centred on the evenly spaced points v.
func sub(v []float64, i, k int) float64 {
	d := v[1] - v[0]
	return v[i/k] + d*((float64(i%k)+0.5)/float64(k)-0.5)
}

// noGlyphs hides a heat map's glyph boxes: gonum's HeatMap returns one
// per cell, which the plot's layout then walks several times, and cells
// need no room beyond the data range anyway.
type noGlyphs struct{ *plotter.HeatMap }

// GlyphBoxes implements plot.GlyphBoxer.
func (noGlyphs) GlyphBoxes(*gplot.Plot) []gplot.GlyphBox { return nil }
