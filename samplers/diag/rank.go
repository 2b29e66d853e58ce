package diag

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// The rank-normalised diagnostics of Vehtari, Gelman, Simpson, Carpenter &
// Bürkner (2021), "Rank-normalization, folding, and localization: an
// improved R̂ for assessing convergence of MCMC", Bayesian Analysis 16(2),
// as the posterior R package (rhat, ess_bulk, ess_tail), ArviZ and Stan
// compute them. Each chain is split into halves as in SplitRhat,
// and the draws of all half-chains are replaced by their normal scores
// (see RankRhat). Then
//
//	RankRhat = max(R̂ of the normal scores, R̂ of the normal scores of |x − median|),
//	BulkESS  = ESS of the normal scores,
//	TailESS  = min(ESS of 1{x ≤ q₀.₀₅}, ESS of 1{x ≤ q₀.₉₅}),
//
// all on the half-chains, with R̂ the non-split R̂ of SplitRhat and ESS the
// estimator of ESS (Geyer's initial monotone sequence on the multi-chain
// autocorrelations).

// RankRhat returns the rank-normalised split R̂ of Vehtari et al. (2021)
// for one scalar quantity sampled by m chains of n draws each;
// chains[c][i] is draw i of chain c. All chains must have the same length
// n ≥ 4. A single chain is allowed (its halves are compared), as in the
// posterior R package; ArviZ asks for two.
//
// Each chain is split into its first and last ⌊n/2⌋ draws as in SplitRhat
// (the middle draw of odd n is dropped). The draws of the 2m half-chains,
// S in all, are replaced by their normal scores
//
//	z = Φ⁻¹((r − 3/8)/(S + 1/4)),
//
// with r the draw's rank among all S draws, ties given their average rank
// (Blom's offsets, as posterior's z_scale and ArviZ's _z_scale use). The
// bulk R̂ is the R̂ of SplitRhat's formula on these scores; the tail R̂ is
// the same on the scores of the folded draws |x − median|, with the median
// taken over all mn draws (posterior's fold_draws; ArviZ and Stan take it
// over the split draws, which differs only for odd n). RankRhat returns
// the larger of the two. Rank normalisation makes R̂ well defined for
// heavy-tailed draws with infinite variance, and folding catches chains
// that agree in location but not in scale, which SplitRhat misses.
//
// RankRhat returns +Inf if every half-chain is constant but they differ,
// and NaN and an error if there are no chains, the lengths differ or are
// below 4, any draw is NaN or ±Inf, all (split) draws are identical, or
// the folded draws are all identical (every draw is the median ± one
// value), where the tail R̂ is undefined (posterior returns NA there).
//
// To compute RankRhat, BulkESS and TailESS of the same draws, call
// RankDiagnostics, which sorts the draws once for all three.
func RankRhat(chains [][]float64) (float64, error) {
	return checked("RankRhat", chains, func(chains [][]float64) (float64, error) {
		var w rankWork
		w.load(chains)
		bulk, tail, err := w.rhats()
		return math.Max(bulk, tail), err
	})
}

// BulkESS returns the bulk effective sample size of Vehtari et al. (2021)
// for one scalar quantity sampled by m chains of n draws each;
// chains[c][i] is draw i of chain c. All chains must have the same length
// n ≥ 4.
//
// BulkESS is ESS, the same code, applied to the normal scores of the 2m
// half-chains of RankRhat: it measures how well the bulk of the
// distribution is explored, is invariant to monotone transformations of
// the draws, and is well defined when the variance is not. For draws that
// are nearly normal it is close to ESS of the split chains.
//
// ESS follows Stan to the letter, including its treatment of the last
// pair when the positive sequence is still positive at the lag limit (see
// ESS). posterior and ArviZ differ from it there only: they count the last
// even autocorrelation ρ̂_{2K} once where Stan counts it three times. That
// happens only when the combined autocorrelations stay positive up to lag
// n/2 − 3 or so, in very short, extremely autocorrelated or unconverged
// chains, whose ESS is small either way.
//
// BulkESS returns NaN and an error if there are no chains, the lengths
// differ or are below 4, any draw is NaN or ±Inf, or all (split) draws
// are identical.
func BulkESS(chains [][]float64) (float64, error) {
	return checked("BulkESS", chains, func(chains [][]float64) (float64, error) {
		var w rankWork
		w.load(chains)
		return essOf(w.bulkScores())
	})
}

