package diag

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SummaryRow holds the summary of one coordinate of a run: the columns of
// ArviZ's az.summary by default (stat_focus="mean"), plus the equal-tailed
// interval and the ESS of the mean, named as ArviZ names them.
// A value that is undefined for the draws is NaN (see Summary).
type SummaryRow struct {
	Mean float64 // mean of all K·T draws
	SD   float64 // standard deviation of all K·T draws, divisor K·T − 1

	// HDI3 and HDI97 bound the 94 % highest-density interval, ArviZ's
	// hdi_3% and hdi_97%: the shortest interval between order statistics
	// x₍ⱼ₎ and x₍ⱼ₊ₘ₎ with m = ⌊0.94·K·T⌋, the first (lowest) one if
	// several are shortest, as ArviZ's _hdi computes it (multimodal=False).
	HDI3, HDI97 float64
	// ETI3 and ETI97 are the 3 % and 97 % quantiles of all draws, the
	// equal-tailed 94 % interval, ArviZ's eti_3% and eti_97%, by linear
	// interpolation between order statistics (numpy's default, R's type 7).
	ETI3, ETI97 float64

	MCSEMean float64 // Monte Carlo standard error of Mean: SD/√ESSMean
	MCSESD   float64 // Monte Carlo standard error of SD (see Summary)

	ESSMean float64 // ESS of the split raw draws (ArviZ's ess_mean)
	BulkESS float64 // as BulkESS returns it (ArviZ's ess_bulk)
	TailESS float64 // as TailESS returns it (ArviZ's ess_tail)
	Rhat    float64 // as RankRhat returns it (ArviZ's r_hat)
}

// Summary returns the summary of each coordinate of d, row i for
// coordinate i, computed as ArviZ's az.summary computes its columns on
// draws of shape (chain, draw):
//
//   - Mean and SD: the mean and the standard deviation (divisor K·T − 1,
//     as ArviZ's ddof=1) of all K·T draws pooled.
//   - Rhat, BulkESS and TailESS: the rank-normalised split R̂, bulk-ESS
//     and tail-ESS of Vehtari, Gelman, Simpson, Carpenter & Bürkner
//     (2021), as RankRhat, BulkESS and TailESS return them, bit for bit
//     (see those for where ArviZ, posterior and Stan differ in detail).
//   - ESSMean: ArviZ's and posterior's ess_mean, the effective sample size
//     by ESS of the raw (not rank-normalised) draws split into 2K
//     half-chains as in SplitRhat. It is not ESS, which does not split
//     the chains.
//   - MCSEMean = SD/√ESSMean, ArviZ's mcse_mean. MCSE uses the ESS of the
//     unsplit chains instead.
//   - MCSESD, ArviZ's mcse_sd, as ArviZ computes it since it follows the
//     posterior package's mcse_sd: with the squared deviations
//     y = (x − Mean)², their ess_mean E_y (split raw ESS of y as above),
//     and the averages ȳ and ȳ₂ of y and y² over all draws,
//     MCSESD = √((ȳ₂ − ȳ²)/E_y / ȳ / 4), the variance of the variance by
//     Kenney & Keeping (1951) carried to the standard deviation by a
//     first-order Taylor expansion. (Older ArviZ releases used
//     SD·√(e·(1 − 1/E)^(E−1) − 1) with E the ESS of the squared draws.)
//   - HDI3, HDI97 and ETI3, ETI97: the 94 % highest-density and
//     equal-tailed intervals of all draws (see SummaryRow).
//
// Every diagnostic agrees with ArviZ up to rounding, except that ArviZ's
// ESS, used by all its ESS columns, differs from ESS in the rare case
// documented at BulkESS, and that ArviZ returns K·T for the ESS of
// constant draws where ESS fails (see below).
//
// Each coordinate's draws are sorted once, for all of its order
// statistics, normal scores, folded draws and quantiles (see
// RankDiagnostics). The coordinates are summarised in parallel, on up to
// GOMAXPROCS goroutines (Draws.ForEachCoordinate); the results do not
// depend on their number. Each goroutine needs about 90·K·T bytes of work
// space besides the draws.
//
// Summary returns nil and an error if d is nil or has fewer than 4 draws
// per chain. Otherwise it returns all D rows, and, if any value is
// undefined, also an error that counts the undefined values and names the
// first (in the order of the coordinates and of SummaryRow's fields) and
// why, for example "diag: Summary: 5 of 24 values are undefined (NaN);
// the first: coordinate 1, mcse_mean: all draws are identical". Undefined
// values are NaN. A coordinate with a NaN or ±Inf draw is NaN throughout;
// one whose draws are all identical has its Mean, SD = 0 and interval
// bounds, and NaN for the rest. Otherwise values are undefined where the
// functions named above fail (for example TailESS, if at least about 5 %
// of the draws tie with the largest), and MCSESD is undefined where the
// squared deviations are all identical (draws taking two values
// symmetric about their mean; ArviZ returns 0 there).
func Summary(d *Draws) ([]SummaryRow, error) {
	if d == nil {
		return nil, errors.New("diag: Summary: nil draws")
	}
	_, t, dim := d.Dims()
	if t < 4 {
		return nil, fmt.Errorf("diag: Summary: chains have %d draws, need at least 4", t)
	}
	rows := make([]SummaryRow, dim)
	problems := make([]error, dim) // the first problem of each coordinate
	nans := make([]int, dim)       // and how many values are undefined
	_ = forEachCoordinate(d, func() *summaryWork { return &summaryWork{} },
		func(i int, chains [][]float64, w *summaryWork) error {
			rows[i], nans[i], problems[i] = w.summarise(chains)
			return nil
		})
	var first error
	var total int
	for i, err := range problems {
		if err != nil && first == nil {
			first = fmt.Errorf("coordinate %d, %w", i, err)
		}
		total += nans[i]
	}
	if first != nil {
		return rows, fmt.Errorf("diag: Summary: %d of %d values are undefined (NaN); the first: %w", total, summaryCount*dim, first)
	}
	return rows, nil
}

