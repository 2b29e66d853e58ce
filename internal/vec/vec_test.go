package vec

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// values returns n values with the special ones mixed in: ±0, ±Inf, NaNs
// of both signs, subnormals and ordinary numbers of both signs.
func values[T float32 | float64](rng *rand.Rand, n int) []T {
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN(), 1e-310, -1e-310, 1e-40, -1e-40, 1e39, -3.4028235677973366e38}
	x := make([]T, n)
	for i := range x {
		if rng.IntN(4) == 0 {
			x[i] = T(special[rng.IntN(len(special))])
		} else {
			x[i] = T(rng.NormFloat64())
		}
	}
	return x
}

// same reports whether a and b are the same bits, or both NaN.
func same[T float32 | float64](a, b T) bool {
	if a != a && b != b {
		return true
	}
	if x, ok := any(a).(float32); ok {
		return math.Float32bits(x) == math.Float32bits(any(b).(float32))
	}
	return math.Float64bits(float64(a)) == math.Float64bits(float64(b))
}

// The vector kernels give the scalar loops' results bit for bit (NaN for
// NaN), on every length up to a few vectors and on unaligned slices.
func TestKernelsMatchScalarLoops(t *testing.T) {
	if !useSIMD {
		t.Skip("no vector kernels here")
	}
	t.Run("float32", func(t *testing.T) { checkKernels[float32](t) })
	t.Run("float64", func(t *testing.T) { checkKernels[float64](t) })
}

func checkKernels[T float32 | float64](t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kernels := []struct {
		name string
		f    func(y, x1, x2 []T)
	}{
		{"AddReLU", AddReLU[T]},
		{"Add", Add[T]},
		{"KeepPositive", KeepPositive[T]},
		{"AddTo", func(y, x1, x2 []T) { copy(y, x1); AddTo(y, x2) }},
	}
	for _, k := range kernels {
		for n := 0; n <= 37; n++ {
			for off := 0; off < 3; off++ {
				x1, x2 := values[T](rng, n+off)[off:], values[T](rng, n+off)[off:]
				got, want := make([]T, n), make([]T, n)
				k.f(got, x1, x2)
				useSIMD = false
				k.f(want, x1, x2)
				useSIMD = true
				for i := range got {
					if !same(got[i], want[i]) {
						t.Fatalf("%s, n = %d: element %d of (%v, %v) is %v, want %v", k.name, n, i, x1[i], x2[i], got[i], want[i])
					}
				}
			}
		}
	}
}

