package diag

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// ESS returns the effective sample size of one scalar quantity sampled by m
// chains of n draws each; chains[c][i] is draw i of chain c. All chains must
// have the same length n ≥ 4.
//
// ESS follows Stan's non-split, non-rank-normalised estimator
// stan::analyze::compute_effective_sample_size as introduced in Stan 2.20
// (stan-dev/stan PR #2774, src/stan/analyze/mcmc/compute_effective_sample_size.hpp;
// BDA3 §11.5 with Geyer's initial monotone sequence). With the within-chain
// auto-covariances acov_c(t) = (1/n) Σ_{i=0}^{n−t−1} (x_{c,i} − x̄_c)(x_{c,i+t} − x̄_c)
// (computed by FFT),
//
//	W    = (1/m) Σ_c acov_c(0)·n/(n−1)          (mean within-chain variance)
//	B/n  = 1/(m−1) Σ_c (x̄_c − x̄)²               (0 when m = 1)
//	var⁺ = (n−1)/n·W + B/n
//	ρ̂_t  = 1 − (W − (1/m) Σ_c acov_c(t)) / var⁺,  ρ̂_0 := 1.
//
// Geyer's initial positive sequence takes the pairs P̂_k = ρ̂_{2k} + ρ̂_{2k+1}
// while they are positive (Stan examines lags up to n−3 only); the sequence
// is then made monotone, P̂_k ← min(P̂_k, P̂_{k−1}), by replacing both members
// of a pair by P̂_{k−1}/2. With P̂_0 … P̂_K the retained pairs,
//
//	τ̂   = −1 + 2 Σ_{k=0}^{K} P̂_k + max(ρ̂_{2K+2}, 0),
//	ESS = min(mn/τ̂, mn·log₁₀(mn)).
//
// The last term of τ̂ is Stan's correction that reduces the variance for
// antithetic chains, and the cap bounds the ESS of such chains. Stan's
// quirks are kept so that results agree with it: if the positive sequence
// is still positive when the lag limit is reached, ρ̂_{2K} enters τ̂ a third
// time (and ρ̂_{2K+1} not at all); and if no pair beyond P̂_0 is examined,
// because n is 4 or 5 or because ρ̂_0 + ρ̂_1 ≤ 0, then τ̂ = 2. The one
// deliberate difference is that τ̂ ≤ 0, possible for strongly antithetic
// chains, gives the cap mn·log₁₀(mn) rather than Stan's negative value.
//
// ESS returns an error if there are no chains, the lengths differ or are
// below 4, any draw is NaN or ±Inf, or all draws are identical (var⁺ = 0).
func ESS(chains [][]float64) (float64, error) {
	return checked("ESS", chains, essOf)
}

// essOf is ESS without the checks of the input: chains must be m ≥ 1 chains
// of equal length n ≥ 2 holding only finite values. It returns
// errIdentical if var⁺ = 0.
func essOf(chains [][]float64) (float64, error) {
	m, n := len(chains), len(chains[0])
	meanAcov, means := meanAutocov(chains, n)
	w := meanAcov[0] * float64(n) / float64(n-1)
	varPlus := w * float64(n-1) / float64(n)
	if m > 1 {
		varPlus += variance(means)
	}
	if !(varPlus > 0) {
		return math.NaN(), errIdentical
	}
	rho := make([]float64, n)
	for t := range rho {
		rho[t] = 1 - (w-meanAcov[t])/varPlus
	}
	tau := stanTau(rho)
	total := float64(m * n)
	maxESS := total * math.Log10(total)
	if tau <= 0 || total/tau > maxESS {
		return maxESS, nil
	}
	return total / tau, nil
}

