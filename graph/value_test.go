package graph

import (
	"runtime"
	"testing"

	G "gorgonia.org/gorgonia"
)

// SetValue, Value and ValueAndAdd copy values over several spans of the
// cores exactly, in both dtypes and on one core and on two, and
// ValueAndAdd adds the value into its sums.
func TestValuesAcrossSpans(t *testing.T) {
	const n = 40_000 // three spans of spans.ElementSpan
	src := make([]float64, n)
	for i := range src {
		src[i] = float64(i%1000) / 8 // exact in float32
	}
	for _, dt := range []Dtype{Float64, Float32} {
		for _, procs := range []int{1, 2} {
			old := runtime.GOMAXPROCS(procs)
			g := G.NewGraph()
			x := Input(g, dt, "x", n)
			if err := SetValue(x, src); err != nil {
				t.Fatal(err)
			}
			got, err := Value(x, nil)
			if err != nil {
				t.Fatal(err)
			}
			sum := make([]float64, n)
			for i := range sum {
				sum[i] = 1
			}
			also, err := ValueAndAdd(x, nil, sum)
			runtime.GOMAXPROCS(old)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range src {
				if got[i] != v || also[i] != v || sum[i] != v+1 {
					t.Fatalf("%v, %d core(s), element %d: Value %v, ValueAndAdd %v and sum %v, want %v and %v", dt, procs, i, got[i], also[i], sum[i], v, v+1)
				}
			}
			if _, err := ValueAndAdd(x, nil, sum[1:]); err == nil {
				t.Errorf("%v: ValueAndAdd with %d sums for %d values: no error", dt, n-1, n)
			}
		}
	}
}