// The conversions and the sums of squares give the scalar loops' results
// bit for bit, on every length up to a few vectors and on unaligned slices.
func TestMixedKernelsMatchScalarLoops(t *testing.T) {
	if !useSIMD {
		t.Skip("no vector kernels here")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 37; n++ {
		for off := 0; off < 3; off++ {
			x64, x32 := values[float64](rng, n+off)[off:], values[float32](rng, n+off)[off:]
			acc := values[float64](rng, n)
			type result struct {
				y32           []float32
				y64, sum, sq  []float64
				sq32, to64Sum []float64
			}
			var r [2]result
			for i, on := range []bool{true, false} {
				useSIMD = on
				r[i].y32 = make([]float32, n)
				To32(r[i].y32, x64)
				r[i].y64 = make([]float64, n)
				To64(r[i].y64, x32)
				r[i].to64Sum = make([]float64, n)
				r[i].sum = append([]float64(nil), acc...)
				To64AndAdd(r[i].to64Sum, r[i].sum, x32)
				r[i].sq = append([]float64(nil), acc...)
				AddSquares(r[i].sq, x64)
				r[i].sq32 = append([]float64(nil), acc...)
				AddSquares(r[i].sq32, x32)
			}
			useSIMD = true
			for j := 0; j < n; j++ {
				for _, c := range []struct {
					name      string
					got, want float64
				}{
					{"To64", r[0].y64[j], r[1].y64[j]},
					{"To64AndAdd's values", r[0].to64Sum[j], r[1].to64Sum[j]},
					{"To64AndAdd's sums", r[0].sum[j], r[1].sum[j]},
					{"AddSquares of float64", r[0].sq[j], r[1].sq[j]},
					{"AddSquares of float32", r[0].sq32[j], r[1].sq32[j]},
				} {
					if !same(c.got, c.want) {
						t.Fatalf("%s, n = %d: element %d is %v, want %v", c.name, n, j, c.got, c.want)
					}
				}
				if !same(r[0].y32[j], r[1].y32[j]) {
					t.Fatalf("To32, n = %d: element %d of %v is %v, want %v", n, j, x64[j], r[0].y32[j], r[1].y32[j])
				}
			}
		}
	}
}

// The kernels compute what their documentation says, on the special values
// too (with and without the vector kernels: eight elements make whole
// vectors).
func TestKernelsOnSpecialValues(t *testing.T) {
	negZero, nan := math.Copysign(0, -1), math.NaN()
	for _, on := range []bool{false, simdAvailable} {
		useSIMD = on
		z := []float64{-2, negZero, negZero, 3, nan, 1, -1, 2}
		b := []float64{1, negZero, 0, -1, 0, nan, 0, 0}
		y := make([]float64, len(z))
		AddReLU(y, z, b)
		for i, want := range []float64{0, 0, 0, 2, nan, nan, 0, 2} {
			if !same(y[i], want) {
				t.Errorf("SIMD %v: AddReLU(%v, %v) = %v, want %v", on, z[i], b[i], y[i], want)
			}
		}
		a := []float64{1, 1, -1, 5, 2, 0.5, nan, negZero}
		KeepPositive(y, z, a)
		for i, want := range []float64{-2, negZero, 0, 3, nan, 1, 0, 0} {
			if !same(y[i], want) {
				t.Errorf("SIMD %v: KeepPositive(%v, %v) = %v, want %v", on, z[i], a[i], y[i], want)
			}
		}
	}
	useSIMD = simdAvailable
}

// BenchmarkAddReLU times AddReLU on a later layer's activations of a
// 20-chain mnist-nt step (20 × 500 × 40 in float32), the vector kernels and
// the scalar loop alternately, and reports both and their ratio.
//
//	go test ./internal/vec -run '^$' -bench . -cpu 1
func BenchmarkAddReLU(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 20 * 500 * 40
	z, c, y := values[float32](rng, n), values[float32](rng, n), make([]float32, n)
	var took [2]time.Duration
	for i := 0; i < b.N; i++ {
		for j, on := range []bool{simdAvailable, false} {
			useSIMD = on
			start := time.Now()
			AddReLU(y, z, c)
			took[j] += time.Since(start)
		}
	}
	useSIMD = simdAvailable
	b.ReportMetric(float64(took[0].Nanoseconds())/float64(b.N*n), "ns/elem")
	b.ReportMetric(float64(took[1].Nanoseconds())/float64(b.N*n), "scalar-ns/elem")
	b.ReportMetric(float64(took[1])/float64(took[0]), "scalar/simd")
}

// TestFirstOutsideAndUnbounded plants values at every position of vectors
// of lengths around the kernels' groups of eight, with and without the
// kernels, and requires the first index that a scalar scan finds: values
// just beyond the bounds, on them, ±Inf and NaN (outside neither bound,
// but unbounded).
func TestFirstOutsideAndUnbounded(t *testing.T) {
	const lo, hi, r = -2.0, 3.0, 5.0
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		name               string
		v                  float64
		outside, unbounded bool
	}{
		{"below lo", math.Nextafter(lo, -inf), true, false},
		{"on lo", lo, false, false},
		{"above hi", math.Nextafter(hi, inf), true, false},
		{"on hi", hi, false, false},
		{"beyond r", math.Nextafter(r, inf), true, true},
		{"on -r", -r, true, false},
		{"-r beyond", math.Nextafter(-r, -inf), true, true},
		{"+Inf", inf, true, true},
		{"-Inf", -inf, true, true},
		{"NaN", nan, false, true},
	} {
		for _, n := range []int{0, 1, 7, 8, 9, 16, 17, 40, 43} {
			for at := -1; at < n; at++ {
				x := make([]float64, n)
				for i := range x {
					x[i] = float64(i%5) - 1.5 // within [lo, hi]
				}
				wantOut, wantUnb := -1, -1
				if at >= 0 {
					x[at] = c.v
					if c.outside {
						wantOut = at
					}
					if c.unbounded {
						wantUnb = at
					}
					if at+3 < n { // a later one must not hide it
						x[at+3] = inf
					}
					if wantOut < 0 && at+3 < n {
						wantOut = at + 3
					}
					if wantUnb < 0 && at+3 < n {
						wantUnb = at + 3
					}
				}
				for _, on := range []bool{false, simdAvailable} {
					useSIMD = on
					if got := FirstOutside(x, lo, hi); got != wantOut {
						t.Errorf("%s at %d of %d (kernels %v): FirstOutside %d, want %d", c.name, at, n, on, got, wantOut)
					}
					if got := FirstUnbounded(x, r); got != wantUnb {
						t.Errorf("%s at %d of %d (kernels %v): FirstUnbounded %d, want %d", c.name, at, n, on, got, wantUnb)
					}
				}
				useSIMD = simdAvailable
			}
		}
	}
}

// BenchmarkFirstUnbounded times FirstUnbounded and FirstOutside over a
// step's worth of a 20-chain mnist-nt state (669,000 values, none found),
// with the kernels and with the scalar loops, alternately, and reports the
// median times' ratio.
//
//	go test ./internal/vec -run '^$' -bench FirstUnbounded -cpu 1 -benchtime 200x
func BenchmarkFirstUnbounded(b *testing.B) {
	x := make([]float64, 669_000)
	for i := range x {
		x[i] = math.Sin(float64(i))
	}
	var ns [2][]float64
	for i := 0; i < b.N; i++ {
		for k, on := range []bool{simdAvailable, false} {
			useSIMD = on
			start := time.Now()
			if FirstUnbounded(x, 1e30) >= 0 || FirstOutside(x, -2, 2) >= 0 {
				b.Fatal("found one")
			}
			ns[k] = append(ns[k], float64(time.Since(start).Nanoseconds()))
		}
		useSIMD = simdAvailable
	}
	for k := range ns {
		sort.Float64s(ns[k])
	}
	kernels, scalar := ns[0][len(ns[0])/2], ns[1][len(ns[1])/2]
	b.ReportMetric(kernels/float64(2*len(x)), "ns/value")
	b.ReportMetric(scalar/float64(2*len(x)), "scalar-ns/value")
	b.ReportMetric(scalar/kernels, "scalar/kernels")
}
