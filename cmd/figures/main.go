// Command figures draws the experiments' figures from the outputs of
// cmd/sample and cmd/train, each as PNG and SVG:
//
//	figures curves -metric kl -out FIG NAME=RUNDIR ...
//	    one curve per run of a metric from RUNDIR/metrics.csv against steps
//	figures trajectories -task gaussian2d -out FIG NAME=RUNDIR ...
//	    the path of chain 0 from RUNDIR/trace.bin on the target's contours
//	figures nets -meta sampler.json -out DIR
//	    contour plots of a trained sampler's f_Q and f_D over their inputs,
//	    with the plotted values as CSV (f_q.csv, …)
//	figures table -metric kl -steps 1000,3000,12000 -summary ess NAME=RUNDIR ...
//	    a Markdown table of a metric at given steps and summary values
//	figures sweep FILE ...
//	    the tables and curves that a sweep file (cmd/sweep) names, from its
//	    runs that have finished (or their records), saying which have not
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/plot"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/samplers/trace"
	"github.com/metasgmcmc/metasgmcmc/tasks/gaussian"
)

func main() { cli.Exit("figures", run(context.Background(), os.Args[1:])) }

// description is the command's one-line description, the first line of
// its help.
const description = "draws the experiments' figures and tables from the outputs of cmd/sample and cmd/train"

// figures are the command's figures, in the order the help lists them.
func figures() cli.Commands {
	return cli.Commands{Program: "figures", Description: description, Noun: "figure", Usage: "figures FIGURE [flags] [NAME=DIR ...]",
		Footer: "Run \"figures FIGURE --help\" (or \"figures help FIGURE\") for a figure's flags and arguments.",
		List: []cli.Command{
			{Name: "curves", Synopsis: "[flags] --out FIG NAME=DIR[,DIR...]...", What: "one curve per run of a metric from RUNDIR/metrics.csv against steps", Run: plain(curves)},
			{Name: "trajectories", Synopsis: "[flags] --out FIG NAME=DIR...", What: "the path of chain 0 from RUNDIR/trace.bin on the target's contours", Run: plain(trajectories)},
			{Name: "nets", Synopsis: "[flags] --meta sampler.json --out DIR", What: "contour plots of a trained sampler's f_Q and f_D over their inputs, and their values (CSV)", Run: plain(nets)},
			{Name: "table", Synopsis: "[flags] NAME=DIR[,DIR...]...", What: "a Markdown table of a metric at given steps and summary values",
				Run: func(_ context.Context, a []string) error { return table(os.Stdout, a) }},
			{Name: "lastlayer", Synopsis: "NAME=DIR[,DIR...]...", What: "a Markdown table of how hot MLP runs' last layers sit: positions against the posterior given each chain's hidden layers, beside the momenta",
				Run: func(_ context.Context, a []string) error { return lastLayer(os.Stdout, a) }},
			{Name: "sweep", Synopsis: "[flags] FILE...", What: "the tables and curves a sweep file names, from its runs that have finished (or their records, where it keeps them), saying which have not", Run: plain(sweepFigures)},
		}}
}

// plain makes a figure's function a cli.Command's Run.
func plain(f func([]string) error) func(context.Context, []string) error {
	return func(_ context.Context, a []string) error { return f(a) }
}

func run(ctx context.Context, args []string) error { return figures().Run(ctx, args) }

// runArgs are the NAME=DIR arguments of curves and table, for their help.
var runArgs = []cli.Arg{
	{Name: "NAME=DIR", Usage: "a run: its label (NAME) and the output directory of cmd/sample (DIR)"},
	{Name: "NAME=DIR1,DIR2,...", Usage: "a run repeated (seeds): the mean over the directories, with its standard error"},
}

// usage sets the help of the figure called name.
func usage(fs *pflag.FlagSet, name string, args ...cli.Arg) {
	cli.SetUsage(fs, figures().Help(name, args...))
}

// runs parses NAME=DIR arguments.
func runs(args []string) ([][2]string, error) {
	if len(args) == 0 {
		return nil, cli.Usagef("no runs given (want NAME=DIR arguments)")
	}
	var rs [][2]string
	for _, a := range args {
		name, dir, ok := strings.Cut(a, "=")
		if !ok || name == "" || dir == "" {
			return nil, cli.Usagef("argument %q is not NAME=DIR", a)
		}
		rs = append(rs, [2]string{name, dir})
	}
	return rs, nil
}

