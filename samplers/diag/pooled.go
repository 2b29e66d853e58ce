package diag

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// ESSPooled returns the effective sample size of one chain exactly as the
// authors' code of Gong, Li & Hernández-Lobato (2019) computes it (a
// BEAST-style estimator). The rows of chain are the T steps of the
// trajectory and the columns its d dimensions.
//
// With x̄ the per-dimension mean over steps, the auto-covariances are summed
// (pooled) over dimensions,
//
//	γ(L) = 1/(T−L) Σ_{t=0}^{T−L−1} Σ_k (x_{t,k} − x̄_k)(x_{t+L,k} − x̄_k),
//
// for lags L = 0, 1, …, maxLag−1 with maxLag = min(⌊T/3⌋, 1000). Then
//
//	varStat = γ(0) + 2 Σ_{L=2,4,…} (γ(L−1) + γ(L)),
//
// where the sum runs over even L < maxLag and stops, without adding it, at
// the first pair with γ(L−1) + γ(L) ≤ 0. Note that the pairs are
// (γ(1), γ(2)), (γ(3), γ(4)), …, and that an odd final lag maxLag−1 is
// computed but never used. Finally
//
//	ESS = T / (varStat/γ(0)) = T·γ(0)/varStat.
//
// For T < 9 no pair is reached (maxLag ≤ 2), so ESS = T.
//
// ESSPooled returns NaN and an error if chain is nil or empty, has fewer
// than 3 rows (the authors' code fails there), holds NaN or ±Inf, or is
// constant (γ(0) = 0).
func ESSPooled(chain *mat.Dense) (float64, error) {
	ess, err := essPooled(chain)
	if err != nil {
		return fail("ESSPooled", err)
	}
	return ess, nil
}

// essPooled is ESSPooled with errors that name the problem only.
func essPooled(chain *mat.Dense) (float64, error) {
	if chain == nil || chain.IsEmpty() {
		return math.NaN(), errors.New("empty chain")
	}
	T, d := chain.Dims()
	maxLag := min(T/3, 1000)
	if maxLag < 1 {
		return math.NaN(), fmt.Errorf("chain has %d steps, need at least 3", T)
	}
	for t := 0; t < T; t++ {
		if !allFinite(chain.RawRowView(t)) {
			return math.NaN(), fmt.Errorf("step %d has a non-finite value", t)
		}
	}

	// z holds the centred trajectory in row-major order, so that the sum over
	// t and k of z[t][k]·z[t+L][k] is the dot product of z[:(T−L)d] with
	// z[Ld:].
	z := make([]float64, T*d)
	for k := 0; k < d; k++ {
		var mean float64
		for t := 0; t < T; t++ {
			mean += chain.At(t, k)
		}
		mean /= float64(T)
		for t := 0; t < T; t++ {
			z[t*d+k] = chain.At(t, k) - mean
		}
	}

	gamma := make([]float64, maxLag)
	var varStat float64
	for lag := 0; lag < maxLag; lag++ {
		n := T - lag
		gamma[lag] = floats.Dot(z[:n*d], z[lag*d:]) / float64(n)
		if lag == 0 {
			varStat = gamma[0]
		} else if lag%2 == 0 {
			s := gamma[lag-1] + gamma[lag]
			if !(s > 0) {
				break
			}
			varStat += 2 * s
		}
	}
	switch {
	case gamma[0] == 0:
		return math.NaN(), errIdentical
	case math.IsNaN(varStat) || math.IsInf(varStat, 0):
		return math.NaN(), errors.New("the auto-covariances overflow")
	}
	act := varStat / gamma[0]
	return float64(T) / act, nil
}

// MeanESSPooled returns the average of ESSPooled over the given chains,
//
//	(1/m) Σ_c ESSPooled(chains[c]),
//
// the effective sample size reported in the paper (averaged over its 50
// chains). It returns NaN and an error if chains is empty or if ESSPooled
// fails for any chain; the error names the first such chain.
func MeanESSPooled(chains []*mat.Dense) (float64, error) {
	if len(chains) == 0 {
		return fail("MeanESSPooled", errors.New("no chains"))
	}
	var sum float64
	for c, chain := range chains {
		ess, err := essPooled(chain)
		if err != nil {
			return fail("MeanESSPooled", fmt.Errorf("chain %d: %w", c, err))
		}
		sum += ess
	}
	return sum / float64(len(chains)), nil
}