// summaryCount is the number of values in a SummaryRow.
const summaryCount = 12

// summaryWork is the work space of Summary for one goroutine.
type summaryWork struct {
	rank rankWork
	sq   [][]float64 // the squared deviations, in the layout of the chains
}

// summarise returns the summary of one coordinate, the number of undefined
// values in it, and the first problem met, naming its column, or nil.
func (w *summaryWork) summarise(chains [][]float64) (row SummaryRow, nans int, problem error) {
	nan := math.NaN()
	if err := checkChains(chains, 4); err != nil {
		return SummaryRow{nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan}, summaryCount, err
	}
	set := func(name string, v float64, err error) float64 {
		if err != nil {
			nans++
			if problem == nil {
				problem = fmt.Errorf("%s: %w", name, err)
			}
			return nan
		}
		return v
	}

	row.Mean, row.SD = pooledMeanSD(chains)

	ess, essErr := essOf(splitChains(chains))
	row.MCSEMean = set("mcse_mean", row.SD/math.Sqrt(ess), essErr)

	// mcse_sd, from the squared deviations y = (x − mean)².
	if len(w.sq) != len(chains) {
		w.sq = make([][]float64, len(chains))
	}
	var ySum, y2Sum float64
	for c, x := range chains {
		w.sq[c] = resize(w.sq[c], len(x))
		for j, v := range x {
			y := (v - row.Mean) * (v - row.Mean)
			w.sq[c][j] = y
			ySum += y
			y2Sum += y * y
		}
	}
	n := float64(len(chains) * len(chains[0]))
	yMean, y2Mean := ySum/n, y2Sum/n
	essY, err := essOf(splitChains(w.sq))
	if errors.Is(err, errIdentical) {
		err = errors.New("the squared deviations from the mean are all identical, so their ESS is undefined")
	}
	row.MCSESD = set("mcse_sd", math.Sqrt((y2Mean-yMean*yMean)/essY/yMean/4), err)
	row.ESSMean = set("ess_mean", ess, essErr)

	w.rank.load(chains)
	sorted := w.rank.sorted
	row.HDI3, row.HDI97 = hdi(sorted, 0.94)
	row.ETI3, row.ETI97 = quantile7(sorted, 0.03), quantile7(sorted, 0.97)
	st, errs := w.rank.stats()
	row.BulkESS = set("ess_bulk", st.BulkESS, errs[1])
	row.TailESS = set("ess_tail", st.TailESS, errs[2])
	row.Rhat = set("r_hat", st.Rhat, errs[0])
	return row, nans, problem
}

// pooledMeanSD returns the mean and the standard deviation, with divisor
// N − 1, of the N draws of all chains pooled, by the two-pass formula.
func pooledMeanSD(chains [][]float64) (mean, sd float64) {
	var total float64
	var count int
	for _, c := range chains {
		for _, v := range c {
			total += v
		}
		count += len(c)
	}
	grand := total / float64(count)
	var ss float64
	for _, c := range chains {
		for _, v := range c {
			ss += (v - grand) * (v - grand)
		}
	}
	return grand, math.Sqrt(ss / float64(count-1))
}

// hdi returns the bounds of the highest-density interval of probability
// prob of the sorted sample x as ArviZ's _hdi computes it: of the
// intervals [x[j], x[j+m]], m = ⌊prob·len(x)⌋, the shortest, the first if
// several are. len(x) must exceed m.
func hdi(x []float64, prob float64) (lo, hi float64) {
	m := int(math.Floor(prob * float64(len(x))))
	best, width := 0, math.Inf(1)
	for j := 0; j+m < len(x); j++ {
		if w := x[j+m] - x[j]; w < width {
			best, width = j, w
		}
	}
	return x[best], x[best+m]
}

