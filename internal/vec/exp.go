package vec

import "math"

// expConsts are the constants of Go's amd64 math.Exp (src/math/exp_amd64.s,
// go1.26), spelled as there so that they round alike, in the vector
// kernel's order, and the exponent's bias as an integer's bits.
var expConsts = [14]float64{
	1.4426950408889634073599246810018920,                  // log₂e
	0.69314718055966295651160180568695068359375,           // ln 2, upper part
	0.28235290563031577122588448175013436025525412068e-12, // ln 2, lower part
	0.0625,
	2.4801587301587301587e-5, 1.9841269841269841270e-4, 1.3888888888888888889e-3,
	8.3333333333333333333e-3, 4.1666666666666666667e-2, 1.6666666666666666667e-1,
	0.5, 1, 2,
	math.Float64frombits(1023),
}

// expMax bounds the arguments of the vector kernel: their exponents and
// results stay normal.
const expMax = 700

// Exp sets y[i] = math.Exp(x[i]), bit for bit. On amd64 with AVX2 and FMA,
// where |x| ≤ 700, the vector kernel runs math.Exp's own operations on four
// lanes at a time; elsewhere, and for NaN, math.Exp itself. x is at least
// as long as y and does not overlap it.
func Exp(y, x []float64) {
	n := simdExp(y, x)
	x = x[:len(y)]
	for i := range n {
		if v := x[i]; !(math.Abs(v) <= expMax) {
			y[i] = math.Exp(v)
		}
	}
	for i := n; i < len(y); i++ {
		y[i] = math.Exp(x[i])
	}
}
