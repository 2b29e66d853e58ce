//go:build !purego

package vec

import "golang.org/x/sys/cpu"

// useSIMD enables the AVX2 kernels (tests switch it off to compare).
var useSIMD = simdAvailable

// simdAvailable reports whether the processor has AVX2.
var simdAvailable = cpu.X86.HasAVX2

// The simd functions run their kernel on the longest prefix of y that is a
// whole number of vectors and return its length (0 without AVX2).

// fours returns the length of the longest prefix of n elements that is a
// whole number of four-lane vectors, or 0 where the kernels are off.
func fours(n int) int {
	if !useSIMD {
		return 0
	}
	return n &^ 3
}

func simdAddReLU[T float32 | float64](y, z, b []T) int {
	return run(y, z, b, addReLU32, addReLU64)
}

func simdAdd[T float32 | float64](y, z, b []T) int {
	return run(y, z, b, add32, add64)
}

func simdKeepPositive[T float32 | float64](d, g, a []T) int {
	return run(d, g, a, keepPositive32, keepPositive64)
}

// run calls k32 or k64, by T, on the prefix of whole vectors of y.
func run[T float32 | float64](y, x1, x2 []T, k32 func(y, x1, x2 *float32, n int), k64 func(y, x1, x2 *float64, n int)) int {
	if !useSIMD {
		return 0
	}
	switch y := any(y).(type) {
	case []float32:
		n := len(y) &^ 7
		if n == 0 {
			return 0
		}
		x1, x2 := any(x1).([]float32)[:n], any(x2).([]float32)[:n]
		k32(&y[0], &x1[0], &x2[0], n)
		return n
	case []float64:
		n := len(y) &^ 3
		if n == 0 {
			return 0
		}
		x1, x2 := any(x1).([]float64)[:n], any(x2).([]float64)[:n]
		k64(&y[0], &x1[0], &x2[0], n)
		return n
	}
	return 0
}

//go:noescape
func addReLU32(y, x1, x2 *float32, n int)

//go:noescape
func addReLU64(y, x1, x2 *float64, n int)

//go:noescape
func add32(y, x1, x2 *float32, n int)

//go:noescape
func add64(y, x1, x2 *float64, n int)

//go:noescape
func keepPositive32(y, x1, x2 *float32, n int)

//go:noescape
func keepPositive64(y, x1, x2 *float64, n int)

func simdTo32(y []float32, x []float64) int {
	n := fours(len(y))
	if n > 0 {
		to32(&y[0], &x[:n][0], n)
	}
	return n
}

func simdTo64(y []float64, x []float32) int {
	n := fours(len(y))
	if n > 0 {
		to64(&y[0], &x[:n][0], n)
	}
	return n
}

func simdTo64Add(y, sum []float64, x []float32) int {
	n := fours(len(y))
	if n > 0 {
		to64Add(&y[0], &sum[:n][0], &x[:n][0], n)
	}
	return n
}

func simdAddSquares[T float32 | float64](acc []float64, x []T) int {
	n := fours(len(acc))
	if n == 0 {
		return 0
	}
	switch x := any(x).(type) {
	case []float32:
		addSquares32(&acc[0], &x[:n][0], n)
	case []float64:
		addSquares64(&acc[0], &x[:n][0], n)
	}
	return n
}

//go:noescape
func to32(y *float32, x *float64, n int)

//go:noescape
func to64(y *float64, x *float32, n int)

//go:noescape
func to64Add(y, sum *float64, x *float32, n int)

//go:noescape
func addSquares32(acc *float64, x *float32, n int)

//go:noescape
func addSquares64(acc *float64, x *float64, n int)

func simdExpm1Small(y, x []float64) int {
	n := fours(len(y))
	if n > 0 {
		expm1Small(&y[0], &x[:n][0], &expm1Consts, n)
	}
	return n
}

func simdQuotient(y, a, b []float64, tiny float64) int {
	n := fours(len(y))
	if n > 0 {
		quotient(&y[0], &a[:n][0], &b[:n][0], tiny, n)
	}
	return n
}

//go:noescape
func expm1Small(y, x *float64, c *[9]float64, n int)

//go:noescape
func quotient(y, a, b *float64, tiny float64, n int)

// expSIMD enables the vector exponential: its kernel follows math.Exp's
// fused multiply-add path, which Go takes where the processor has AVX and
// FMA.
var expSIMD = cpu.X86.HasAVX && cpu.X86.HasFMA

func simdExp(y, x []float64) int {
	if !expSIMD {
		return 0
	}
	n := fours(len(y))
	if n > 0 {
		expFMA(&y[0], &x[:n][0], &expConsts, n)
	}
	return n
}

//go:noescape
func expFMA(y, x *float64, c *[14]float64, n int)

// simdOutside returns where FirstOutside's scalar scan of x starts: the
// first group of eight that holds one, or the end of the whole groups.
func simdOutside(x []float64, lo, hi float64) int {
	n := fours(len(x)) &^ 7
	if n == 0 {
		return 0
	}
	return outside(&x[0], lo, hi, n)
}

// simdUnbounded is simdOutside for FirstUnbounded.
func simdUnbounded(x []float64, r float64) int {
	n := fours(len(x)) &^ 7
	if n == 0 {
		return 0
	}
	return unbounded(&x[0], r, n)
}

//go:noescape
func outside(x *float64, lo, hi float64, n int) int

//go:noescape
func unbounded(x *float64, r float64, n int) int
