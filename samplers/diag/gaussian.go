package diag

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
)

// ErrNotPositiveDefinite is wrapped by the errors of KLGaussian and
// GaussianFit.KL when a covariance matrix is not positive definite or is
// numerically singular (condition number above mat.ConditionTolerance), for
// example a fitted covariance from n ≤ d samples.
var ErrNotPositiveDefinite = errors.New("covariance is not positive definite")

// GaussianFit accumulates a stream of d-dimensional samples and fits a
// Gaussian to them by the sample mean and the unbiased sample covariance
//
//	μ̂ = (1/n) Σᵢ xᵢ,
//	Σ̂ = 1/(n−1) Σᵢ (xᵢ − μ̂)(xᵢ − μ̂)ᵀ,
//
// which equal numpy's x.mean(axis=0) and np.cov(x.T). For the paper's toy
// bias measure at end step t, Add every sample of every chain from steps
// [0, t) (no burn-in, no thinning) and call KL.
//
// The update is Welford's co-moment recurrence: with δ = x − μ̂ₙ₋₁,
//
//	μ̂ₙ = μ̂ₙ₋₁ + δ/n,
//	Mₙ = Mₙ₋₁ + ((n−1)/n) δδᵀ,   Σ̂ = Mₙ/(n−1),
//
// which does not suffer the cancellation of accumulating raw sums of
// squares, so it stays accurate when the mean is large relative to the
// spread.
//
// The zero value is an empty fit ready to use; its dimension is fixed by the
// first call to Add. Each Add costs O(d²). A GaussianFit is not safe for
// concurrent use.
type GaussianFit struct {
	n     int
	mean  []float64
	comom []float64 // d×d row-major; only the upper triangle (j ≥ i) is kept
	delta []float64 // scratch
}

// Add adds the sample x to the fit. The first call fixes the dimension d =
// len(x); Add returns an error, leaving the fit unchanged, if x is empty or
// has a different length from the first sample. Non-finite values are
// accumulated as given (they make the mean and covariance non-finite, which
// KL then reports as an error).
func (f *GaussianFit) Add(x []float64) error {
	d := len(x)
	if d == 0 {
		return errors.New("diag: GaussianFit.Add: empty sample")
	}
	if f.mean == nil {
		f.mean = make([]float64, d)
		f.comom = make([]float64, d*d)
		f.delta = make([]float64, d)
	} else if d != len(f.mean) {
		return fmt.Errorf("diag: GaussianFit.Add: sample has dimension %d, want %d", d, len(f.mean))
	}
	f.n++
	n := float64(f.n)
	for i, v := range x {
		del := v - f.mean[i]
		f.delta[i] = del
		f.mean[i] += del / n
	}
	w := (n - 1) / n
	for i := 0; i < d; i++ {
		// Row i, columns i..d-1, of M += w δδᵀ.
		floats.AddScaled(f.comom[i*d+i:(i+1)*d], w*f.delta[i], f.delta[i:])
	}
	return nil
}

// N returns the number of samples added so far.
func (f *GaussianFit) N() int { return f.n }

// Dim returns the dimension d of the samples, or 0 if none has been added.
func (f *GaussianFit) Dim() int { return len(f.mean) }

// Mean returns a new slice holding the sample mean μ̂ = (1/n) Σᵢ xᵢ, or nil
// if no sample has been added.
func (f *GaussianFit) Mean() []float64 {
	if f.n == 0 {
		return nil
	}
	return append([]float64(nil), f.mean...)
}

// Cov returns a new matrix holding the unbiased sample covariance
// Σ̂ = 1/(n−1) Σᵢ (xᵢ − μ̂)(xᵢ − μ̂)ᵀ (numpy's np.cov, divisor n−1).
// It returns nil if no sample has been added, and a matrix of NaN if exactly
// one has (the unbiased estimator is undefined for n = 1).
func (f *GaussianFit) Cov() *mat.SymDense {
	d := len(f.mean)
	if f.n == 0 || d == 0 {
		return nil
	}
	cov := mat.NewSymDense(d, nil)
	inv := math.NaN()
	if f.n > 1 {
		inv = 1 / float64(f.n-1)
	}
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			cov.SetSym(i, j, f.comom[i*d+j]*inv)
		}
	}
	return cov
}