// TailESS returns the tail effective sample size of Vehtari et al. (2021)
// for one scalar quantity sampled by m chains of n draws each;
// chains[c][i] is draw i of chain c. All chains must have the same length
// n ≥ 4.
//
// TailESS is the smaller of the effective sample sizes, by ESS on the 2m
// half-chains of RankRhat, of the indicators 1{x ≤ q₀.₀₅} and
// 1{x ≤ q₀.₉₅}, with q_p the p-quantile of all mn draws by linear
// interpolation between order statistics (R's default type 7, numpy's
// default), as posterior's ess_tail and ArviZ compute it (Stan takes the
// quantiles of the split draws and 1{x ≥ q₀.₉₅}, which differs only for
// odd n or ties at q₀.₉₅). It measures how well the 5% and 95% quantiles,
// and so the tails, are estimated.
//
// TailESS returns NaN and an error if there are no chains, the lengths
// differ or are below 4, any draw is NaN or ±Inf, or an indicator is
// constant over the split draws, which takes ties: at least about 5% of
// the draws equal to the largest (posterior returns NA there).
func TailESS(chains [][]float64) (float64, error) {
	return checked("TailESS", chains, func(chains [][]float64) (float64, error) {
		var w rankWork
		w.load(chains)
		return w.tailESS()
	})
}

// RankStats holds the rank-normalised diagnostics of one scalar quantity
// (see RankDiagnostics).
type RankStats struct {
	Rhat    float64 // as RankRhat returns it
	BulkESS float64 // as BulkESS returns it
	TailESS float64 // as TailESS returns it
}

// RankDiagnostics returns RankRhat, BulkESS and TailESS of chains,
// chains[c][i] draw i of chain c, bit for bit as those functions return
// them, in about half the time of the three calls: the draws are sorted,
// and their normal scores computed, once for all three, where each of the
// functions sorts them again (the FFTs of the three ESS computations,
// which then take most of the time, are the same).
//
// It returns an error if any of the three fails, naming each that failed
// with its problem as that function reports it, for example
// "diag: RankDiagnostics: R̂: problem; tail-ESS: problem" (errors.Is
// finds each problem); a diagnostic that failed is NaN, the others are
// set. Invalid input (no chains, lengths that differ or are below 4, NaN
// or ±Inf) makes all three NaN, with the one problem.
func RankDiagnostics(chains [][]float64) (RankStats, error) {
	nan := math.NaN()
	if err := checkChains(chains, 4); err != nil {
		_, err = fail("RankDiagnostics", err)
		return RankStats{nan, nan, nan}, err
	}
	var w rankWork
	w.load(chains)
	st, problems := w.stats()
	var format []string
	var args []any
	for j, what := range [3]string{"R̂", "bulk-ESS", "tail-ESS"} {
		if problems[j] != nil {
			format = append(format, what+": %w")
			args = append(args, problems[j])
		}
	}
	if args == nil {
		return st, nil
	}
	return st, fmt.Errorf("diag: RankDiagnostics: "+strings.Join(format, "; "), args...)
}