// readCSV reads a CSV file with a header into its columns by name.
func readCSV(path string) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, cli.Usagef("cannot read %v", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, cli.Usagef("%s is not a CSV file: %v", path, err)
	}
	if len(recs) < 2 {
		return nil, cli.Usagef("%s has no rows", path)
	}
	cols := map[string][]string{}
	for _, r := range recs[1:] {
		for j, name := range recs[0] {
			cols[name] = append(cols[name], r[j])
		}
	}
	return cols, nil
}

// noColumn is the error for a metric that a metrics.csv lacks.
func noColumn(path, metric string, cols map[string][]string) error {
	var have []string
	for name := range cols {
		if name != "step" && name != "seconds" {
			have = append(have, name)
		}
	}
	sort.Strings(have)
	return cli.Usagef("%s has no column %q: give -metric one of %s", path, metric, strings.Join(have, ", "))
}

func floats(path, col string, s []string) ([]float64, error) {
	x := make([]float64, len(s))
	for i, v := range s {
		var err error
		if x[i], err = strconv.ParseFloat(v, 64); err != nil {
			return nil, cli.Usagef("%s: column %s row %d: %v", path, col, i+1, err)
		}
	}
	return x, nil
}

func curves(args []string) error {
	fs := pflag.NewFlagSet("figures curves", pflag.ContinueOnError)
	metric := fs.String("metric", "kl", "metric column of metrics.csv")
	out := fs.String("out", "", "figure path without extension (required)")
	title := fs.String("title", "", "figure title")
	logY := fs.Bool("log", true, "logarithmic y axis")
	per := fs.Float64("steps-per-unit", 1, "steps per unit of the x axis (e.g. minibatches per data epoch)")
	xlabel := fs.String("xlabel", "step", "x-axis label")
	ylabel := fs.String("ylabel", "", "y-axis label (default: the metric)")
	ymax := fs.Float64("ymax", math.Inf(1), "leave out the points above this value, so that the y axis fits the rest: a zoom on the lower curves")
	zoom := fs.StringSlice("zoom", nil, "NAME,...: draw beside the curves a second panel of these runs alone (names that have no run are passed over), their points above --zoom-ymax left out and a run with none below it named in the panel's title, as the paper's Figure 4 zooms in on the sampling methods")
	zoomMax := fs.Float64("zoom-ymax", math.NaN(), "the zoom's highest value (default: the zoomed runs' lowest point plus a tenth of the first panel's y range)")
	usage(fs, "curves", append(runArgs, cli.Arg{Name: "NAME=FILE.csv", Usage: "a run's metrics file itself, as the metrics-stopped.csv that a sweep's record keeps of a run a signal stopped"})...)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return cli.Usagef("--out is required")
	}
	if !(*per > 0) {
		return cli.Usagef("--steps-per-unit must be positive")
	}
	if *ylabel == "" {
		*ylabel = *metric
	}
	rs, err := runs(fs.Args())
	if err != nil {
		return err
	}
	if err := checkTexts(rs, "--title", *title, "--xlabel", *xlabel, "--ylabel", *ylabel); err != nil {
		return err
	}
	var series []plot.Series
	for _, r := range rs {
		dirs, err := scoredRuns(r[0], strings.Split(r[1], ","))
		if err != nil {
			return err
		}
		if len(dirs) == 0 {
			continue
		}
		x, mean, se, err := metricOverRuns(dirs, *metric)
		if err != nil {
			return err
		}
		for i, y := range mean {
			if y > *ymax {
				mean[i] = math.NaN() // not drawn: a gap in the curve
			}
		}
		s := plot.Series{Name: r[0], Y: mean}
		for _, v := range x {
			s.X = append(s.X, v / *per)
		}
		if se != nil {
			for i := range mean {
				s.Lower, s.Upper = append(s.Lower, mean[i]-se[i]), append(s.Upper, mean[i]+se[i])
			}
		}
		series = append(series, s)
	}
	if len(*zoom) == 0 {
		return plotError(plot.Lines(*out, *title, *xlabel, *ylabel, *logY, series...))
	}
	z, err := zoomOn(series, *zoom, *zoomMax)
	if err != nil {
		return err
	}
	if len(z.Series) == 0 {
		fmt.Fprintf(os.Stderr, "figures: %s: no run of --zoom %s: drawn without the zoom\n", *out, strings.Join(*zoom, ","))
		return plotError(plot.Lines(*out, *title, *xlabel, *ylabel, *logY, series...))
	}
	return plotError(plot.LinesZoomed(*out, *title, "all runs", *xlabel, *ylabel, *logY, z, series...))
}

