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
	check := func(x []float64) {
		y := make([]float64, len(x))
		Expm1(y, x)
		for i, v := range x {
			if want := math.Expm1(v); !same(y[i], want) {
				t.Fatalf("Expm1(%v) = %v, want %v", v, y[i], want)
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
func BenchmarkExpm1(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float64, 512), make([]float64, 512)
	for i := range x {
		x[i] = -0.3 * rng.Float64()
	}
	var took [2]float64
	for i := 0; i < b.N; i++ {
		start := nanotime()
		Expm1(y, x)
		mid := nanotime()
		for j, v := range x {
			y[j] = math.Expm1(v)
		}
		took[0] += float64(mid - start)
		took[1] += float64(nanotime() - mid)
	}
	b.ReportMetric(took[0]/float64(b.N*len(x)), "ns/elem")
	b.ReportMetric(took[1]/float64(b.N*len(x)), "math-ns/elem")
	b.ReportMetric(took[1]/took[0], "math/vec")
}

func nanotime() int64 { return time.Now().UnixNano() }

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
	check := func(x []float64) {
		y := make([]float64, len(x))
		Exp(y, x)
		for i, v := range x {
			if want := math.Exp(v); !same(y[i], want) {
				t.Fatalf("Exp(%v) = %v, want %v", v, y[i], want)
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

// BenchmarkExp times Exp and math.Exp on shifted logits in [−30, 0],
// alternately.
//
//	go test ./internal/vec -run '^$' -bench 'Exp$' -cpu 1
func BenchmarkExp(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float64, 5000), make([]float64, 5000)
	for i := range x {
		x[i] = -30 * rng.Float64()
	}
	var took [2]float64
	for i := 0; i < b.N; i++ {
		start := nanotime()
		Exp(y, x)
		mid := nanotime()
		for j, v := range x {
			y[j] = math.Exp(v)
		}
		took[0] += float64(mid - start)
		took[1] += float64(nanotime() - mid)
	}
	b.ReportMetric(took[0]/float64(b.N*len(x)), "ns/elem")
	b.ReportMetric(took[1]/float64(b.N*len(x)), "math-ns/elem")
	b.ReportMetric(took[1]/took[0], "math/vec")
}
