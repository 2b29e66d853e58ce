package coordnet

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// addLoop is C += A·W by the scalar loop, each element's products added in
// the order of l: the reference of gemmSIMD.
func addLoop(c, a, w []float64, rows, fin, fout int) {
	for r := 0; r < rows; r++ {
		for l := 0; l < fin; l++ {
			v := a[r*fin+l]
			for j := 0; j < fout; j++ {
				c[r*fout+j] += v * w[l*fout+j]
			}
		}
	}
}

// gemmSIMD adds what the scalar loop adds, bit for bit, on the rows it
// does, and leaves the others alone.
func TestGemmSIMDMatchesTheLoop(t *testing.T) {
	if !useSIMD {
		t.Skip("no vector kernel on this processor or build")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64() * 3
		}
		return x
	}
	for _, s := range []struct{ rows, fin, fout int }{{4, 1, 8}, {7, 3, 16}, {256, 40, 40}, {13, 40, 40}, {9, 17, 24}, {3, 40, 40}, {8, 5, 12}} {
		a, w, c := fill(s.rows*s.fin), fill(s.fin*s.fout), fill(s.rows*s.fout)
		want := append([]float64(nil), c...)
		addLoop(want, a, w, s.rows, s.fin, s.fout)
		got := append([]float64(nil), c...)
		done := gemmSIMD(got, a, w, s.rows, s.fin, s.fout)
		wantDone := s.rows &^ 3
		if s.fout%8 != 0 {
			wantDone = 0
		}
		if done != wantDone {
			t.Fatalf("%+v: %d rows done, want %d", s, done, wantDone)
		}
		for i := range got {
			r := i / s.fout
			if r < done && got[i] != want[i] || r >= done && got[i] != c[i] {
				t.Fatalf("%+v: element %d (row %d) is %v, want %v (rows done %d)", s, i, r, got[i], want[i], done)
			}
		}
	}
}

// BenchmarkGemm40 times, on one block of the toy's 40 × 40 hidden layer,
// the AVX2 kernel and gonum's Dgemm (which the larger layers take where the
// kernel does not apply), alternately in one process, and reports the
// kernel's rate and the ratio of the medians.
//
//	go test ./coordnet -run '^$' -bench Gemm40 -cpu 1
func BenchmarkGemm40(b *testing.B) {
	const rows, n, reps = mlpBlock, 40, 200
	a, w, c := make([]float64, rows*n), make([]float64, n*n), make([]float64, rows*n)
	for i := range a {
		a[i] = float64(i%11) - 5
	}
	for i := range w {
		w[i] = float64(i%7) * 0.1
	}
	impl := gonum.Implementation{}
	kernels := [2]func(){
		func() { gemmSIMD(c, a, w, rows, n, n) },
		func() { impl.Dgemm(blas.NoTrans, blas.NoTrans, rows, n, n, 1, a, n, w, n, 1, c, n) },
	}
	var times [2][]float64
	for range b.N {
		for k, f := range kernels {
			start := time.Now()
			for range reps {
				f()
			}
			times[k] = append(times[k], time.Since(start).Seconds()/reps)
		}
	}
	med := func(x []float64) float64 { slices.Sort(x); return x[len(x)/2] }
	kernel, dgemm := med(times[0]), med(times[1])
	b.ReportMetric(2*rows*n*n/kernel/1e9, "kernel-GFLOP/s")
	b.ReportMetric(dgemm/kernel, "dgemm/kernel")
}

// A network with a hidden layer larger than smallLayer (the toy's 40 × 40)
// gives with the AVX2 kernel what it gives without: its values bit for
// bit (BLAS sums them in the kernel's order) and every derivative kind to
// rounding (BLAS's dot products sum back in another order), on a number of
// rows that leaves rows for the loops after the kernel's groups of four.
func TestLargeLayersTakeTheKernel(t *testing.T) {
	if !useSIMD {
		t.Skip("no vector kernel on this processor or build")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	w := New(3, []int{40, 40}, Tanh, rng)
	n := 3*mlpBlock + 18
	x, g, h := make([]float64, 3*n), make([]float64, n), make([]float64, 3*n)
	for i := range x {
		x[i], h[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	run := func(simd bool, kind Kind) []float64 {
		defer func(old bool) { useSIMD = old }(useSIMD)
		useSIMD = simd
		data := append([][]float64{x}, w.Params()...)
		size := n
		switch kind {
		case InputGrad:
			data, size = append(data, g), 3*n
		case ParamGrad:
			data, size = append(data, g), w.NumParams()
		case JVP:
			data = append(data, h)
		case InputHVP:
			data, size = append(data, g, h), 3*n
		case Mixed:
			data, size = append(data, g, h), w.NumParams()
		}
		out := make([]float64, size)
		w.Spec(kind).compute(data, out, nil)
		return out
	}
	for _, kind := range []Kind{Value, InputGrad, ParamGrad, JVP, InputHVP, Mixed} {
		got, want := run(true, kind), run(false, kind)
		for i := range got {
			if kind == Value && got[i] != want[i] || math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("%s: element %d: %v with the kernel, %v without", kindNames[kind], i, got[i], want[i])
			}
		}
	}
}
