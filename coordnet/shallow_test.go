package coordnet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// sameBits reports whether a and b have the same bits, or are both NaN:
// where two NaNs meet in an addition, x86 returns the first operand's,
// and which operand of the commutative a+b comes first in Go's compiled
// code is the register allocator's choice (a NaN's sign differs between
// the race build and the plain one), so no kernel can promise Go's NaN
// bits.
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b
}

// reductionCase is a network of one hidden layer of h ReLU units with in
// inputs in a kernel, ready for its shallow reductions, with rows of x, g
// and hd.
type reductionCase struct {
	k         *mlpKernel
	b0, w1    []float64
	x, g, hd  []float64
	in, h, np int
}

// awkward returns a normal number, or now and then a zero of either sign,
// a huge or tiny (subnormal) magnitude or, where inf, an infinity.
func awkward(rng *rand.Rand, inf bool) float64 {
	switch rng.IntN(16) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	case 2:
		return 1e150 * rng.NormFloat64()
	case 3:
		return 1e-310 * rng.NormFloat64()
	case 4:
		if inf {
			return math.Inf(1 - 2*rng.IntN(2))
		}
	}
	return rng.NormFloat64()
}

// newReductionCase draws a case. Unit 0 has no bias, unit 1 the weight 1
// on input 0 and unit 2 a −0 weight on input 1; among the rows, a row of
// zeros (where unit 0's z is exactly 0) and rows with x_0 = −b0_1 (where
// unit 1's z is exactly 0 when x_1 is a zero). Infinities, which make
// most sums NaN, are only in cases of a few rows.
func newReductionCase(rng *rand.Rand, in, h, rows int) reductionCase {
	w := New(in, []int{h}, ReLU, rng)
	w.B[0][0] = 0
	w.W[0][1] = 1 // W0[0,1]
	if h > 2 {
		w.W[0][h+2] = math.Copysign(0, -1) // W0[1,2]
	}
	op := w.Spec(Mixed)
	c := reductionCase{k: newMLPKernel(op, w.Params()), in: in, h: h, np: w.NumParams()}
	c.b0, c.w1, _ = c.k.shallowParams()
	c.x, c.g, c.hd = make([]float64, in*rows), make([]float64, rows), make([]float64, in*rows)
	for r := 0; r < rows; r++ {
		for i := 0; i < in; i++ {
			c.x[in*r+i], c.hd[in*r+i] = awkward(rng, rows <= 5), awkward(rng, rows <= 5)
		}
		c.g[r] = awkward(rng, rows <= 5)
		switch r % 7 {
		case 2:
			clear(c.x[in*r : in*(r+1)])
		case 5:
			c.x[in*r] = -c.b0[1]
			c.x[in*r+1] = 0
		case 6:
			c.x[in*r] = -c.b0[1]
		}
	}
	return c
}

// run applies a reduction kernel of the case's kernel, with the AVX2
// kernels or without, to dp (which it adds into) and returns the result.
func (c reductionCase) run(mixed, simd bool, dp []float64) []float64 {
	dp = append([]float64(nil), dp...)
	useSIMD = simd
	defer func() { useSIMD = simdAvailable }()
	k, in, h := c.k, c.in, c.h
	dw0, db0, dw1 := dp[:in*h], dp[in*h:in*h+h], dp[in*h+h:in*h+2*h]
	switch {
	case mixed && in == 2:
		k.shallowReLUMixed2(c.x, c.g, c.hd, dw0, dw1, c.b0, c.w1)
	case mixed:
		k.shallowReLUMixed3(c.x, c.g, c.hd, dw0, dw1, c.b0, c.w1)
	case in == 2:
		k.shallowReLUParamGrad2(c.x, c.g, dw0, db0, dw1, c.b0, c.w1)
	default:
		k.shallowReLUParamGrad3(c.x, c.g, dw0, db0, dw1, c.b0, c.w1)
	}
	return dp
}

