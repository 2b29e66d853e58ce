package bnn

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// dataMatMulOp computes its products in gemmSpans spans of columns shared
// out among the cores: on one core and on two, forward and gradient, in
// float64 and float32, the results are the same bit for bit, and those of
// one GEMM call over the whole product up to rounding (the BLAS may pick
// other kernels for the smaller products: OpenBLAS's small-matrix kernels
// sum in another order).
func TestDataMatMulSplit(t *testing.T) {
	const m, in, n = 37, 29, 8*gemmSpans*gemmUnit - 60
	rng := rand.New(rand.NewPCG(5, 6))
	fill := func(k int) []float64 {
		x := make([]float64, k)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}
	x, w, g := fill(m*in), fill(in*n), fill(m*n)
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for _, grad := range []bool{false, true} {
			wShape := tensor.Shape{in * n / 4, 4} // the weights as θ holds them, row-major the (in, n) matrix
			op := newDataMatMulOp(grad, wShape)
			b, bShape := w, []int(wShape)
			r, tA, lda := m, blas.NoTrans, in
			if grad {
				b, bShape = g, []int{m, n}
				r, tA = in, blas.Trans
			}
			inner := len(b) / n
			want := make([]float64, r*n)
			if dt == tensor.Float64 {
				blas64.Implementation().Dgemm(tA, blas.NoTrans, r, n, inner, 1, x, lda, b, n, 0, want, n)
			} else {
				want32 := make([]float32, r*n)
				blas32.Implementation().Sgemm(tA, blas.NoTrans, r, n, inner, 1, to32(x), lda, to32(b), n, 0, want32, n)
				want = to64(want32)
			}
			tol := 1e-12
			if dt == tensor.Float32 {
				tol = 1e-5
			}
			var first []float64
			for _, procs := range []int{1, 2} {
				old := runtime.GOMAXPROCS(procs)
				out, err := op.Do(dense(dt, x, m, in), dense(dt, b, bShape...))
				runtime.GOMAXPROCS(old)
				if err != nil {
					t.Fatal(err)
				}
				if grad && !out.Shape().Eq(wShape) {
					t.Fatalf("%v: the weights' gradient has shape %v, want the weights' %v", dt, out.Shape(), wShape)
				}
				got := values(out.(tensor.Tensor))
				for i := range want {
					if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
						t.Fatalf("%v, grad %v, %d core(s): element %d is %v, one GEMM gives %v", dt, grad, procs, i, got[i], want[i])
					}
					if first != nil && got[i] != first[i] {
						t.Fatalf("%v, grad %v: element %d is %v on one core and %v on two", dt, grad, i, first[i], got[i])
					}
				}
				first = got
			}
		}
	}
}

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// dense returns x as a tensor of dtype dt and the given shape.
func dense(dt tensor.Dtype, x []float64, shape ...int) G.Value {
	if dt == tensor.Float32 {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(to32(x)))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), x...)))
}

// values returns t's data as float64.
func values(t tensor.Tensor) []float64 {
	switch d := t.Data().(type) {
	case []float32:
		return to64(d)
	case []float64:
		return d
	}
	return nil
}