// stanTau returns Stan's τ̂ from the raw combined autocorrelations
// rho[t], t = 0, …, n−1 (rho[0] is ignored and taken as 1): Geyer's initial
// positive sequence, made monotone, plus the antithetic correction term.
// It mirrors compute_effective_sample_size of Stan 2.20+ line by line;
// len(rho) must be at least 2. For len(rho) < 6 no pair beyond P̂_0 is
// examined and τ̂ = 2 (Stan itself needs 4 draws; the rank-normalised
// diagnostics call this on split chains, which may have 2 or 3).
func stanTau(rho []float64) float64 {
	n := len(rho)
	// Stan's rho_hat_s: retained autocorrelations. Index maxS+1 ≤ n−2 is
	// written below for n ≥ 4; for n = 2, 3 it is index 2.
	kept := make([]float64, max(n, 3))
	rhoEven, rhoOdd := 1.0, rho[1]
	kept[0], kept[1] = rhoEven, rhoOdd
	s := 1
	for s < n-4 && rhoEven+rhoOdd > 0 {
		rhoEven, rhoOdd = rho[s+1], rho[s+2]
		if rhoEven+rhoOdd >= 0 {
			kept[s+1], kept[s+2] = rhoEven, rhoOdd
		}
		s += 2
	}
	maxS := s
	if rhoEven > 0 {
		kept[maxS+1] = rhoEven // Correction for antithetic chains.
	}
	// Initial monotone sequence.
	for s := 1; s <= maxS-3; s += 2 {
		if prev := kept[s-1] + kept[s]; kept[s+1]+kept[s+2] > prev {
			kept[s+1] = prev / 2
			kept[s+2] = kept[s+1]
		}
	}
	tau := -1.0
	for _, r := range kept[:maxS] {
		tau += 2 * r
	}
	return tau + kept[maxS+1]
}

// SplitRhat returns the split potential scale reduction factor R̂ of BDA3
// (Gelman et al. 2013, §11.4; Stan's compute_split_potential_scale_reduction
// before rank normalisation) for one scalar quantity sampled by m chains of
// n draws each; chains[c][i] is draw i of chain c. All chains must have the
// same length n ≥ 4.
//
// Each chain is split into its first and last h = ⌊n/2⌋ draws (for odd n the
// middle draw is dropped), giving M = 2m half-chains with means x̄_j and
// sample variances s²_j (divisor h−1). Then
//
//	W    = (1/M) Σ_j s²_j,
//	B    = h/(M−1) Σ_j (x̄_j − x̄)²,
//	var⁺ = (h−1)/h·W + B/h,
//	R̂    = √(var⁺/W).
//
// SplitRhat returns +Inf if every half-chain is constant but they differ,
// and an error if there are no chains, the lengths differ or are below 4,
// any draw is NaN or ±Inf, or all draws are identical.
func SplitRhat(chains [][]float64) (float64, error) {
	return checked("SplitRhat", chains, func(chains [][]float64) (float64, error) {
		return rhatOf(splitChains(chains))
	})
}

// splitChains returns the 2m half-chains of m chains of length n: the first
// and the last h = ⌊n/2⌋ draws of each chain in turn (for odd n the middle
// draw is dropped). The halves share memory with chains.
func splitChains(chains [][]float64) [][]float64 {
	n := len(chains[0])
	h := n / 2
	halves := make([][]float64, 0, 2*len(chains))
	for _, c := range chains {
		halves = append(halves, c[:h], c[n-h:])
	}
	return halves
}

// rhatOf returns the (non-split) R̂ of M ≥ 2 chains of equal length h ≥ 2,
// √(((h−1)/h·W + B/h)/W) with W the mean of the chains' sample variances
// and B/h the sample variance of their means (see SplitRhat, which calls
// it on the half-chains). It returns +Inf if W = 0 < B and errIdentical if
// W = B = 0.
func rhatOf(chains [][]float64) (float64, error) {
	h := len(chains[0])
	means := make([]float64, 0, len(chains))
	var w float64
	for _, c := range chains {
		mu := mean(c)
		means = append(means, mu)
		w += variance(c)
	}
	w /= float64(len(chains))
	bOverH := variance(means)
	switch {
	case w == 0 && bOverH == 0:
		return math.NaN(), errIdentical
	case w == 0:
		return math.Inf(1), nil
	}
	hf := float64(h)
	return math.Sqrt(((hf-1)/hf*w + bOverH) / w), nil
}