// notEnded begins what figures sweep adds to a row's name for the curve
// of a run that has not ended; zoomOn zooms on it as on its row.
const notEnded = " (not ended"

// rowName is the name of the row that the curve named name belongs to:
// name less what notEnded begins.
func rowName(name string) string {
	row, _, _ := strings.Cut(name, notEnded)
	return row
}

// zoomOn returns the zoom panel of curves on the series named in names
// (names without a series are passed over), up to ymax, or where ymax is
// NaN up to the zoomed series' lowest point plus a tenth of the range of
// all the series' points. A named series with no point up to that height
// is left out of the panel, and its title says it lies above; where all
// do, it returns a usage error.
func zoomOn(series []plot.Series, names []string, ymax float64) (plot.Zoom, error) {
	z := plot.Zoom{YMax: ymax}
	var named []int
	for i, s := range series {
		if slices.Contains(names, rowName(s.Name)) {
			named = append(named, i)
		}
	}
	if len(named) == 0 {
		return z, nil
	}
	lowest := func(s plot.Series) float64 {
		lo := math.Inf(1)
		for _, y := range s.Y {
			if !math.IsNaN(y) && !math.IsInf(y, 0) {
				lo = min(lo, y)
			}
		}
		return lo
	}
	if math.IsNaN(ymax) {
		lo, hi, zlo := math.Inf(1), math.Inf(-1), math.Inf(1)
		for i, s := range series {
			for _, y := range s.Y {
				if !math.IsNaN(y) && !math.IsInf(y, 0) {
					lo, hi = min(lo, y), max(hi, y)
				}
			}
			if slices.Contains(named, i) {
				zlo = min(zlo, lowest(s))
			}
		}
		if math.IsInf(zlo, 0) {
			return z, cli.Usagef("--zoom %s: the runs have no finite value to zoom on", strings.Join(names, ","))
		}
		z.YMax = zlo + max(hi-lo, math.Abs(zlo)*1e-6)/10
	}
	var in, above []string // the rows' names (the legend says which have not ended)
	for _, i := range named {
		if lowest(series[i]) <= z.YMax {
			z.Series = append(z.Series, i)
			in = append(in, rowName(series[i].Name))
		} else {
			above = append(above, rowName(series[i].Name))
		}
	}
	if len(in) == 0 {
		return z, cli.Usagef("--zoom %s: every run lies above --zoom-ymax %g", strings.Join(names, ","), ymax)
	}
	z.Title = "zoom on " + strings.Join(in, ", ")
	if len(above) > 0 {
		z.Title += fmt.Sprintf(" (%s above %.3g)", strings.Join(above, ", "), z.YMax)
	}
	return z, nil
}

// checkTexts returns a usage error if the name of a run or a flag's text
// (flags holds pairs of a flag's name and value) has a character that the
// figures cannot draw, before any run is read.
func checkTexts(rs [][2]string, flags ...string) error {
	for i := 0; i+1 < len(flags); i += 2 {
		if err := checkText(flags[i], flags[i+1]); err != nil {
			return err
		}
	}
	for _, r := range rs {
		if err := checkText("the name of run "+r[0]+"="+r[1], r[0]); err != nil {
			return err
		}
	}
	return nil
}

// metricsFile is the metrics.csv of the run directory dir, or dir itself
// where it names a .csv file (the metrics kept of a run that has not
// ended, which figures sweep draws as far as they go).
func metricsFile(dir string) string {
	if strings.HasSuffix(dir, ".csv") {
		return dir
	}
	return filepath.Join(dir, "metrics.csv")
}

