package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// TestWidenMatchesOnePass checks that the span-by-span range of widen is,
// bit for bit (NaN as NaN), that of one pass over the values, at lengths around the span
// size, with the extremes in any span, with NaN and with signed zeros.
func TestWidenMatchesOnePass(t *testing.T) {
	onePass := func(x []float64, scale float64) (lo, hi float64) {
		lo, hi = scale*x[0], scale*x[0]
		for _, v := range x[1:] {
			lo, hi = min(lo, scale*v), max(hi, scale*v)
		}
		return lo, hi
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const s = spans.ElementSpan
	for _, tc := range []struct {
		name string
		n    int
		set  map[int]float64 // values placed at these indices
	}{
		{"one", 1, nil},
		{"under a span", s - 1, nil},
		{"a span and one", s + 1, map[int]float64{s: 1e9}},
		{"extremes in the third span", 3*s + 17, map[int]float64{2*s + 5: -1e9, 2*s + 6: 1e9}},
		{"NaN in the last span", 2*s + 3, map[int]float64{2*s + 1: math.NaN()}},
		{"signed zeros", 2 * s, map[int]float64{0: 0, s: math.Copysign(0, -1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := make([]float64, tc.n)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			if tc.name == "signed zeros" {
				clear(x)
			}
			for i, v := range tc.set {
				x[i] = v
			}
			for _, scale := range []float64{1, -0.5} {
				var r *nnsghmc.Range
				widen(&r, x, scale)
				lo, hi := onePass(x, scale)
				if !same(r.Min, lo) || !same(r.Max, hi) {
					t.Errorf("scale %g: widen gives [%v, %v], one pass [%v, %v]", scale, r.Min, r.Max, lo, hi)
				}
			}
		})
	}
}

// same reports whether a and b have the same bits or are both NaN.
func same(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}
