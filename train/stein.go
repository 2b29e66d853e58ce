package train

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Stein estimates the score ∇_x log q(x) of the distribution q that the n
// rows of x (n × d) were drawn from, with the Stein gradient estimator of Li
// & Turner (2018) and an RBF kernel, as the authors' code does:
//
//	S_ij = ‖x_i − x_j‖²,  med = lower median of all n² entries of S,
//	K_ij = exp(−S_ij / med)   (bandwidth σ² = med/2),
//	∇K_i = Σ_j ∇_{x_j} k(x_j, x_i) = (2/med)·Σ_j K_ij (x_i − x_j),
//	ĝ = −(K + λI)⁻¹ ∇K.
//
// The i-th row of the result estimates ∇ log q(x_i).
func Stein(x *mat.Dense, lambda float64) (*mat.Dense, error) {
	n, d := x.Dims()
	if n < 2 {
		return nil, fmt.Errorf("stein: %d samples, need at least 2", n)
	}
	if !(lambda > 0) {
		return nil, fmt.Errorf("stein: ridge λ must be positive, got %v", lambda)
	}
	sq := make([]float64, n*n)
	for i := 0; i < n; i++ {
		xi := x.RawRowView(i)
		for j := i + 1; j < n; j++ {
			xj := x.RawRowView(j)
			s := 0.0
			for c := 0; c < d; c++ {
				t := xi[c] - xj[c]
				s += t * t
			}
			sq[i*n+j], sq[j*n+i] = s, s
		}
	}
	sorted := append([]float64(nil), sq...)
	sort.Float64s(sorted)
	med := sorted[(len(sorted)-1)/2] // the lower median, as torch.median
	if !(med > 0) || math.IsInf(med, 0) {
		return nil, errors.New("stein: the median squared distance between samples is not a positive number (are more than half of the samples identical?)")
	}
	k := mat.NewSymDense(n, nil)
	rowSum := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := math.Exp(-sq[i*n+j] / med)
			if i == j {
				v = 1
			}
			k.SetSym(i, j, v)
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			rowSum[i] += k.At(i, j)
		}
	}
	// ∇K = (2/med)·(diag(K·1)·x − K·x)
	var kx mat.Dense
	kx.Mul(k, x)
	gradK := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for c := 0; c < d; c++ {
			gradK.Set(i, c, 2/med*(rowSum[i]*x.At(i, c)-kx.At(i, c)))
		}
	}
	for i := 0; i < n; i++ {
		k.SetSym(i, i, k.At(i, i)+lambda)
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		return nil, errors.New("stein: K + λI is not positive definite")
	}
	g := mat.NewDense(n, d, nil)
	if err := ch.SolveTo(g, gradK); err != nil {
		return nil, fmt.Errorf("stein: %w", err)
	}
	g.Scale(-1, g)
	return g, nil
}