// scoredRuns returns the directories that have a metrics.csv, leaving out,
// with a note on stderr, those of runs that stopped before their first
// scoring (summary.json records the error); a directory with neither is an
// error.
func scoredRuns(name string, dirs []string) ([]string, error) {
	var kept []string
	for _, dir := range dirs {
		path := metricsFile(dir)
		if _, err := os.Stat(path); err == nil {
			kept = append(kept, dir)
			continue
		}
		if path == dir {
			return nil, cli.Usagef("run %s: cannot read its metrics file %s", name, dir)
		}
		sum, err := readSummary(filepath.Join(dir, "summary.json"))
		if err != nil {
			return nil, err
		}
		e, ok := sum["error"].(string)
		if !ok {
			return nil, cli.Usagef("%s has no metrics.csv and its summary.json no error: is the run still going?", dir)
		}
		fmt.Fprintf(os.Stderr, "figures: %s (%s) stopped before its first scoring and is left out: %s\n", name, dir, e)
	}
	return kept, nil
}

// metricOverRuns reads a metric from the metrics.csv of several runs with
// the same evaluation steps and returns the steps, the mean over runs and,
// for more than one run, its standard error (nil for one run).
func metricOverRuns(dirs []string, metric string) (steps, mean, se []float64, err error) {
	var ys [][]float64
	for _, dir := range dirs {
		path := metricsFile(dir)
		cols, err := readCSV(path)
		if err != nil {
			return nil, nil, nil, err
		}
		if cols[metric] == nil {
			return nil, nil, nil, noColumn(path, metric, cols)
		}
		x, err := floats(path, "step", cols["step"])
		if err != nil {
			return nil, nil, nil, err
		}
		y, err := floats(path, metric, cols[metric])
		if err != nil {
			return nil, nil, nil, err
		}
		if steps == nil {
			steps = x
		} else if len(x) != len(steps) {
			return nil, nil, nil, cli.Usagef("%s has %d evaluation points, %s %d: runs must match", path, len(x), dirs[0], len(steps))
		}
		ys = append(ys, y)
	}
	mean = make([]float64, len(steps))
	for _, y := range ys {
		for i, v := range y {
			mean[i] += v / float64(len(ys))
		}
	}
	if len(ys) > 1 {
		se = make([]float64, len(steps))
		for i := range se {
			ss := 0.0
			for _, y := range ys {
				ss += (y[i] - mean[i]) * (y[i] - mean[i])
			}
			se[i] = math.Sqrt(ss/float64(len(ys)-1)) / math.Sqrt(float64(len(ys)))
		}
	}
	return steps, mean, se, nil
}

func trajectories(args []string) error {
	fs := pflag.NewFlagSet("figures trajectories", pflag.ContinueOnError)
	task := fs.String("task", "gaussian2d", "the 2-D Gaussian task the runs sampled")
	out := fs.String("out", "", "figure path without extension (required)")
	title := fs.String("title", "", "figure title")
	usage(fs, "trajectories",
		cli.Arg{Name: "NAME=DIR", Usage: "a run: its panel's title (NAME) and the output directory of cmd/sample --trace-every 1 on a 2-D task (DIR)"})
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return cli.Usagef("--out is required")
	}
	rs, err := runs(fs.Args())
	if err != nil {
		return err
	}
	if err := checkTexts(rs, "--title", *title); err != nil {
		return err
	}
	t, err := catalog.New(*task, catalog.DefaultOptions)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	g, ok := t.Energy.(*gaussian.Gaussian)
	if !ok || g.Dim() != 2 {
		return cli.Usagef("task %q is not a 2-D Gaussian", *task)
	}
	var panels []plot.Panel
	for _, r := range rs {
		p, err := chainPath(filepath.Join(r[1], "trace.bin"), r[1])
		if err != nil {
			return err
		}
		p.Title = r[0]
		panels = append(panels, p)
	}
	// contours of the density at 1, 2 and 3 standard deviations: U − U_min = r²/2
	umin := g.Energy(g.Mean())
	contour := func(x, y float64) float64 { return g.Energy([]float64{x, y}) - umin }
	return plotError(plot.Trajectories(*out, *title, "θ₀", "θ₁", contour, []float64{0.5, 2, 4.5}, panels...))
}

// traceHint says how to make a trace that trajectories draws.
const traceHint = "trace a 2-D task with cmd/sample --trace-every 1"

