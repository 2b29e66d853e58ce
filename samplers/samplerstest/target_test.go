package samplerstest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks/gaussian"
)

// TestGaussianTarget checks the test targets against the closed form of a
// correlated 2-D Gaussian: the energy with its constant, the gradient
// Σ⁻¹(θ − μ), no prior part, data size 1, and no randomness drawn.
func TestGaussianTarget(t *testing.T) {
	const k = 3
	mean, cov := []float64{1, -1}, []float64{1, 0.8, 0.8, 2}
	det := cov[0]*cov[3] - cov[1]*cov[2]
	prec := []float64{cov[3] / det, -cov[1] / det, -cov[2] / det, cov[0] / det}
	target := GaussianTarget(t, mean, cov, k)
	if target.Dim() != 2 || target.Chains() != k || target.DataSize() != 1 {
		t.Fatalf("dimension %d, %d chains, data size %v", target.Dim(), target.Chains(), target.DataSize())
	}
	theta := []float64{0.5, 2, -3, -1, 0, 4} // coordinate-major
	e := samplers.NewEval(2, k)
	rng, fresh := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	if err := target.Evaluate(rng, theta, e); err != nil {
		t.Fatal(err)
	}
	if rng.Uint64() != fresh.Uint64() {
		t.Error("the target drew from the random source")
	}
	for c := 0; c < k; c++ {
		r := []float64{theta[c] - mean[0], theta[k+c] - mean[1]}
		g := []float64{prec[0]*r[0] + prec[1]*r[1], prec[2]*r[0] + prec[3]*r[1]}
		u := 0.5*(r[0]*g[0]+r[1]*g[1]) + 0.5*math.Log(2*math.Pi*det)
		AssertClose(t, "U", e.U[c:c+1], []float64{u})
		AssertClose(t, "∇U", []float64{e.Grad[c], e.Grad[k+c]}, g)
		if e.Prior[c] != 0 || e.PriorGrad[c] != 0 || e.PriorGrad[k+c] != 0 {
			t.Errorf("chain %d: prior part %v, %v", c, e.Prior[c], []float64{e.PriorGrad[c], e.PriorGrad[k+c]})
		}
	}
	// StandardTarget is N(StandardMean, I), whose energy and gradient
	// EnergyAt and GradAt give.
	std := StandardTarget(t, 2)
	e = samplers.NewEval(2, 2)
	if err := std.Evaluate(rng, Theta0, e); err != nil {
		t.Fatal(err)
	}
	AssertClose(t, "standard ∇U", e.Grad, GradAt(Theta0))
	AssertClose(t, "standard U", e.U, []float64{EnergyAt(Theta0, 0), EnergyAt(Theta0, 1)})
}

// TestTest20IsTheTasksTarget: Test20 draws the mean and covariance of
// tasks/gaussian's 20-D test target, bit for bit.
func TestTest20IsTheTasksTarget(t *testing.T) {
	mean, cov := Test20(1, 0.6)
	g, err := gaussian.NewTest20(1, 0.6)
	if err != nil {
		t.Fatal(err)
	}
	want := g.Cov()
	for i, m := range g.Mean() {
		if mean[i] != m {
			t.Errorf("mean %d: %v, want %v", i, mean[i], m)
		}
		for j := range mean {
			if cov[i*len(mean)+j] != want.At(i, j) {
				t.Fatalf("covariance (%d, %d): %v, want %v", i, j, cov[i*len(mean)+j], want.At(i, j))
			}
		}
	}
}
