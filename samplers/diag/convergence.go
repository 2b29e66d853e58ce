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
	m, n, err := checkChains("ESS", chains, 4)
	if err != nil {
		return math.NaN(), err
	}
	meanAcov, means := meanAutocov(chains, n)
	w := meanAcov[0] * float64(n) / float64(n-1)
	varPlus := w * float64(n-1) / float64(n)
	if m > 1 {
		varPlus += variance(means)
	}
	if !(varPlus > 0) {
		return math.NaN(), errors.New("diag: ESS: all draws are identical")
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
// len(rho) must be at least 4.
func stanTau(rho []float64) float64 {
	n := len(rho)
	kept := make([]float64, n) // Stan's rho_hat_s: retained autocorrelations.
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
	m, n, err := checkChains("SplitRhat", chains, 4)
	if err != nil {
		return math.NaN(), err
	}
	h := n / 2
	means := make([]float64, 0, 2*m)
	var w float64
	for _, c := range chains {
		for _, half := range [2][]float64{c[:h], c[n-h:]} {
			mu := mean(half)
			means = append(means, mu)
			w += variance(half)
		}
	}
	w /= float64(2 * m)
	bOverH := variance(means)
	switch {
	case w == 0 && bOverH == 0:
		return math.NaN(), errors.New("diag: SplitRhat: all draws are identical")
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
// returned by ESS. It returns the errors of ESS.
func MCSE(chains [][]float64) (float64, error) {
	ess, err := ESS(chains)
	if err != nil {
		return math.NaN(), fmt.Errorf("diag: MCSE: %w", err)
	}
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
	sd := math.Sqrt(ss / float64(count-1))
	return sd / math.Sqrt(ess), nil
}

// checkChains validates m ≥ 1 chains of equal length n ≥ minLen holding only
// finite values.
func checkChains(fn string, chains [][]float64, minLen int) (m, n int, err error) {
	m = len(chains)
	if m == 0 {
		return 0, 0, fmt.Errorf("diag: %s: no chains", fn)
	}
	n = len(chains[0])
	for c, x := range chains {
		if len(x) != n {
			return 0, 0, fmt.Errorf("diag: %s: chain %d has %d draws, chain 0 has %d", fn, c, len(x), n)
		}
		if !allFinite(x) {
			return 0, 0, fmt.Errorf("diag: %s: chain %d has a non-finite draw", fn, c)
		}
	}
	if n < minLen {
		return 0, 0, fmt.Errorf("diag: %s: chains have %d draws, need at least %d", fn, n, minLen)
	}
	return m, n, nil
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