// rankWork holds one scalar quantity's draws as the rank-normalised
// diagnostics use them, computed once and shared by R̂, bulk- and
// tail-ESS: the split draws and their order, all draws sorted, and the
// normal scores of the split draws. Its buffers are reused by the next
// load, so one rankWork serves the coordinates of a Summary in turn.
//
// The draws are ranked by one sort of the S split draws. Their normal
// scores are computed from that order, and so are the median and the
// quantiles of all mn draws (for odd n after merging in the m middle
// draws) and the order of the folded draws |x − median|: below the median
// the folded values fall as x rises and above it they rise, since
// floating-point subtraction is monotone, so the two runs of the sorted
// draws merge into the folded order in O(S). The results equal those of
// separate sorts: ranks, and so scores, depend on the values only.
type rankWork struct {
	m, h   int       // chains; draws per half-chain
	split  []float64 // the S = 2mh split draws, half-chain j at [j·h, (j+1)·h), as splitChains orders them
	order  []int     // split[order[0]] ≤ split[order[1]] ≤ …
	sorted []float64 // all mn draws, ascending
	scores []float64 // normal scores of split, same layout, once scored
	scored bool
	buf    []float64   // folded draws and their scores, then tail indicators
	order2 []int       // sort scratch, then the order of the folded draws
	keys   [2][]uint64 // sort scratch
	mid    []float64   // the middle draws of odd n
}

// load prepares w for chains: m ≥ 1 valid chains of equal length n ≥ 4.
func (w *rankWork) load(chains [][]float64) {
	m, n := len(chains), len(chains[0])
	h := n / 2
	s := 2 * m * h
	w.m, w.h, w.scored = m, h, false
	w.split = resize(w.split, s)
	for c, x := range chains {
		copy(w.split[2*c*h:], x[:h])
		copy(w.split[(2*c+1)*h:], x[n-h:])
	}
	w.order = resizeInts(w.order, s)
	w.order2 = resizeInts(w.order2, s)
	sortOrder(w.split, w.order, w.order2, &w.keys)
	w.sorted = resize(w.sorted, m*n)
	if n%2 == 0 {
		for j, p := range w.order {
			w.sorted[j] = w.split[p]
		}
		return
	}
	w.mid = w.mid[:0]
	for _, x := range chains {
		w.mid = append(w.mid, x[h])
	}
	slices.Sort(w.mid)
	j, k := 0, 0
	for out := range w.sorted {
		if k == len(w.mid) || (j < s && w.split[w.order[j]] <= w.mid[k]) {
			w.sorted[out] = w.split[w.order[j]]
			j++
		} else {
			w.sorted[out] = w.mid[k]
			k++
		}
	}
}

// halves returns the 2m half-chains of flat, which is in the layout of
// w.split.
func (w *rankWork) halves(flat []float64) [][]float64 {
	out := make([][]float64, 2*w.m)
	for j := range out {
		out[j] = flat[j*w.h : (j+1)*w.h : (j+1)*w.h]
	}
	return out
}

// bulkScores returns the normal scores of the split draws, as half-chains.
func (w *rankWork) bulkScores() [][]float64 {
	if !w.scored {
		w.scores = resize(w.scores, len(w.split))
		normalScores(w.split, w.order, w.scores)
		w.scored = true
	}
	return w.halves(w.scores)
}

// rhats returns the bulk and the tail R̂ of RankRhat.
func (w *rankWork) rhats() (bulk, tail float64, err error) {
	bulk, err = rhatOf(w.bulkScores())
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	median := quantile7(w.sorted, 0.5)
	w.buf = resize(w.buf, len(w.split))
	foldOrder(w.split, w.order, median, w.buf, w.order2)
	normalScores(w.buf, w.order2, w.buf)
	tail, err = rhatOf(w.halves(w.buf))
	if errors.Is(err, errIdentical) {
		err = fmt.Errorf("the folded draws |x − median| are all identical (median %g), so the tail R̂ is undefined", median)
	}
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	return bulk, tail, nil
}

