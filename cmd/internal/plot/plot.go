// Package plot writes the figures of the commands: line plots of curves
// against steps or epochs, the 2-D paths of sampler chains over a target's
// density contours, and heat maps of 2-D functions.
//
// Every figure is written twice, as path+".png" (150 dots per inch) and
// path+".svg", each atomically with cli.WriteFile, so a reader never sees a
// half-written file. The directory of path must exist. Input is checked
// before anything is written: a call that returns an error for bad input
// leaves no file behind. Both files are drawn in memory before the first
// is written; if writing the SVG fails, the new PNG stays. Non-finite
// values are skipped, not rejected. All text is set in Liberation Sans;
// text with a character that the font lacks is refused or spelled out as
// CheckText describes, never drawn with the character missing. The
// functions are safe to call from several goroutines at once.
package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"strings"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure geometry and text sizes.
const (
	figWidth  = 6 * vg.Inch
	figHeight = 4 * vg.Inch
	pngDPI    = 150

	titleSize  = vg.Length(13)
	labelSize  = vg.Length(11)
	tickSize   = vg.Length(10)
	legendSize = vg.Length(10)
)

// sans is the typeface of all text; gonum's default is a serif.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// seriesColors are the Okabe–Ito colours, distinguishable by most
// colour-blind readers, in the order series are given.
var seriesColors = []color.NRGBA{
	{0x00, 0x72, 0xb2, 0xff}, // blue
	{0xd5, 0x5e, 0x00, 0xff}, // vermillion
	{0x00, 0x9e, 0x73, 0xff}, // bluish green
	{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
	{0xe6, 0x9f, 0x00, 0xff}, // orange
	{0x56, 0xb4, 0xe9, 0xff}, // sky blue
	{0x00, 0x00, 0x00, 0xff}, // black
}

// seriesDashes are the dash patterns, in points, in the order series are
// given: solid, dashed, dotted, dash-dot, long dash, dash-dot-dot.
var seriesDashes = [][]vg.Length{
	nil,
	{6, 3},
	{1.5, 2.5},
	{6, 2.5, 1.5, 2.5},
	{11, 4},
	{6, 2, 1.5, 2, 1.5, 2},
}

// seriesColor returns the colour of the i-th series.
func seriesColor(i int) color.NRGBA { return seriesColors[i%len(seriesColors)] }

// seriesDash returns the dash pattern of the i-th series. There are seven
// colours and six dashes, so no two of the first 42 series have both alike.
func seriesDash(i int) []vg.Length { return seriesDashes[i%len(seriesDashes)] }

// newPlot returns a plot with the package's fonts, sizes and labels.
func newPlot(title, xlabel, ylabel string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, titleSize)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, labelSize)
		a.Tick.Label.Font = font.From(sans, tickSize)
		a.Padding = vg.Points(3)
		a.Tick.Marker = linTicks{}
	}
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	return p
}

// scaleText multiplies the sizes of a plot's text by f, for plots drawn
// in smaller tiles.
func scaleText(p *gplot.Plot, f float64) {
	p.Title.TextStyle.Font.Size *= vg.Length(f)
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size *= vg.Length(f)
		a.Tick.Label.Font.Size *= vg.Length(f)
	}
}

