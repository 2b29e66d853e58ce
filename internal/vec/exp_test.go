package vec

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// Expm1 is math.Expm1 bit for bit: on the vector kernel's range, at its
// edges, beyond them and on the special values, on every length up to a
// few vectors.
func TestExpm1IsTheStandardLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	edges := []float64{expm1Ln2Half, math.Nextafter(expm1Ln2Half, 1), math.Nextafter(expm1Ln2Half, 0), expm1Tiny,
		math.Nextafter(expm1Tiny, 0), math.Nextafter(expm1Tiny, 1), 0, 1e-300, 5e-324, 1, 40, 800, math.Inf(1), math.NaN()}
	var x []float64
	for _, e := range edges {
		x = append(x, e, -e)
	}
	for range 1 << 16 {
		switch rng.IntN(4) {
		case 0:
			x = append(x, (rng.Float64()*2-1)*expm1Ln2Half)
		case 1:
			x = append(x, -rng.Float64()*3)
		case 2:
			x = append(x, (rng.Float64()*2-1)*math.Ldexp(1, -rng.IntN(70)))
		default:
			x = append(x, rng.NormFloat64()*50)
		}
	}
	checkAgainst(t, "Expm1", Expm1, math.Expm1, x)
}

// checkAgainst checks that f(y, x) sets y[i] to want(x[i]) bit for bit, on x
// and on its first slices of every length up to a few vectors, aligned or
// not.
func checkAgainst(t *testing.T, name string, f func(y, x []float64), want func(float64) float64, x []float64) {
	t.Helper()
	check := func(x []float64) {
		y := make([]float64, len(x))
		f(y, x)
		for i, v := range x {
			if w := want(v); !same(y[i], w) {
				t.Fatalf("%s(%v) = %v, want %v", name, v, y[i], w)
			}
		}
	}
	check(x)
	for n := 0; n <= 13; n++ {
		for off := 0; off < 3; off++ {
			check(x[off : off+n])
		}
	}
}

// Quotient is a/b or +0 where |b| < tiny, as the scalar loop, NaN and
// infinities included.
func TestQuotient(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const tiny = 1e-10
	for n := 0; n <= 37; n++ {
		a, b := values[float64](rng, n), values[float64](rng, n)
		for i := range b {
			if rng.IntN(5) == 0 {
				b[i] = (rng.Float64()*2 - 1) * 2 * tiny // near the cut
			}
		}
		y := make([]float64, n)
		Quotient(y, a, b, tiny)
		for i := range y {
			want := a[i] / b[i]
			if math.Abs(b[i]) < tiny {
				want = 0
			}
			if !same(y[i], want) || (want == 0 && math.Signbit(y[i]) != math.Signbit(want)) {
				t.Fatalf("n = %d: %v / %v gives %v, want %v", n, a[i], b[i], y[i], want)
			}
		}
	}
}

// BenchmarkExpm1 times Expm1 and math.Expm1 on the friction step's
// arguments, −η·D_f in [−0.3, 0], alternately.
//
//	go test ./internal/vec -run '^$' -bench Expm1 -cpu 1
func BenchmarkExpm1(b *testing.B) { benchAgainst(b, Expm1, math.Expm1, 512, -0.3) }

// BenchmarkExp times Exp and math.Exp on shifted logits in [−30, 0],
// alternately.
//
//	go test ./internal/vec -run '^$' -bench 'Exp$' -cpu 1
func BenchmarkExp(b *testing.B) { benchAgainst(b, Exp, math.Exp, 5000, -30) }

// benchAgainst times f and the standard library's g alternately on n
// arguments uniform between lo and 0, and reports both and their ratio.
func benchAgainst(b *testing.B, f func(y, x []float64), g func(float64) float64, n int, lo float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = lo * rng.Float64()
	}
	var took [2]time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		f(y, x)
		mid := time.Now()
		for j, v := range x {
			y[j] = g(v)
		}
		took[0] += mid.Sub(start)
		took[1] += time.Since(mid)
	}
	b.ReportMetric(float64(took[0].Nanoseconds())/float64(b.N*n), "ns/elem")
	b.ReportMetric(float64(took[1].Nanoseconds())/float64(b.N*n), "math-ns/elem")
	b.ReportMetric(float64(took[1])/float64(took[0]), "math/vec")
}

// Exp is math.Exp bit for bit: on the vector kernel's range, at its edges,
// beyond them and on the special values, on every length up to a few
// vectors.
func TestExpIsTheStandardLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	x := []float64{0, math.Copysign(0, -1), expMax, -expMax, math.Nextafter(expMax, 1000), math.Nextafter(-expMax, -1000),
		709.78, -745.1, -708.5, 1e-300, 5e-324, math.Inf(1), math.Inf(-1), math.NaN(), 0.5 * math.Ln2, -0.5 * math.Ln2}
	for range 1 << 16 {
		switch rng.IntN(3) {
		case 0:
			x = append(x, -rng.Float64()*30) // log-softmax's shifted logits
		case 1:
			x = append(x, (rng.Float64()*2-1)*expMax)
		default:
			x = append(x, rng.NormFloat64()*math.Ldexp(1, rng.IntN(12)-6))
		}
	}
	checkAgainst(t, "Exp", Exp, math.Exp, x)
}