// summaryColumns are the columns of WriteSummary (those marked table) and
// WriteSummaryCSV (all), named as ArviZ names them, with the precision of
// the table: significant digits for 'g', decimals for 'f'.
var summaryColumns = []struct {
	name   string
	value  func(*SummaryRow) float64
	table  bool
	format byte
	prec   int
}{
	{"mean", func(r *SummaryRow) float64 { return r.Mean }, true, 'g', 4},
	{"sd", func(r *SummaryRow) float64 { return r.SD }, true, 'g', 4},
	{"hdi_3%", func(r *SummaryRow) float64 { return r.HDI3 }, true, 'g', 4},
	{"hdi_97%", func(r *SummaryRow) float64 { return r.HDI97 }, true, 'g', 4},
	{"eti_3%", func(r *SummaryRow) float64 { return r.ETI3 }, true, 'g', 4},
	{"eti_97%", func(r *SummaryRow) float64 { return r.ETI97 }, true, 'g', 4},
	{"mcse_mean", func(r *SummaryRow) float64 { return r.MCSEMean }, true, 'g', 2},
	{"mcse_sd", func(r *SummaryRow) float64 { return r.MCSESD }, true, 'g', 2},
	{"ess_mean", func(r *SummaryRow) float64 { return r.ESSMean }, false, 'f', 0},
	{"ess_bulk", func(r *SummaryRow) float64 { return r.BulkESS }, true, 'f', 0},
	{"ess_tail", func(r *SummaryRow) float64 { return r.TailESS }, true, 'f', 0},
	{"r_hat", func(r *SummaryRow) float64 { return r.Rhat }, true, 'f', 3},
}

// summaryNames returns the names of the rows: names, or θ[i] for row i if
// names is nil.
func summaryNames(fn string, rows []SummaryRow, names []string) ([]string, error) {
	if names == nil {
		names = make([]string, len(rows))
		for i := range names {
			names[i] = fmt.Sprintf("θ[%d]", i)
		}
	}
	if len(names) != len(rows) {
		return nil, fmt.Errorf("diag: %s: %d names for %d rows", fn, len(names), len(rows))
	}
	return names, nil
}

// WriteSummary writes rows, as Summary returns them, to w as a text table
// aligned in columns, in the manner of az.summary's printed DataFrame: a
// header line, then one line per coordinate, named names[i], or θ[i] if
// names is nil. The columns are mean, sd, hdi_3%, hdi_97%, eti_3%,
// eti_97%, mcse_mean, mcse_sd, ess_bulk, ess_tail and r_hat (ess_mean is
// in the CSV only). Values are rounded for reading: 4 significant digits
// (2 for the standard errors), ESS to integers and R̂ to 3 decimals, so
// that 1.01, the usual warning threshold, shows; WriteSummaryCSV keeps
// every digit. Undefined values print as NaN. It returns an error if names
// is neither nil nor of the length of rows, or writing fails.
func WriteSummary(w io.Writer, rows []SummaryRow, names []string) error {
	names, err := summaryNames("WriteSummary", rows, names)
	if err != nil {
		return err
	}
	cells := make([][]string, 0, len(rows)+1)
	header := []string{""}
	for _, col := range summaryColumns {
		if col.table {
			header = append(header, col.name)
		}
	}
	cells = append(cells, header)
	for i := range rows {
		line := []string{names[i]}
		for _, col := range summaryColumns {
			if col.table {
				line = append(line, strconv.FormatFloat(col.value(&rows[i]), col.format, col.prec, 64))
			}
		}
		cells = append(cells, line)
	}
	width := make([]int, len(header))
	for _, line := range cells {
		for j, c := range line {
			width[j] = max(width[j], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, line := range cells {
		for j, c := range line {
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(c))
			if j == 0 {
				b.WriteString(c + pad) // names left-aligned
			} else {
				b.WriteString("  " + pad + c) // numbers right-aligned
			}
		}
		b.WriteByte('\n')
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// WriteSummaryCSV writes rows, as Summary returns them, to w as CSV
// (encoding/csv): a header "name,mean,sd,hdi_3%,hdi_97%,eti_3%,eti_97%,
// mcse_mean,mcse_sd,ess_mean,ess_bulk,ess_tail,r_hat", then one record
// per coordinate, named names[i], or θ[i] if names is nil. Values are
// written with the fewest digits that read back to the same float64
// (strconv 'g', −1), undefined ones as NaN. It returns an error if names
// is neither nil nor of the length of rows, or writing fails.
func WriteSummaryCSV(w io.Writer, rows []SummaryRow, names []string) error {
	names, err := summaryNames("WriteSummaryCSV", rows, names)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	record := []string{"name"}
	for _, col := range summaryColumns {
		record = append(record, col.name)
	}
	if err := cw.Write(record); err != nil {
		return err
	}
	for i := range rows {
		record = append(record[:0], names[i])
		for _, col := range summaryColumns {
			record = append(record, strconv.FormatFloat(col.value(&rows[i]), 'g', -1, 64))
		}
		if err := cw.Write(record); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