// chainPath reads the positions θ_0, θ_1 of chain 0 at every draw of the
// trace stream at path (sample --trace-every writes it into the run's
// directory dir), one draw at a time.
func chainPath(path, dir string) (plot.Panel, error) {
	var p plot.Panel
	r, err := trace.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return p, cli.Usagef("%s does not exist: %s --out %s", path, traceHint, dir)
	case errors.Is(err, trace.ErrFormat):
		return p, cli.Usagef("%v", err)
	case err != nil:
		return p, err
	}
	defer r.Close()
	h := r.Header()
	if h.Dim != 2 || !slices.Equal(h.Coords, []int{0, 1}) {
		return p, cli.Usagef("%s does not hold 2-D positions (θ of %d dimensions, coordinates %v traced): %s", path, h.Dim, h.Coords, traceHint)
	}
	if r.Draws() == 0 {
		return p, cli.Usagef("%s has no draws: %s", path, traceHint)
	}
	var d trace.Draw
	for {
		switch err := r.Next(&d); {
		case err == io.EOF:
			return p, nil
		case err != nil:
			return p, err
		}
		p.X, p.Y = append(p.X, d.Theta[0]), append(p.Y, d.Theta[1]) // chain 0 comes first
	}
}

// maxPoints is the most grid points along each axis that nets draws: at
// this size nets (three figures of maxPoints² points and their CSV files of
// maxPoints² rows) takes about 2.5 s on 2 cores, a third each in
// evaluating the networks, drawing and writing the CSV files; the time and
// memory grow with the square of --points. More points would show little
// more: the PNG's plotting area is under 700 pixels wide.
const maxPoints = 600

// netsFigures is the number of figures nets draws.
const netsFigures = 3

// netsCost estimates the work, in network evaluations, and the memory, in
// bytes, of nets with n points along each axis: each figure evaluates its
// network at the n² grid points in chunks and keeps the values (8 bytes
// each) while plot.Contour draws them (plot.ContourBytes) and their CSV
// file is written row by row. The figures are drawn one after the other.
func netsCost(n int) (evals, bytes float64) {
	pts := float64(n) * float64(n)
	return netsFigures * pts, 8*pts + plot.ContourBytes(n)
}

// evalChunk is the most grid points nets evaluates in one call of a
// network.
const evalChunk = 1 << 14

// evaler is a network: coordnet.Weights.
type evaler interface{ Eval(x, out []float64) }

// netGrid evaluates a network w of inputs inputs at the points of the grid
// xs × ys, in the order of plot.Contour's grid and of gridCSV, y the outer
// loop: in(x, y, row) fills the network's input row at (x, y), and post
// maps the network's output to the plotted value. Rows are evaluated in
// chunks, which is many times faster than one by one and gives the same
// values.
func netGrid(w evaler, inputs int, in func(x, y float64, row []float64), post func(float64) float64, xs, ys []float64) []float64 {
	nx := len(xs)
	z := make([]float64, nx*len(ys))
	chunk := min(len(z), evalChunk)
	x := make([]float64, chunk*inputs)
	for lo := 0; lo < len(z); lo += chunk {
		hi := min(lo+chunk, len(z))
		for k := lo; k < hi; k++ {
			in(xs[k%nx], ys[k/nx], x[(k-lo)*inputs:(k-lo+1)*inputs])
		}
		w.Eval(x[:(hi-lo)*inputs], z[lo:hi])
		for k := lo; k < hi; k++ {
			z[k] = post(z[k])
		}
	}
	return z
}

// lookup returns the function, for plot.Contour, that gives the values z
// of a grid xs × ys at its points (row y, column x) and eval elsewhere.
func lookup(z, xs, ys []float64, eval func(x, y float64) float64) func(x, y float64) float64 {
	col, row := map[float64]int{}, map[float64]int{}
	for i, v := range xs {
		col[v] = i
	}
	for i, v := range ys {
		row[v] = i
	}
	return func(x, y float64) float64 {
		c, okc := col[x]
		r, okr := row[y]
		if !okc || !okr {
			return eval(x, y)
		}
		return z[r*len(xs)+c]
	}
}

