package vec

import "math"

// The constants of Go's math.Expm1 (src/math/expm1.go, go1.26, from
// FreeBSD's s_expm1.c), spelled as there so that they round alike.
const (
	expm1Ln2Half = 3.46573590279972654709e-01 // 0x3fd62e42fefa39ef
	expm1Tiny    = 1.0 / (1 << 54)            // 2**-54, below which Expm1(x) is x
	expm1Q1      = -3.33333333333331316428e-02
	expm1Q2      = 1.58730158725481460165e-03
	expm1Q3      = -7.93650757867487942473e-05
	expm1Q4      = 4.00821782732936239552e-06
	expm1Q5      = -2.01099218183624371326e-07
)

// expm1Consts are the constants of the vector kernel, in its order.
var expm1Consts = [9]float64{0.5, expm1Q5, expm1Q4, expm1Q3, expm1Q2, expm1Q1, 1, 3, 6}

// Expm1 sets y[i] = math.Expm1(x[i]), bit for bit. Where |x| ≤ ½·ln 2 (the
// exponential friction step's usual arguments) the vector kernel runs
// math.Expm1's own operations on four lanes at a time; elsewhere, and for
// NaN, math.Expm1 itself. x is at least as long as y.
func Expm1(y, x []float64) {
	n := simdExpm1Small(y, x)
	x = x[:len(y)]
	for i, v := range x[:n] {
		if !(math.Abs(v) <= expm1Ln2Half) {
			y[i] = math.Expm1(v)
		}
	}
	for i := n; i < len(y); i++ {
		y[i] = math.Expm1(x[i])
	}
}