// KL returns KL(N(μ̂, Σ̂) ‖ N(mean, cov)) for the fitted μ̂ = f.Mean() and
// Σ̂ = f.Cov(); see KLGaussian for the formula and the errors, which here
// name the fitted covariance "fit". It returns an error if fewer than two
// samples have been added; Σ̂ is singular, and so an error wrapping
// ErrNotPositiveDefinite is returned, unless n > d and the samples span
// the space.
func (f *GaussianFit) KL(mean []float64, cov mat.Symmetric) (float64, error) {
	if f.n < 2 {
		return fail("GaussianFit.KL", fmt.Errorf("need at least 2 samples, have %d", f.n))
	}
	kl, err := klGaussian("fit", f.Mean(), f.Cov(), mean, cov)
	if err != nil {
		return fail("GaussianFit.KL", err)
	}
	return kl, nil
}

// KLGaussian returns the Kullback–Leibler divergence from the Gaussian
// N(meanHat, covHat) to N(mean, cov),
//
//	KL(N̂ ‖ N) = ½ [ log(det Σ / det Σ̂) − d + tr(Σ⁻¹ Σ̂) + (μ − μ̂)ᵀ Σ⁻¹ (μ − μ̂) ],
//
// with μ̂ = meanHat, Σ̂ = covHat, μ = mean, Σ = cov. The covariances are
// passed as they are, so an unbiased fitted Σ̂ (GaussianFit, numpy's
// np.cov) stays unbiased. Both are factorised by Cholesky and the
// divergence is gonum's distmv.KullbackLeibler.DistNormal of the two
// distmv.Normal built from the factors, which takes log det from the
// factors and solves with them instead of forming an inverse.
//
// Rounding can make the computed value slightly negative when the two
// Gaussians are (nearly) equal; since KL ≥ 0 such values are returned as 0.
//
// KLGaussian returns NaN and an error if the dimensions are zero or
// disagree, if any input is NaN or ±Inf, or (wrapping
// ErrNotPositiveDefinite) if either covariance is not positive definite or
// is numerically singular, that is its estimated condition number exceeds
// mat.ConditionTolerance (1e16).
func KLGaussian(meanHat []float64, covHat mat.Symmetric, mean []float64, cov mat.Symmetric) (float64, error) {
	kl, err := klGaussian("covHat", meanHat, covHat, mean, cov)
	if err != nil {
		return fail("KLGaussian", err)
	}
	return kl, nil
}

// klGaussian is KLGaussian with errors that name the problem only; hatName
// is what they call covHat.
func klGaussian(hatName string, meanHat []float64, covHat mat.Symmetric, mean []float64, cov mat.Symmetric) (float64, error) {
	d := len(mean)
	switch {
	case d == 0:
		return math.NaN(), errors.New("zero dimension")
	case covHat == nil || cov == nil:
		return math.NaN(), errors.New("nil covariance")
	case len(meanHat) != d || covHat.SymmetricDim() != d || cov.SymmetricDim() != d:
		return math.NaN(), fmt.Errorf("dimension mismatch: len(meanHat)=%d, %s %d×%[3]d, len(mean)=%d, cov %d×%[5]d",
			len(meanHat), hatName, covHat.SymmetricDim(), d, cov.SymmetricDim())
	}
	if !allFinite(meanHat) || !allFinite(mean) || !symFinite(covHat) || !symFinite(cov) {
		return math.NaN(), errors.New("non-finite input")
	}
	var cholHat, chol mat.Cholesky
	if !cholHat.Factorize(covHat) || cholHat.Cond() > mat.ConditionTolerance {
		return math.NaN(), fmt.Errorf("%s: %w", hatName, ErrNotPositiveDefinite)
	}
	if !chol.Factorize(cov) || chol.Cond() > mat.ConditionTolerance {
		return math.NaN(), fmt.Errorf("cov: %w", ErrNotPositiveDefinite)
	}
	// The sources are never drawn from.
	l := distmv.NewNormalChol(meanHat, &cholHat, nil)
	r := distmv.NewNormalChol(mean, &chol, nil)
	kl := distmv.KullbackLeibler{}.DistNormal(l, r)
	if math.IsNaN(kl) {
		// DistNormal's solve failed, which the condition checks above rule out.
		return math.NaN(), fmt.Errorf("cov: %w", ErrNotPositiveDefinite)
	}
	return math.Max(kl, 0), nil
}

func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func symFinite(s mat.Symmetric) bool {
	n := s.SymmetricDim()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if v := s.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}
