package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// steinError is the root-mean-square error of the Stein estimate (λ = 0.05,
// the authors' value for MLPs) against the exact score −Σ⁻¹x of N(0, Σ),
// Σ = diag(1, 4, 1, …), relative to the RMS of the exact score, and the
// slope of the regression of the estimate on the exact score.
func steinError(t *testing.T, n, d int, seed uint64) (float64, float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for c := 0; c < d; c++ {
			x.Set(i, c, float64(1+c%2)*rng.NormFloat64())
		}
	}
	g, err := Stein(x, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	var se, ss, sxy float64
	for i := 0; i < n; i++ {
		for c := 0; c < d; c++ {
			v := float64(1 + c%2)
			exact := -x.At(i, c) / (v * v)
			se += (g.At(i, c) - exact) * (g.At(i, c) - exact)
			ss += exact * exact
			sxy += exact * g.At(i, c)
		}
	}
	return math.Sqrt(se / ss), sxy / ss
}

// TestSteinErrorShrinksWithSamples: the estimator is consistent, so its
// error on Gaussian samples (averaged over a few draws) must fall steadily
// as the number of samples grows, and with many samples the estimate must
// be calibrated (regression slope on the exact score near 1). Per sample it
// stays noisy: with the authors' small ridge the relative error is still
// about 0.6 at 320 samples in 3-D.
func TestSteinErrorShrinksWithSamples(t *testing.T) {
	const d = 3
	var errs []float64
	slope := 0.0
	for _, n := range []int{20, 80, 320} {
		e := 0.0
		slope = 0
		for seed := uint64(0); seed < 4; seed++ {
			es, sl := steinError(t, n, d, seed)
			e += es / 4
			slope += sl / 4
		}
		t.Logf("n = %d: relative RMS error %.3f, slope %.3f", n, e, slope)
		errs = append(errs, e)
	}
	for i := 1; i < len(errs); i++ {
		if errs[i] > 0.8*errs[i-1] {
			t.Errorf("error does not shrink with more samples: %v", errs)
		}
	}
	if errs[len(errs)-1] > 0.7 {
		t.Errorf("relative error %.3f with 320 samples, want < 0.7", errs[len(errs)-1])
	}
	if math.Abs(slope-1) > 0.1 {
		t.Errorf("regression slope %.3f with 320 samples, want 1 ± 0.1", slope)
	}
}

// TestSteinHandComputed checks two 1-D samples by hand: x = (0, 1),
// S = [[0,1],[1,0]], the lower median of {0,0,1,1} is 0 → error; with three
// samples (0, 1, 3) S has entries {0,0,0,1,1,4,4,9,9}, median 1,
// K_ij = exp(−S_ij).
func TestSteinHandComputed(t *testing.T) {
	if _, err := Stein(mat.NewDense(2, 1, []float64{0, 1}), 0.1); err == nil {
		t.Error("a zero median bandwidth must be an error")
	}
	x := []float64{0, 1, 3}
	const lambda = 0.1
	k := mat.NewSymDense(3, nil)
	grad := mat.NewDense(3, 1, nil)
	for i := 0; i < 3; i++ {
		s := 0.0
		for j := 0; j < 3; j++ {
			kij := math.Exp(-(x[i] - x[j]) * (x[i] - x[j]))
			if j >= i {
				k.SetSym(i, j, kij)
			}
			s += 2 * kij * (x[i] - x[j]) // 2/med with med = 1
		}
		grad.Set(i, 0, s)
		k.SetSym(i, i, 1+lambda)
	}
	var want mat.Dense
	if err := want.Solve(k, grad); err != nil {
		t.Fatal(err)
	}
	got, err := Stein(mat.NewDense(3, 1, x), lambda)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if math.Abs(got.At(i, 0)+want.At(i, 0)) > 1e-12 {
			t.Errorf("ĝ_%d = %v, want %v", i, got.At(i, 0), -want.At(i, 0))
		}
	}
}
