package diag

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// The rank-normalised diagnostics of Vehtari, Gelman, Simpson, Carpenter &
// Bürkner (2021), "Rank-normalization, folding, and localization: an
// improved R̂ for assessing convergence of MCMC", Bayesian Analysis 16(2),
// as the posterior R package (rhat, ess_bulk, ess_tail), ArviZ and Stan
// compute them. Each chain is split into halves as in SplitRhat,
// and the draws of all half-chains are replaced by their normal scores
// (see normalScores). Then
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
func RankRhat(chains [][]float64) (float64, error) {
	return checked("RankRhat", chains, func(chains [][]float64) (float64, error) {
		bulk, tail, err := rankRhats(chains)
		return math.Max(bulk, tail), err
	})
}

// rankRhats returns the bulk and the tail R̂ of RankRhat for valid chains.
func rankRhats(chains [][]float64) (bulk, tail float64, err error) {
	bulk, err = rhatOf(normalScores(splitChains(chains)))
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	median := quantile7(sortedDraws(chains), 0.5)
	folded := make([][]float64, len(chains))
	for c, x := range chains {
		folded[c] = make([]float64, len(x))
		for i, v := range x {
			folded[c][i] = math.Abs(v - median)
		}
	}
	tail, err = rhatOf(normalScores(splitChains(folded)))
	if errors.Is(err, errIdentical) {
		err = fmt.Errorf("the folded draws |x − median| are all identical (median %g), so the tail R̂ is undefined", median)
	}
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	return bulk, tail, nil
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
		return essOf(normalScores(splitChains(chains)))
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
func TailESS(chains [][]float64) (float64, error) { return checked("TailESS", chains, tailESS) }

// tailESS is TailESS for valid chains.
func tailESS(chains [][]float64) (float64, error) {
	sorted := sortedDraws(chains)
	if sorted[0] == sorted[len(sorted)-1] {
		return math.NaN(), errIdentical
	}
	halves := splitChains(chains)
	tail := math.Inf(1)
	for _, p := range [2]float64{0.05, 0.95} {
		q := quantile7(sorted, p)
		ind := make([][]float64, len(halves))
		for j, x := range halves {
			ind[j] = make([]float64, len(x))
			for i, v := range x {
				if v <= q {
					ind[j][i] = 1
				}
			}
		}
		ess, err := essOf(ind)
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

// normalScores returns the normal scores of the draws of chains, ranked
// all together: draw x becomes Φ⁻¹((r − 3/8)/(S + 1/4)), with S the number
// of draws and r the rank of x among them, 1 for the smallest, ties given
// the average of their ranks. The result has the shape of chains.
func normalScores(chains [][]float64) [][]float64 {
	type draw struct {
		v float64
		k int // position in the flattened draws
	}
	var total int
	for _, x := range chains {
		total += len(x)
	}
	draws := make([]draw, 0, total)
	for _, x := range chains {
		for _, v := range x {
			draws = append(draws, draw{v, len(draws)})
		}
	}
	slices.SortFunc(draws, func(a, b draw) int { return cmp.Compare(a.v, b.v) })
	flat := make([]float64, total)
	s := float64(total)
	for lo := 0; lo < total; {
		hi := lo + 1
		for hi < total && draws[hi].v == draws[lo].v {
			hi++
		}
		// Sorted positions lo … hi−1 hold ranks lo+1 … hi; their average
		// is (lo+1+hi)/2, exact in float64.
		r := float64(lo+1+hi) / 2
		z := distuv.UnitNormal.Quantile((r - 3.0/8) / (s + 1.0/4))
		for _, d := range draws[lo:hi] {
			flat[d.k] = z
		}
		lo = hi
	}
	out := make([][]float64, len(chains))
	off := 0
	for c, x := range chains {
		out[c] = flat[off : off+len(x) : off+len(x)]
		off += len(x)
	}
	return out
}

// sortedDraws returns all draws of chains in one sorted slice.
func sortedDraws(chains [][]float64) []float64 {
	var all []float64
	for _, x := range chains {
		all = append(all, x...)
	}
	slices.Sort(all)
	return all
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
