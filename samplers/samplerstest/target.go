// Package samplerstest holds what the tests of package samplers and of the
// packages of its kernels (samplers/nnsghmc, internal/nnkernel) share:
// small Gaussian targets made by samplers.NewTarget, with the gradient
// noise of tasks.GradientNoise where a check wants it, and harnesses that
// run the same checks on any kernel, so that each kernel's package runs
// them on its own kernels.
package samplerstest

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// GaussianTarget returns the Gaussian N(mean, cov) (cov row-major, d×d) for
// k chains, made by samplers.NewTarget from a samplers.Posterior, with the
// energy of package tasks/gaussian (the authors' normalisation, the raw
// energy NNSGHMC's networks see on the toy):
//
//	U(θ) = ½(θ−μ)ᵀΣ⁻¹(θ−μ) + ½·log(2π·det Σ).
//
// The density is the likelihood of one datum under a flat prior, as the
// compiled Gaussians of package tasks have it: the energy has no prior
// part (Eval.Prior and PriorGrad are zero) and the data size is 1, so
// pSGLD, which preconditions by the likelihood's gradient, sees ∇U.
func GaussianTarget(t testing.TB, mean, cov []float64, k int) samplers.Target {
	t.Helper()
	d := len(mean)
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(d, append([]float64(nil), cov...))) {
		t.Fatalf("the covariance %v is not positive definite", cov)
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		t.Fatal(err)
	}
	prec := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			prec[i*d+j] = inv.At(i, j)
		}
	}
	mu := append([]float64(nil), mean...)
	logNorm := 0.5 * (math.Log(2*math.Pi) + ch.LogDet())
	r := make([]float64, d)
	target, err := samplers.NewTarget(samplers.Posterior{
		Dim: d, Data: 1,
		LogPrior: func(_, _ []float64) float64 { return 0 }, // flat
		LogLik: func(theta []float64, _ []int, grad []float64) float64 {
			for i := range r {
				r[i] = theta[i] - mu[i]
			}
			q := 0.0
			for i := 0; i < d; i++ {
				pr := 0.0
				for j, v := range r {
					pr += prec[i*d+j] * v
				}
				grad[i] -= pr
				q += r[i] * pr
			}
			return -(0.5*q + logNorm)
		},
	}, samplers.TargetSettings{Chains: k})
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// StandardMean is the mean μ of StandardTarget.
var StandardMean = []float64{1, -1}

// StandardTarget is N(μ, I) in 2-D for k chains: U = ½|θ−μ|² + ½·log 2π
// and ∇U = θ − μ, easy to evaluate by hand.
func StandardTarget(t testing.TB, k int) samplers.Target {
	t.Helper()
	return GaussianTarget(t, StandardMean, []float64{1, 0, 0, 1}, k)
}

// Theta0 and P0 are positions and momenta of two chains in 2-D,
// coordinate-major: chain 0 at (0.5, −1), chain 1 at (2, 0). They are
// shared: copy them before changing them.
var (
	Theta0 = []float64{0.5, 2, -1, 0}
	P0     = []float64{0.3, -0.2, 0.1, 0.4}
)

// GradAt is ∇U of StandardTarget at the positions theta of two chains.
func GradAt(theta []float64) []float64 {
	g := make([]float64, 4)
	for i := 0; i < 2; i++ {
		for k := 0; k < 2; k++ {
			g[i*2+k] = theta[i*2+k] - StandardMean[i]
		}
	}
	return g
}

// EnergyAt is U of StandardTarget at chain k of the positions theta of two
// chains, with the toy's constant ½·log(2π·det Σ).
func EnergyAt(theta []float64, k int) float64 {
	a, b := theta[k]-StandardMean[0], theta[2+k]-StandardMean[1]
	return 0.5*(a*a+b*b) + 0.5*math.Log(2*math.Pi)
}

// Normals returns the first n standard normal draws of a PCG generator
// seeded with (seed, 0): the noise that the samplers draw from that
// generator, in coordinate order.
func Normals(seed uint64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0))
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// AssertClose reports the entries of got that differ from want by more than
// 1e-9 relative to 1 + |want|.
func AssertClose(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9*(1+math.Abs(want[i])) {
			t.Errorf("%s[%d] = %.12g, want %.12g", what, i, got[i], want[i])
		}
	}
}

// Test20 returns the mean and covariance of the paper's 20-D test target as
// tasks/gaussian.NewTest20(seed, scale) draws them: mean 3 and Σ = L·Lᵀ
// with L = scale·N(0, 1)^{20×20} from a PCG generator seeded with seed.
func Test20(seed uint64, scale float64) (mean, cov []float64) {
	const d = 20
	rng := rand.New(rand.NewPCG(seed, 0x7465737432)) // "test2"
	l := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			l.Set(i, j, scale*rng.NormFloat64())
		}
	}
	var s mat.SymDense
	s.SymOuterK(1, l)
	mean, cov = make([]float64, d), make([]float64, d*d)
	for i := 0; i < d; i++ {
		mean[i] = 3
		for j := 0; j < d; j++ {
			cov[i*d+j] = s.At(i, j)
		}
	}
	return mean, cov
}