// MCSE returns the Monte Carlo standard error of the mean of one scalar
// quantity sampled by m chains of n draws each,
//
//	MCSE = sd / √ESS,   sd² = 1/(mn−1) Σ_c Σ_i (x_{c,i} − x̄)²,
//
// with sd the sample standard deviation of all mn draws pooled and ESS as
// returned by ESS. It fails where ESS fails.
func MCSE(chains [][]float64) (float64, error) {
	ess, err := checked("MCSE", chains, essOf)
	if err != nil {
		return ess, err
	}
	_, sd := pooledMeanSD(chains)
	return sd / math.Sqrt(ess), nil
}

// checked is the frame of the diagnostics of one scalar quantity: it
// validates chains (see checkChains, with n ≥ 4) and returns diagnostic f
// of them, or NaN and an error that names fn, the exported function.
func checked(fn string, chains [][]float64, f func([][]float64) (float64, error)) (float64, error) {
	if err := checkChains(chains, 4); err != nil {
		return fail(fn, err)
	}
	v, err := f(chains)
	if err != nil {
		return fail(fn, err)
	}
	return v, nil
}

// checkChains validates m ≥ 1 chains of equal length n ≥ minLen holding only
// finite values. Its errors name the problem only; the exported functions
// add their names (see fail).
func checkChains(chains [][]float64, minLen int) error {
	if len(chains) == 0 {
		return errors.New("no chains")
	}
	n := len(chains[0])
	for c, x := range chains {
		if len(x) != n {
			return fmt.Errorf("chain %d has %d draws, chain 0 has %d", c, len(x), n)
		}
		if !allFinite(x) {
			return fmt.Errorf("chain %d has a non-finite draw", c)
		}
	}
	if n < minLen {
		return fmt.Errorf("chains have %d draws, need at least %d", n, minLen)
	}
	return nil
}

// errIdentical is the problem of input whose draws are all equal, which
// has no variance to estimate from.
var errIdentical = errors.New("all draws are identical")

// fail returns NaN and the error "diag: fn: problem", the form of every
// error of the package's functions; problem is wrapped, so that errors.Is
// still finds sentinel errors such as ErrNotPositiveDefinite.
func fail(fn string, problem error) (float64, error) {
	return math.NaN(), fmt.Errorf("diag: %s: %w", fn, problem)
}

// meanAutocov returns the chain-averaged auto-covariances
// (1/m) Σ_c acov_c(t), t = 0, …, n−1, with divisor n as in Stan, and the chain
// means. The auto-covariances are computed by FFT of the centred draws
// zero-padded to a power of two ≥ 2n, which avoids circular wrap-around.
func meanAutocov(chains [][]float64, n int) (acov, means []float64) {
	size := 1
	for size < 2*n {
		size <<= 1
	}
	fft := fourier.NewFFT(size)
	buf := make([]float64, size)
	coef := make([]complex128, size/2+1)
	acov = make([]float64, n)
	means = make([]float64, len(chains))
	// Sequence(Coefficients(x)) scales by size; divide that and n out, and
	// average over the m chains.
	scale := 1 / (float64(size) * float64(n) * float64(len(chains)))
	for c, x := range chains {
		mu := mean(x)
		means[c] = mu
		for i, v := range x {
			buf[i] = v - mu
		}
		for i := n; i < size; i++ {
			buf[i] = 0
		}
		fft.Coefficients(coef, buf)
		for k, v := range coef {
			coef[k] = complex(real(v)*real(v)+imag(v)*imag(v), 0)
		}
		fft.Sequence(buf, coef)
		for t := range acov {
			acov[t] += buf[t] * scale
		}
	}
	return acov, means
}

// mean returns the arithmetic mean of x.
func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// variance returns the sample variance of x with divisor len(x)−1, by the
// two-pass formula.
func variance(x []float64) float64 {
	mu := mean(x)
	var ss float64
	for _, v := range x {
		ss += (v - mu) * (v - mu)
	}
	return ss / float64(len(x)-1)
}
