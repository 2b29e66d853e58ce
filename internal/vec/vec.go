// Package vec holds element-wise kernels over float32 and float64 slices
// for the work every sampler step does per coordinate or per activation:
// bias adds with or without ReLU and ReLU's derivative, running sums,
// conversions between float64 and float32, sums of squares, guarded
// quotients, and math.Exp and math.Expm1. On amd64 with AVX2 they run
// eight (float32) or four (float64) lanes at a time, each lane doing the
// scalar loop's operations in its order, so the results are the scalar
// loops' (and the math package's) bit for bit; the build tag purego keeps
// the scalar loops.
package vec

import "math"

// AddReLU sets y[i] = max(z[i]+b[i], 0) (Go's max: NaN stays NaN, −0
// becomes +0). z and b are at least as long as y.
func AddReLU[T float32 | float64](y, z, b []T) {
	n := simdAddReLU(y, z, b)
	z, b = z[:len(y)], b[:len(y)]
	for i := n; i < len(y); i++ {
		y[i] = max(z[i]+b[i], 0)
	}
}

// Add sets y[i] = z[i] + b[i]. z and b are at least as long as y.
func Add[T float32 | float64](y, z, b []T) {
	n := simdAdd(y, z, b)
	z, b = z[:len(y)], b[:len(y)]
	for i := n; i < len(y); i++ {
		y[i] = z[i] + b[i]
	}
}

// KeepPositive sets d[i] = g[i] where a[i] > 0 and +0 elsewhere (where a[i]
// is zero, negative or NaN): the ReLU's derivative applied to g, with a the
// ReLU's output. g and a are at least as long as d.
func KeepPositive[T float32 | float64](d, g, a []T) {
	n := simdKeepPositive(d, g, a)
	g, a = g[:len(d)], a[:len(d)]
	for i := n; i < len(d); i++ {
		d[i] = keepPositive(g[i], a[i])
	}
}

// keepPositive is v where a > 0, else 0.
func keepPositive[T float32 | float64](v, a T) T {
	if a > 0 {
		return v
	}
	return 0
}

// AddTo adds x into acc: acc[i] += x[i]. x is at least as long as acc.
func AddTo[T float32 | float64](acc, x []T) {
	n := simdAdd(acc, acc, x)
	x = x[:len(acc)]
	for i := n; i < len(acc); i++ {
		acc[i] += x[i]
	}
}

// To32 sets y[i] = float32(x[i]). x is at least as long as y.
func To32(y []float32, x []float64) {
	n := simdTo32(y, x)
	x = x[:len(y)]
	for i := n; i < len(y); i++ {
		y[i] = float32(x[i])
	}
}

// To64 sets y[i] = float64(x[i]). x is at least as long as y.
func To64(y []float64, x []float32) {
	n := simdTo64(y, x)
	x = x[:len(y)]
	for i := n; i < len(y); i++ {
		y[i] = float64(x[i])
	}
}

// To64AndAdd sets y[i] = float64(x[i]) and adds it into sum[i]. x and sum
// are at least as long as y.
func To64AndAdd(y, sum []float64, x []float32) {
	n := simdTo64Add(y, sum, x)
	x, sum = x[:len(y)], sum[:len(y)]
	for i := n; i < len(y); i++ {
		y[i] = float64(x[i])
		sum[i] += y[i]
	}
}

// AddSquares adds x's squares, in float64, into acc: acc[i] +=
// float64(x[i])·float64(x[i]). x is at least as long as acc.
func AddSquares[T float32 | float64](acc []float64, x []T) {
	n := simdAddSquares(acc, x)
	x = x[:len(acc)]
	for i := n; i < len(acc); i++ {
		acc[i] += float64(x[i]) * float64(x[i])
	}
}

// Quotient sets y[i] = a[i]/b[i], or +0 where |b[i]| < tiny. a and b are at
// least as long as y.
func Quotient(y, a, b []float64, tiny float64) {
	n := simdQuotient(y, a, b, tiny)
	a, b = a[:len(y)], b[:len(y)]
	for i := n; i < len(y); i++ {
		if math.Abs(b[i]) < tiny {
			y[i] = 0
		} else {
			y[i] = a[i] / b[i]
		}
	}
}

// FirstOutside returns the first index i at which x[i] < lo or x[i] > hi
// (NaN is neither), or -1.
func FirstOutside(x []float64, lo, hi float64) int {
	for i := simdOutside(x, lo, hi); i < len(x); i++ {
		if v := x[i]; v < lo || v > hi {
			return i
		}
	}
	return -1
}

// FirstUnbounded returns the first index i at which x[i] is not within
// ±r: beyond it, or NaN. With r = math.MaxFloat64 it is the first x[i]
// that is not finite.
func FirstUnbounded(x []float64, r float64) int {
	for i := simdUnbounded(x, r); i < len(x); i++ {
		if !(math.Abs(x[i]) <= r) {
			return i
		}
	}
	return -1
}