// tailESS returns TailESS.
func (w *rankWork) tailESS() (float64, error) {
	if w.sorted[0] == w.sorted[len(w.sorted)-1] {
		return math.NaN(), errIdentical
	}
	w.buf = resize(w.buf, len(w.split))
	tail := math.Inf(1)
	for _, p := range [2]float64{0.05, 0.95} {
		q := quantile7(w.sorted, p)
		for i, v := range w.split {
			w.buf[i] = 0
			if v <= q {
				w.buf[i] = 1
			}
		}
		ess, err := essOf(w.halves(w.buf))
		if errors.Is(err, errIdentical) {
			return math.NaN(), fmt.Errorf("the indicator of the draws ≤ the %g quantile %g is constant (ties), so the tail ESS is undefined", p, q)
		}
		if err != nil {
			return math.NaN(), err
		}
		tail = math.Min(tail, ess)
	}
	return tail, nil
}

// stats returns RankDiagnostics' values and, for each that failed, NaN
// and its problem, in the order R̂, bulk-ESS, tail-ESS.
func (w *rankWork) stats() (RankStats, [3]error) {
	var errs [3]error
	nanIf := func(v float64, err error) float64 {
		if err != nil {
			return math.NaN()
		}
		return v
	}
	bulk, tail, err := w.rhats()
	errs[0] = err
	bulkESS, err := essOf(w.bulkScores())
	errs[1] = err
	tailESS, err := w.tailESS()
	errs[2] = err
	return RankStats{nanIf(math.Max(bulk, tail), errs[0]), nanIf(bulkESS, errs[1]), nanIf(tailESS, errs[2])}, errs
}

// normalScores sets out[p] to the normal score of x[p] among all of x,
// Φ⁻¹((r − 3/8)/(S + 1/4)), with S = len(x) and r the rank of x[p], 1 for
// the smallest, ties given the average of their ranks. order lists the
// positions of x in ascending order of value (ties in any order). out may
// be x itself.
func normalScores(x []float64, order []int, out []float64) {
	total := len(order)
	s := float64(total)
	for lo := 0; lo < total; {
		v := x[order[lo]]
		hi := lo + 1
		for hi < total && x[order[hi]] == v {
			hi++
		}
		// Sorted positions lo … hi−1 hold ranks lo+1 … hi; their average
		// is (lo+1+hi)/2, exact in float64.
		r := float64(lo+1+hi) / 2
		z := distuv.UnitNormal.Quantile((r - 3.0/8) / (s + 1.0/4))
		for _, p := range order[lo:hi] {
			out[p] = z
		}
		lo = hi
	}
}

// foldOrder sets folded[p] = |x[p] − median| and out to the positions of
// folded in ascending order, given order, the positions of x in ascending
// order. The draws below the median, walked down from it, and those at or
// above it, walked up, each give ascending folded values (floating-point
// subtraction is monotone, and v − median = −(median − v) exactly), so out
// is their merge.
func foldOrder(x []float64, order []int, median float64, folded []float64, out []int) {
	for p, v := range x {
		folded[p] = math.Abs(v - median)
	}
	up, _ := slices.BinarySearchFunc(order, median, func(p int, m float64) int { return cmp.Compare(x[p], m) })
	down := up - 1
	for k := range out {
		if up == len(order) || (down >= 0 && folded[order[down]] <= folded[order[up]]) {
			out[k] = order[down]
			down--
		} else {
			out[k] = order[up]
			up++
		}
	}
}

// quantile7 returns the p-quantile of the sorted sample x by R's type 7
// (numpy's default "linear"): with h = (len(x)−1)·p, x[⌊h⌋] + (h − ⌊h⌋)·
// (x[⌊h⌋+1] − x[⌊h⌋]). For p = 1/2 it is the usual median. gonum's
// stat.Quantile offers types 1 (Empirical) and 4 (LinInterp) only.
func quantile7(x []float64, p float64) float64 {
	h := float64(len(x)-1) * p
	lo := int(h)
	if lo >= len(x)-1 {
		return x[len(x)-1]
	}
	return x[lo] + (h-float64(lo))*(x[lo+1]-x[lo])
}
