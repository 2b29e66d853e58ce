package train

import (
	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// InputRanges are the ranges of the networks' inputs over a stretch of
// training: the energy input u, the momentum input m·p and the gradient
// input s_g·∇Ũ/N of every step the forward unrolls took; nil before any.
// A trained sampler records those of its last epoch as its domain
// (nnsghmc.Domain).
type InputRanges struct {
	Energy   *nnsghmc.Range `json:"energy"`
	Momentum *nnsghmc.Range `json:"momentum"`
	Gradient *nnsghmc.Range `json:"gradient"`
}

// widen widens the range at r to include scale·x_i for every value of x.
// The extremes are found span by span among the cores (spans.For) and
// then across spans; min and max are exact, so the range does not depend
// on the number of cores.
func widen(r **nnsghmc.Range, x []float64, scale float64) {
	if len(x) == 0 {
		return
	}
	parts := make([][2]float64, (len(x)+spans.ElementSpan-1)/spans.ElementSpan)
	spans.For(len(x), func(a, b int) {
		lo, hi := scale*x[a], scale*x[a]
		for _, v := range x[a+1 : b] {
			v *= scale
			lo, hi = min(lo, v), max(hi, v)
		}
		parts[a/spans.ElementSpan] = [2]float64{lo, hi}
	})
	lo, hi := parts[0][0], parts[0][1]
	for _, p := range parts[1:] {
		lo, hi = min(lo, p[0]), max(hi, p[1])
	}
	if *r == nil {
		*r = &nnsghmc.Range{Min: lo, Max: hi}
		return
	}
	(*r).Add(lo)
	(*r).Add(hi)
}

// merge widens a to include b.
func (a *InputRanges) merge(b *InputRanges) {
	for _, p := range []struct{ to, from **nnsghmc.Range }{{&a.Energy, &b.Energy}, {&a.Momentum, &b.Momentum}, {&a.Gradient, &b.Gradient}} {
		if *p.from != nil {
			widen(p.to, []float64{(*p.from).Min, (*p.from).Max}, 1)
		}
	}
}

// clone returns a copy of a, nil for nil.
func (a *InputRanges) clone() *InputRanges {
	if a == nil {
		return nil
	}
	c := &InputRanges{}
	c.merge(a)
	return c
}

// InputRanges returns the ranges of the networks' inputs over the last
// complete epoch (over the epoch under way before one completes; nil
// before any unroll).
func (t *Trainer) InputRanges() *InputRanges {
	if t.lastRanges != nil {
		return t.lastRanges.clone()
	}
	return t.ranges.clone()
}
