package gru

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// opNamespace is the namespace of this package's ops (see graph.NewOpBase).
const opNamespace = "metasgmcmc.gru"

// gemvRows is the largest number of rows chainProducts multiplies row by
// row.
const gemvRows = 32

// dense returns the contiguous data of v.
func dense(v G.Value) (tensor.Tensor, error) {
	t, ok := v.(tensor.Tensor)
	if !ok {
		return nil, fmt.Errorf("gru: value %T is not a tensor", v)
	}
	if !t.IsNativelyAccessible() || t.RequiresIterator() {
		return tensor.Materialize(t), nil
	}
	return t, nil
}

// sigm is the logistic function σ.
func sigm(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// flip turns the transposition of B in c = a·op(B) into that of the
// matrix-vector product c = op'(B)·a.
func flip(t blas.Transpose) blas.Transpose {
	if t == blas.NoTrans {
		return blas.Trans
	}
	return blas.NoTrans
}

// chainProducts computes c_i = a_i·op(B_i) + β·c_i for each of the k chains,
// a_i (m, n1), op(B_i) (n1, n2) and c_i (m, n2) stored one chain after the
// other, B_i as (n1, n2), or as (n2, n1) when tB is blas.Trans: row by row
// (GEMV, while B_i is in cache) when m ≤ gemvRows, else one GEMM a chain.
// gonum's Dgemm splits a 1×N product into column blocks of 64 run by
// goroutines, which measured 2–3× slower than one Dgemv on the per-step
// products of this GRU (H = 100 to 200), and with few rows it is slower
// still.
func chainProducts[T float32 | float64](tB blas.Transpose, k, m, n1, n2 int, a, b []T, beta T, c []T) {
	sa, sb, sc := m*n1, n1*n2, m*n2
	rb, cb := n1, n2
	if tB == blas.Trans {
		rb, cb = n2, n1
	}
	for i := 0; i < k; i++ {
		B := b[i*sb : (i+1)*sb]
		if m <= gemvRows {
			for r := 0; r < m; r++ {
				gemv(flip(tB), rb, cb, B, a[i*sa+r*n1:i*sa+(r+1)*n1], beta, c[i*sc+r*n2:i*sc+(r+1)*n2])
			}
			continue
		}
		gemm(tB, m, n2, n1, a[i*sa:(i+1)*sa], rb, cb, B, beta, c[i*sc:(i+1)*sc])
	}
}

// gemv computes y = op(A)·x + β·y for the r × c row-major matrix A.
func gemv[T float32 | float64](tA blas.Transpose, r, c int, A, x []T, beta T, y []T) {
	switch A := any(A).(type) {
	case []float64:
		blas64.Gemv(tA, 1, blas64.General{Rows: r, Cols: c, Stride: c, Data: A}, blas64.Vector{N: len(x), Inc: 1, Data: any(x).([]float64)}, float64(beta), blas64.Vector{N: len(y), Inc: 1, Data: any(y).([]float64)})
	case []float32:
		blas32.Gemv(tA, 1, blas32.General{Rows: r, Cols: c, Stride: c, Data: A}, blas32.Vector{N: len(x), Inc: 1, Data: any(x).([]float32)}, float32(beta), blas32.Vector{N: len(y), Inc: 1, Data: any(y).([]float32)})
	}
}

// gemm computes C = A·op(B) + β·C for A (m, inner) and C (m, n) row-major
// and B stored as the rb × cb row-major matrix.
func gemm[T float32 | float64](tB blas.Transpose, m, n, inner int, A []T, rb, cb int, B []T, beta T, C []T) {
	switch A := any(A).(type) {
	case []float64:
		blas64.Gemm(blas.NoTrans, tB, 1, blas64.General{Rows: m, Cols: inner, Stride: inner, Data: A}, blas64.General{Rows: rb, Cols: cb, Stride: cb, Data: any(B).([]float64)}, float64(beta), blas64.General{Rows: m, Cols: n, Stride: n, Data: any(C).([]float64)})
	case []float32:
		blas32.Gemm(blas.NoTrans, tB, 1, blas32.General{Rows: m, Cols: inner, Stride: inner, Data: A}, blas32.General{Rows: rb, Cols: cb, Stride: cb, Data: any(B).([]float32)}, float32(beta), blas32.General{Rows: m, Cols: n, Stride: n, Data: any(C).([]float32)})
	}
}
