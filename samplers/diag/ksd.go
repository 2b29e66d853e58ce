package diag

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// KSDSettings are the parameters of the inverse multiquadric (IMQ) kernel
// of KSD, k(x, y) = (C² + ‖x − y‖²)^Beta.
type KSDSettings struct {
	// C > 0 sets the kernel's length scale: k falls to 2^Beta of its
	// peak at ‖x − y‖ = C.
	C float64
	// Beta < 0 is the kernel's power. Gorham & Mackey (2017) show that
	// the KSD with Beta in (−1, 0) detects non-convergence to targets
	// with distantly dissipative scores (such as Gaussians).
	Beta float64
}

// DefaultKSDSettings returns C = 1 and Beta = −1/2, the kernel of Gorham &
// Mackey (2017) and of SGMCMCJax's imq_KSD.
func DefaultKSDSettings() KSDSettings { return KSDSettings{C: 1, Beta: -0.5} }

// KSD returns the kernel Stein discrepancy of the sample x from the target
// π whose score ∇ log π at x[j] is score[j], with the settings of
// DefaultKSDSettings; see KSDSettings.KSD.
func KSD(x, score [][]float64) (float64, error) {
	return DefaultKSDSettings().KSD(x, score)
}

// KSDDraws returns the kernel Stein discrepancy of every draw of x, the
// chains pooled, with the settings of DefaultKSDSettings; see
// KSDSettings.KSDDraws.
func KSDDraws(x, score *Draws) (float64, error) {
	return DefaultKSDSettings().KSDDraws(x, score)
}

// KSD returns the kernel Stein discrepancy (Liu, Lee & Jordan 2016;
// Chwialkowski, Strathmann & Gretton 2016; Gorham & Mackey 2017) of the n
// samples x[j], each of dimension D, from the target π whose score
// s = ∇ log π at x[j] is score[j]. It needs the scores only, so π may be
// unnormalised, and it measures sample quality including bias, where ESS
// and R̂ only see whether chains agree with each other: for the IMQ
// kernel with −1 < Beta < 0 and targets whose scores are distantly
// dissipative, Gorham & Mackey (2017) show that samples whose KSD tends
// to 0 converge to π, and that it tends to 0 for samples that converge
// (under moment conditions). For exact i.i.d. draws the V-statistic falls
// as 1/√n.
//
// With the IMQ kernel k(x, y) = (c² + r²)^β, r² = ‖x − y‖², u = c² + r²,
// and the Langevin Stein kernel
//
//	k_p(x, y) = s(x)·s(y) k + s(x)·∇_y k + s(y)·∇_x k + tr(∇_x∇_y k),
//
// KSD returns the V-statistic
//
//	KSD = √( (1/n²) Σ_i Σ_j k_p(x_i, x_j) ),
//
// the diagonal i = j included, as SGMCMCJax's imq_KSD computes it
// (√(Σ_i Σ_j k_p)/n). The IMQ kernel's derivatives are, in closed form,
//
//	∇_x k = 2β u^(β−1) (x − y) = −∇_y k,
//	tr(∇_x∇_y k) = −2βD u^(β−1) − 4β(β−1) r² u^(β−2),
//
// so that
//
//	k_p(x, y) = u^β s(x)·s(y) − 2β u^(β−1) (s(x) − s(y))·(x − y)
//	            − 2βD u^(β−1) − 4β(β−1) r² u^(β−2).
//
// KSD takes O(n²·D) time and O(n·D) memory: it evaluates k_p once per
// pair, as Σ_i (k_p(x_i, x_i) + 2 Σ_{j>i} k_p(x_i, x_j)), on up to
// GOMAXPROCS goroutines, each summing whole blocks of 32 rows i in order;
// the blocks' sums are added in order of i, so the result does not depend
// on the number of goroutines.
//
// KSD returns NaN and an error if x is empty, score has a different
// length, a sample or a score is empty or of another length than x[0],
// any value is NaN or ±Inf, or the settings are invalid (C not finite and
// positive, Beta not finite and negative).
func (s KSDSettings) KSD(x, score [][]float64) (float64, error) {
	n := len(x)
	switch {
	case n == 0:
		return fail("KSD", errors.New("no samples"))
	case len(score) != n:
		return fail("KSD", fmt.Errorf("%d scores for %d samples", len(score), n))
	case len(x[0]) == 0:
		return fail("KSD", errors.New("sample 0 is empty"))
	}
	d := len(x[0])
	xs, ss := make([]float64, 0, n*d), make([]float64, 0, n*d)
	for j := range x {
		if len(x[j]) != d || len(score[j]) != d {
			return fail("KSD", fmt.Errorf("sample %d has length %d and its score %d, sample 0 has %d", j, len(x[j]), len(score[j]), d))
		}
		xs, ss = append(xs, x[j]...), append(ss, score[j]...)
	}
	v, err := s.ksd(xs, ss, n, d)
	if err != nil {
		return fail("KSD", err)
	}
	return v, nil
}