// TestShallowReductionsAVX2 requires the AVX2 kernels of the ReLU
// reductions shallowReLUParamGrad2/3 and shallowReLUMixed2/3 to give the
// Go kernels' sums bit for bit (a NaN for a NaN: see sameBits), for
// numbers of hidden units below, at and above multiples of the vector
// width and numbers of rows from none to many, on inputs with zeros of
// both signs, pre-activations exactly zero, huge, tiny and infinite
// values, the sums starting from nonzero values (and a −0).
func TestShallowReductionsAVX2(t *testing.T) {
	if !simdAvailable {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(11, 3))
	for _, in := range []int{2, 3} {
		for _, h := range []int{2, 3, 4, 5, 7, 8, 10, 13, 16} {
			for _, rows := range []int{0, 1, 3, 4, 5, 17, 1000} {
				c := newReductionCase(rng, in, h, rows)
				dp := make([]float64, c.np)
				for i := range dp {
					dp[i] = rng.NormFloat64()
				}
				dp[1] = math.Copysign(0, -1)
				for _, mixed := range []bool{false, true} {
					want, got := c.run(mixed, false, dp), c.run(mixed, true, dp)
					for i := range want {
						if !sameBits(got[i], want[i]) {
							t.Fatalf("%d inputs, %d units, %d rows, mixed %v: gradient %d is %v (%#x) with AVX2, %v (%#x) in Go",
								in, h, rows, mixed, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
						}
					}
				}
			}
		}
	}
}

// TestShallowValuesAVX2 requires the AVX2 kernels of shallowReLUValue2
// and 3 to give the Go kernels' values bit for bit (a NaN for a NaN), for
// numbers of hidden units and rows below, at and above multiples of the
// vector widths, on inputs like TestShallowReductionsAVX2's, infinities
// included (a value has no sum over rows): pre-activations exactly ±0 and
// NaN (an infinite input times a zero weight) among them.
func TestShallowValuesAVX2(t *testing.T) {
	if !simdAvailable {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(11, 4))
	for _, in := range []int{2, 3} {
		for _, h := range []int{2, 3, 4, 5, 7, 8, 10, 13, 16} {
			for _, rows := range []int{0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 1000} {
				c := newReductionCase(rng, in, h, 0)
				c.x = make([]float64, in*rows)
				for i := range c.x {
					c.x[i] = awkward(rng, true)
				}
				for r := 5; r < rows; r += 7 {
					c.x[in*r], c.x[in*r+1] = -c.b0[1], 0
				}
				b1 := c.k.params[3][0]
				var outs [2][]float64
				for i, simd := range []bool{false, true} {
					useSIMD = simd
					outs[i] = make([]float64, rows)
					if in == 2 {
						c.k.shallowReLUValue2(c.x, rows, outs[i], c.b0, c.w1, b1)
					} else {
						c.k.shallowReLUValue3(c.x, rows, outs[i], c.b0, c.w1, b1)
					}
					useSIMD = simdAvailable
				}
				want, got := outs[0], outs[1]
				for r := range want {
					if !sameBits(got[r], want[r]) {
						t.Fatalf("%d inputs, %d units, %d rows: row %d is %v (%#x) with AVX2, %v (%#x) in Go",
							in, h, rows, r, got[r], math.Float64bits(got[r]), want[r], math.Float64bits(want[r]))
					}
				}
			}
		}
	}
}

// BenchmarkShallowKernels times the ReLU kernels of f_Q's and f_D's
// shapes (2 and 3 inputs, 10 hidden units) that have AVX2 versions, the
// values and the reductions, on 32768 rows in one call, in Go and with
// the AVX2 kernels where the machine has them.
//
//	go test ./coordnet -run '^$' -bench ShallowKernels
func BenchmarkShallowKernels(b *testing.B) {
	const rows = 1 << 15
	for _, in := range []int{2, 3} {
		rng := rand.New(rand.NewPCG(1, 1))
		c := newReductionCase(rng, in, 10, rows)
		for i := range c.x {
			c.x[i], c.hd[i] = rng.NormFloat64(), rng.NormFloat64()
		}
		for i := range c.g {
			c.g[i] = rng.NormFloat64()
		}
		dp, out := make([]float64, c.np), make([]float64, rows)
		b1 := c.k.params[3][0]
		for _, kind := range []string{"value", "paramgrad", "mixed"} {
			for _, simd := range []bool{false, true} {
				name := "go"
				if simd {
					if !simdAvailable {
						continue
					}
					name = "avx2"
				}
				b.Run(fmt.Sprintf("in%d/%s/%s", in, kind, name), func(b *testing.B) {
					for b.Loop() {
						switch {
						case kind != "value":
							c.run(kind == "mixed", simd, dp)
						case in == 2:
							useSIMD = simd
							c.k.shallowReLUValue2(c.x, rows, out, c.b0, c.w1, b1)
						default:
							useSIMD = simd
							c.k.shallowReLUValue3(c.x, rows, out, c.b0, c.w1, b1)
						}
					}
					useSIMD = simdAvailable
					b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*rows), "ns/row")
				})
			}
		}
	}
}