func nets(args []string) error {
	fs := pflag.NewFlagSet("figures nets", pflag.ContinueOnError)
	meta := fs.String("meta", "", "trained sampler file (required)")
	out := fs.String("out", "", "output directory (required)")
	uRange := fs.Float64Slice("energy", []float64{0, 60}, "range of the energy input u")
	pRange := fs.Float64Slice("momentum", []float64{-4, 4}, "range of the momentum input p (before the momentum scale)")
	gRange := fs.Float64Slice("gradient", []float64{-10, 10}, "range of the gradient input (after its scale)")
	gFixed := fs.Float64("fixed-gradient", 0, "gradient input for the energy-momentum plot of f_D")
	uFixed := fs.Float64("fixed-energy", math.NaN(), "energy input for the momentum-gradient plot of f_D (default: the middle of --energy)")
	points := fs.Int("points", 60, fmt.Sprintf("grid points along each axis, both ends of each range included: 2 to %d "+
		"(time and memory grow with its square; %d takes about 3 s)", maxPoints, maxPoints))
	usage(fs, "nets")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *meta == "" || *out == "" {
		return cli.Usagef("--meta and --out are required")
	}
	if *points < 2 {
		return cli.Usagef("--points must be at least 2, got %d", *points)
	}
	if *points > maxPoints {
		evals, bytes := netsCost(*points)
		maxEvals, maxBytes := netsCost(maxPoints)
		return cli.Usagef("--points %d is too many: it would take %s network evaluations and about %s of memory; "+
			"give --points %d or fewer (%s evaluations, about %s)", *points, count(evals), byteSize(bytes),
			maxPoints, count(maxEvals), byteSize(maxBytes))
	}
	for _, r := range [][]float64{*uRange, *pRange, *gRange} {
		if len(r) != 2 || !(r[0] < r[1]) {
			return cli.Usagef("a range must be two increasing numbers, got %v", r)
		}
	}
	f, err := nnsghmc.Load(*meta)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	cfg := f
	if math.IsNaN(*uFixed) {
		*uFixed = ((*uRange)[0] + (*uRange)[1]) / 2
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	m := cfg.Inputs.MomentumScale
	dAbs := func(v float64) float64 { return cfg.DScale * math.Abs(v) }
	same := func(v float64) float64 { return v }
	u, p, g := *uRange, *pRange, *gRange
	for _, c := range []struct {
		name, title, x, y string
		w                 evaler
		inputs            int
		in                func(x, y float64, row []float64)
		post              func(float64) float64
		xr, yr            []float64
	}{
		{"f_q", "f_Q(u, p)", "u", "p", cfg.Q, 2,
			func(u, p float64, row []float64) { row[0], row[1] = u, m*p }, same, u, p},
		{"f_d_energy_momentum", fmt.Sprintf("%g·|f_D(u, p, g = %g)|", cfg.DScale, *gFixed), "u", "p", cfg.D, 3,
			func(u, p float64, row []float64) { row[0], row[1], row[2] = u, m*p, *gFixed }, dAbs, u, p},
		{"f_d_momentum_gradient", fmt.Sprintf("%g·|f_D(u = %g, p, g)|", cfg.DScale, *uFixed), "p", "g", cfg.D, 3,
			func(p, g float64, row []float64) { row[0], row[1], row[2] = *uFixed, m*p, g }, dAbs, p, g},
	} {
		xs, ys := plot.Linspace(c.xr[0], c.xr[1], *points), plot.Linspace(c.yr[0], c.yr[1], *points)
		z := netGrid(c.w, c.inputs, c.in, c.post, xs, ys)
		eval := func(x, y float64) float64 {
			return netGrid(c.w, c.inputs, c.in, c.post, []float64{x}, []float64{y})[0]
		}
		path := filepath.Join(*out, c.name)
		if err := plot.Contour(path, c.title, axisLabel[c.x], axisLabel[c.y], lookup(z, xs, ys, eval), c.xr[0], c.xr[1], c.yr[0], c.yr[1], *points); err != nil {
			return plotError(err)
		}
		if err := gridCSV(path+".csv", c.x, c.y, c.name, z, xs, ys); err != nil {
			return err
		}
	}
	return nil
}

// byteSize formats a number of bytes briefly: 512 B, 3.1 MB, 480 GB,
// 4.8e39 B.
func byteSize(b float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	v := b
	for i, u := range units {
		switch {
		case v < 9.95 && i > 0:
			return fmt.Sprintf("%.1f %s", v, u)
		case v < 999.5:
			return fmt.Sprintf("%.0f %s", v, u)
		}
		v /= 1000
	}
	return count(b) + " B"
}

// count formats a large count briefly, to two digits: 3600, 3e10, 1.2e19.
func count(v float64) string {
	s := strconv.FormatFloat(v, 'g', 2, 64)
	if mant, exp, ok := strings.Cut(s, "e+"); ok {
		return mant + "e" + strings.TrimLeft(exp, "0")
	}
	return s
}

// plotError returns err, from package plot, as a usage error if it is
// about the text of a figure (a *plot.GlyphError).
func plotError(err error) error {
	var ge *plot.GlyphError
	if errors.As(err, &ge) {
		return cli.Usagef("%v", err)
	}
	return err
}

// checkText returns a usage error if a text that the user gave for a
// figure (what says which) has a character the figures cannot draw.
func checkText(what, s string) error {
	if err := plot.CheckText(s); err != nil {
		return cli.Usagef("%s: %v", what, err)
	}
	return nil
}

// axisLabel names the networks' inputs on the axes of the nets figures.
var axisLabel = map[string]string{"u": "energy input u", "p": "momentum p", "g": "gradient input g"}

// gridCSV writes the values z of a grid xs × ys (row y, column x, as
// netGrid returns them) to path, one row per point, y the outer loop: x, y
// and z in columns named x, y and zname. Rows are written as they are
// formatted, so the file takes no memory beyond z.
func gridCSV(path, x, y, zname string, z, xs, ys []float64) error {
	return cli.WriteFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write([]string{x, y, zname}); err != nil {
			return err
		}
		row := make([]string, 3)
		for r, yv := range ys {
			row[1] = cli.FormatFloat(yv)
			for c, xv := range xs {
				row[0], row[2] = cli.FormatFloat(xv), cli.FormatFloat(z[r*len(xs)+c])
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// table writes a Markdown table to w: one row per run, the metric at each of the
// steps (from metrics.csv) and the summary values (from summary.json); if
// a run stopped, a last column gives its error. A run given as several directories
// (NAME=DIR1,DIR2,…) reports the mean ± standard error over them.
//
// Every directory must have every step among its evaluation steps and
// every summary value as a number, or the table is refused (a usage error
// naming the run and what it has), except that a run that stopped lacks
// the steps after its last evaluation and the summary of its chains: its
// cells for them are "—".
func table(w io.Writer, args []string) error {
	fs := pflag.NewFlagSet("figures table", pflag.ContinueOnError)
	metric := fs.String("metric", "kl", "metric column of metrics.csv")
	steps := fs.IntSlice("steps", nil, "steps at which to report the metric (evaluation steps of every run's metrics.csv)")
	summary := fs.StringSlice("summary", nil, "summary.json values to report (numbers in every run's summary.json)")
	digits := fs.Int("digits", 4, "significant digits")
	usage(fs, "table", runArgs...)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	rs, err := runs(fs.Args())
	if err != nil {
		return err
	}
	head := []string{"run"}
	for _, st := range *steps {
		head = append(head, fmt.Sprintf("%s at %d", *metric, st))
	}
	head = append(head, *summary...)
	format := func(v []float64) string {
		if len(v) == 0 {
			return "—"
		}
		m := 0.0
		for _, x := range v {
			m += x / float64(len(v))
		}
		if len(v) == 1 {
			return strconv.FormatFloat(m, 'g', *digits, 64)
		}
		ss := 0.0
		for _, x := range v {
			ss += (x - m) * (x - m)
		}
		se := math.Sqrt(ss/float64(len(v)-1)) / math.Sqrt(float64(len(v)))
		return strconv.FormatFloat(m, 'g', *digits, 64) + " ± " + strconv.FormatFloat(se, 'g', 2, 64)
	}
	var rows [][]string
	var notes []string
	for _, r := range rs {
		dirs := strings.Split(r[1], ",")
		atStep := make([][]float64, len(*steps))
		sums := make([][]float64, len(*summary))
		var failed []string
		for _, dir := range dirs {
			sumPath := filepath.Join(dir, "summary.json")
			sum, err := readSummary(sumPath)
			if err != nil {
				return err
			}
			e, stopped := sum["error"].(string)
			if stopped {
				failed = append(failed, e)
			}
			if len(*steps) > 0 {
				vs, err := metricAtSteps(r[0], dir, *metric, *steps, stopped)
				if err != nil {
					return err
				}
				for j, v := range vs {
					if v != nil {
						atStep[j] = append(atStep[j], *v)
					}
				}
			}
			for j, k := range *summary {
				v, ok := sum[k]
				if !ok && stopped {
					continue // a run that stopped has no summary of its chains
				}
				x, num := v.(float64)
				if !num {
					return noValue(r[0], sumPath, k, sum)
				}
				sums[j] = append(sums[j], x)
			}
		}
		row := []string{r[0]}
		for _, v := range atStep {
			row = append(row, format(v))
		}
		for _, v := range sums {
			row = append(row, format(v))
		}
		rows = append(rows, row)
		notes = append(notes, strings.Join(failed, "; "))
	}
	// a run that stopped says why in a last column, present only then
	if strings.Join(notes, "") != "" {
		head = append(head, "stopped")
		for i := range rows {
			rows[i] = append(rows[i], notes[i])
		}
	}
	fmt.Fprintln(w, "| "+strings.Join(head, " | ")+" |")
	fmt.Fprintln(w, "|"+strings.Repeat(" --- |", len(head)))
	for _, row := range rows {
		fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
	}
	return nil
}

// metricAtSteps returns the metric of the run called name in directory dir
// (one of its directories) at each of steps, from its metrics.csv: nil at
// a step after the last one evaluated if the run stopped (the summary
// records an error), and at all steps if it stopped before its first
// scoring. Any other step that is not one of its evaluation steps is a
// usage error naming the step and those it has.
func metricAtSteps(name, dir, metric string, steps []int, stopped bool) ([]*float64, error) {
	vs := make([]*float64, len(steps))
	path := filepath.Join(dir, "metrics.csv")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if stopped {
			return vs, nil
		}
		return nil, cli.Usagef("run %s: %s has no metrics.csv for --steps and its summary.json no error: "+
			"is the run still going? (without --steps the table shows its summary)", name, dir)
	}
	cols, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	if cols[metric] == nil {
		return nil, noColumn(path, metric, cols)
	}
	at := map[int]int{} // row of each step
	var have []int
	for i, st := range cols["step"] {
		n, err := strconv.Atoi(st)
		if err != nil {
			return nil, cli.Usagef("%s: column step row %d: %q is not a step", path, i+1, st)
		}
		at[n] = i
		have = append(have, n)
	}
	for j, want := range steps {
		i, ok := at[want]
		switch {
		case ok:
			v, err := strconv.ParseFloat(cols[metric][i], 64)
			if err != nil {
				return nil, cli.Usagef("%s: column %s row %d: %v", path, metric, i+1, err)
			}
			vs[j] = &v
		case stopped && (len(have) == 0 || want > slices.Max(have)):
			// stopped before the step: no value
		default:
			return nil, cli.Usagef("run %s: %s has no evaluation at step %d; its steps are %s: give --steps some of them",
				name, path, want, stepList(have))
		}
	}
	return vs, nil
}

// stepList lists steps, abbreviated when there are more than eight to the
// first three and the last two with their count: "10, 20, 30, …, 990,
// 1000 (100 steps)".
func stepList(steps []int) string {
	var s []string
	for _, st := range steps {
		s = append(s, strconv.Itoa(st))
	}
	if len(s) <= 8 {
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("%s, …, %s (%d steps)", strings.Join(s[:3], ", "), strings.Join(s[len(s)-2:], ", "), len(s))
}

// noValue is the usage error for a --summary key that the summary.json at
// path of the run called name lacks or has as other than a number: it
// names the summary's numeric keys.
func noValue(name, path, key string, sum map[string]any) error {
	what := "no value " + strconv.Quote(key)
	if v, ok := sum[key]; ok {
		kind := "an object"
		switch v := v.(type) {
		case nil:
			kind = "null"
		case bool:
			kind = strconv.FormatBool(v)
		case string:
			kind = "a string"
		case []any:
			kind = "a list"
		}
		what = fmt.Sprintf("%q as %s, not a number", key, kind)
	}
	var keys []string
	for k, v := range sum {
		if _, ok := v.(float64); ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return cli.Usagef("run %s: %s has %s, and no numeric values: leave out --summary %s", name, path, what, key)
	}
	sort.Strings(keys)
	return cli.Usagef("run %s: %s has %s; its numeric values are %s: give --summary some of them",
		name, path, what, strings.Join(keys, ", "))
}

func readSummary(path string) (map[string]any, error) {
	var m map[string]any
	if err := readJSON(path, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// readJSON decodes the JSON file at path into v; a file that cannot be
// read or decoded is a usage error naming it.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return cli.Usagef("cannot read %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return cli.Usagef("%s: %v", path, err)
	}
	return nil
}