// KSDDraws returns KSD of every draw of x, the K·T draws of all chains
// pooled, with score the scores ∇ log π of the same draws, element
// (c, t, i) the score's coordinate i at draw t of chain c. The result is
// that of s.KSD on the draws listed in (chain, draw) order. KSDDraws
// returns NaN and an error if either is nil, their shapes differ, there
// are no draws, or as KSD does.
func (s KSDSettings) KSDDraws(x, score *Draws) (float64, error) {
	if x == nil || score == nil {
		return fail("KSDDraws", errors.New("nil draws"))
	}
	k, t, d := x.Dims()
	if k2, t2, d2 := score.Dims(); k2 != k || t2 != t || d2 != d {
		return fail("KSDDraws", fmt.Errorf("draws of %d×%d×%d and scores of %d×%d×%d (chains × draws × dimensions)", k, t, d, k2, t2, d2))
	}
	if t == 0 {
		return fail("KSDDraws", errors.New("no draws"))
	}
	v, err := s.ksd(x.flat(), score.flat(), k*t, d)
	if err != nil {
		return fail("KSDDraws", err)
	}
	return v, nil
}

// ksdBlock is the number of rows i whose terms one goroutine sums in
// order, the unit of KSD's fixed partition.
const ksdBlock = 32

// ksd returns the KSD of n samples of dimension d ≥ 1, held row-major in
// x, with their scores in score, or an error naming the problem.
func (s KSDSettings) ksd(x, score []float64, n, d int) (float64, error) {
	if !(s.C > 0) || math.IsInf(s.C, 1) || !(s.Beta < 0) || math.IsInf(s.Beta, -1) {
		return math.NaN(), fmt.Errorf("invalid settings C = %g, Beta = %g: need C > 0 and Beta < 0, finite", s.C, s.Beta)
	}
	for j := 0; j < n; j++ {
		if !allFinite(x[j*d : (j+1)*d]) {
			return math.NaN(), fmt.Errorf("sample %d has a non-finite value", j)
		}
		if !allFinite(score[j*d : (j+1)*d]) {
			return math.NaN(), fmt.Errorf("score %d has a non-finite value", j)
		}
	}
	blocks := (n + ksdBlock - 1) / ksdBlock
	sums := make([]float64, blocks)
	var next atomic.Int64
	work := func() {
		for {
			b := int(next.Add(1) - 1)
			if b >= blocks {
				return
			}
			var sum float64
			for i := b * ksdBlock; i < min((b+1)*ksdBlock, n); i++ {
				sum += s.row(x, score, n, d, i)
			}
			sums[b] = sum
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), blocks) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	var total float64
	for _, v := range sums {
		total += v
	}
	// The V-statistic is a squared norm, ≥ 0 but for rounding.
	return math.Sqrt(math.Max(total, 0)) / float64(n), nil
}

// row returns k_p(x_i, x_i) + 2 Σ_{j>i} k_p(x_i, x_j).
func (s KSDSettings) row(x, score []float64, n, d, i int) float64 {
	c2, beta := s.C*s.C, s.Beta
	fd := float64(d)
	xi, si := x[i*d:(i+1)*d], score[i*d:(i+1)*d]
	// The diagonal: r = 0, u = c².
	var ss float64
	for _, v := range si {
		ss += v * v
	}
	k := s.pow(c2)
	diag := k*ss - 2*beta*fd*k/c2
	var off float64
	for j := i + 1; j < n; j++ {
		xj, sj := x[j*d:(j+1)*d], score[j*d:(j+1)*d]
		var r2, dot, cross float64
		for a, xa := range xi {
			diff := xa - xj[a]
			r2 += diff * diff
			dot += si[a] * sj[a]
			cross += (si[a] - sj[a]) * diff
		}
		u := c2 + r2
		k := s.pow(u) // u^β
		k1 := k / u   // u^(β−1)
		k2 := k1 / u  // u^(β−2)
		off += k*dot - 2*beta*k1*cross - 2*beta*fd*k1 - 4*beta*(beta-1)*r2*k2
	}
	return diag + 2*off
}

// pow returns u^Beta.
func (s KSDSettings) pow(u float64) float64 {
	if s.Beta == -0.5 {
		return 1 / math.Sqrt(u)
	}
	return math.Pow(u, s.Beta)
}