// save draws a figure of size w×h with render, once for PNG and once for
// SVG, and writes both files. Both are drawn in memory before either file
// is written, and a panic inside gonum/plot is turned into an error, so a
// plotting problem never takes a long run down with it.
func save(path string, w, h vg.Length, render func(dc draw.Canvas)) (err error) {
	base := basePath(path)
	if base == "" {
		return fmt.Errorf("plot: empty path")
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot: drawing %s: %v", base, r)
		}
	}()

	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	render(draw.New(img))
	var pngBuf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&pngBuf); err != nil {
		return fmt.Errorf("plot: encoding %s.png: %w", base, err)
	}

	svg := vgsvg.New(w, h)
	dc := draw.New(svg)
	dc.SetColor(color.White) // SVG canvases start transparent
	dc.Fill(dc.Rectangle.Path())
	render(dc)
	var svgBuf bytes.Buffer
	if _, err := svg.WriteTo(&svgBuf); err != nil {
		return fmt.Errorf("plot: encoding %s.svg: %w", base, err)
	}
	// Fonts are not embedded; name fallbacks with the same metrics
	// (Arial) or at least of the same kind, not the viewer's serif.
	svgBytes := bytes.ReplaceAll(svgBuf.Bytes(),
		[]byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
	// vgsvg (v0.11 to v0.17 at least) embeds images (raster heat maps,
	// colour bars) as PNG but labels them JPEG, which some viewers refuse,
	// and leaves SVG's default of keeping their aspect ratio, which shrinks
	// a heat map to a square and a colour bar to a line (TestContour
	// checks the result).
	svgBytes = bytes.ReplaceAll(svgBytes,
		[]byte(`xlink:href="data:image/jpg;base64,iVBOR`),
		[]byte(`preserveAspectRatio="none" xlink:href="data:image/png;base64,iVBOR`))

	for _, f := range []struct {
		ext string
		buf []byte
	}{{".png", pngBuf.Bytes()}, {".svg", svgBytes}} {
		b := f.buf
		if err := cli.WriteFile(base+f.ext, func(w io.Writer) error {
			_, err := w.Write(b)
			return err
		}); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
	}
	return nil
}

// basePath strips a trailing ".png" or ".svg" from path, so that a caller
// who passes a file name still gets one file of each kind.
func basePath(path string) string {
	for _, ext := range []string{".png", ".svg"} {
		if strings.HasSuffix(path, ext) {
			return strings.TrimSuffix(path, ext)
		}
	}
	return path
}

// fillTitle draws a figure title centred at the top of dc and returns the
// canvas below it.
func fillTitle(dc draw.Canvas, title string) draw.Canvas {
	if title == "" {
		return dc
	}
	sty := text.Style{
		Color:   color.Black,
		Font:    font.From(sans, titleSize),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: gplot.DefaultTextHandler,
	}
	pad := vg.Points(6)
	dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y - pad}, title)
	h := sty.Rectangle(title).Size().Y
	return draw.Crop(dc, 0, 0, 0, -(h + 2*pad))
}

// legend is a plot.Plotter that draws a legend in the top right corner of
// the data area on a translucent white box, so it stays legible over
// curves. Add it to a plot last.
type legend struct {
	entries []legendEntry
	size    vg.Length
}

type legendEntry struct {
	name   string
	thumbs []gplot.Thumbnailer
}

// add adds an entry; entries with an empty name are left out.
func (l *legend) add(name string, thumbs ...gplot.Thumbnailer) {
	if name == "" {
		return
	}
	l.entries = append(l.entries, legendEntry{name, thumbs})
}

// Plot implements plot.Plotter.
func (l *legend) Plot(c draw.Canvas, _ *gplot.Plot) {
	if len(l.entries) == 0 {
		return
	}
	size := l.size
	if size == 0 {
		size = legendSize
	}
	gl := gplot.NewLegend()
	gl.TextStyle.Font = font.From(sans, size)
	gl.Top, gl.Left = true, true
	gl.ThumbnailWidth = 3 * size
	gl.Padding = size / 4

	var textW, entH vg.Length
	for _, e := range l.entries {
		r := gl.TextStyle.Rectangle(e.name)
		textW = max(textW, r.Max.X)
		entH = max(entH, r.Max.Y)
		gl.Add(e.name, e.thumbs...)
	}
	em := gl.TextStyle.Rectangle(" ").Max.X
	n := vg.Length(len(l.entries))
	w := gl.ThumbnailWidth + em + textW
	h := n*entH + (n-1)*gl.Padding + gl.TextStyle.FontExtents().Descent
	margin, pad := size/2, size/3

	box := vg.Rectangle{
		Min: vg.Point{X: c.Max.X - margin - w - 2*pad, Y: c.Max.Y - margin - h - 2*pad},
		Max: vg.Point{X: c.Max.X - margin, Y: c.Max.Y - margin},
	}
	c.SetColor(color.NRGBA{255, 255, 255, 215})
	c.Fill(box.Path())
	c.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 190}, Width: vg.Points(0.5)})
	c.Stroke(box.Path())

	inner := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: box.Min.X + pad, Y: box.Min.Y + pad},
		Max: vg.Point{X: box.Max.X - pad, Y: box.Max.Y - pad},
	}}
	gl.Draw(inner)
}
