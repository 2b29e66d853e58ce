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
	var w steinWork
	return w.estimate(x, lambda)
}

// steinWork is the workspace of Stein estimates: a trainer keeps one and
// reuses its buffers from one estimate to the next. One n × d matrix holds
// K·x, then ∇K, then the estimate.
type steinWork struct {
	sq, sorted, rowSum []float64
	g                  mat.Dense
}

// estimate is Stein with the workspace's buffers. The result is the
// workspace's and is overwritten by the next estimate.
func (w *steinWork) estimate(x *mat.Dense, lambda float64) (*mat.Dense, error) {
	n, d := x.Dims()
	if n < 2 {
		return nil, fmt.Errorf("stein: %d samples, need at least 2", n)
	}
	if !(lambda > 0) {
		return nil, fmt.Errorf("stein: ridge λ must be positive, got %v", lambda)
	}
	w.sq = resize(w.sq, n*n)
	sq := w.sq
	for i := 0; i < n; i++ {
		xi := x.RawRowView(i)
		sq[i*n+i] = 0
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
	w.sorted = append(w.sorted[:0], sq...)
	sort.Float64s(w.sorted)
	med := w.sorted[(len(w.sorted)-1)/2] // the lower median, as torch.median
	if !(med > 0) || math.IsInf(med, 0) {
		return nil, errors.New("stein: the median squared distance between samples is not a positive number (are more than half of the samples identical?)")
	}
	k := mat.NewSymDense(n, nil)
	w.rowSum = resize(w.rowSum, n)
	rowSum := w.rowSum
	clear(rowSum)
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
	reuse(&w.g, n, d)
	w.g.Mul(k, x)
	for i := 0; i < n; i++ {
		xi, gi := x.RawRowView(i), w.g.RawRowView(i)
		for c := range gi {
			gi[c] = 2 / med * (rowSum[i]*xi[c] - gi[c])
		}
	}
	for i := 0; i < n; i++ {
		k.SetSym(i, i, k.At(i, i)+lambda)
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		return nil, errors.New("stein: K + λI is not positive definite")
	}
	if err := ch.SolveTo(&w.g, &w.g); err != nil { // in place
		return nil, fmt.Errorf("stein: %w", err)
	}
	w.g.Scale(-1, &w.g)
	return &w.g, nil
}

// resize returns s with length n, reallocated only when its capacity is
// short; its contents are undefined.
func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// reuse makes m an r × c matrix with undefined contents, in its own memory
// when that is large enough.
func reuse(m *mat.Dense, r, c int) {
	if rr, cc := m.Dims(); rr == r && cc == c {
		return
	}
	raw := m.RawMatrix().Data
	if cap(raw) < r*c {
		raw = make([]float64, r*c)
	}
	*m = *mat.NewDense(r, c, raw[:r*c])
}
