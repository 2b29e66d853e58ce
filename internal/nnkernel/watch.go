package nnkernel

import (
	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/internal/vec"
	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// This file holds what a step looks for besides its update: a position or
// momentum that diverged, and network inputs outside the bounds a caller
// watches. The fused steps look while a block is in cache, instead of
// passing over the state again after the step.

// Bounds is the closed interval [Lo, Hi].
type Bounds struct{ Lo, Hi float64 }

// An Outlier is the coordinate at which a network input lay outside its
// watched bounds, and the input's value there; Coord is -1 for none.
type Outlier struct {
	Coord int
	Value float64
}

var (
	noOutlier  = Outlier{Coord: -1}
	noOutliers = [2]Outlier{noOutlier, noOutlier}
)

// Watch sets the bounds outside which the following steps report the
// networks' momentum input m·p_t and gradient input s_g·∇Ũ/N (see Far);
// nil for an input not to watch.
func (s *Kernel) Watch(momentum, gradient *Bounds) { s.watch = [2]*Bounds{momentum, gradient} }

// Far returns the first coordinate at which the last step's momentum
// input, and its gradient input, lay outside the bounds of Watch.
func (s *Kernel) Far() (momentum, gradient Outlier) { return s.far[0], s.far[1] }

// finds is what a step found in a span of coordinates: the first position
// and momentum, after the update, that are not finite or beyond
// ±samplers.Runaway (-1 for none), and the first momentum and gradient
// inputs outside the watched bounds.
type finds struct {
	position, momentum int
	far                [2]Outlier
}

var nothingFound = finds{position: -1, momentum: -1, far: noOutliers}

// newFinds returns the finds of n coordinates in spans of span, nothing
// found yet, in f's storage where it has room.
func newFinds(f []finds, n, span int) []finds {
	spans := (n + span - 1) / span
	if cap(f) < spans {
		f = make([]finds, spans)
	}
	f = f[:spans]
	for i := range f {
		f[i] = nothingFound
	}
	return f
}

// lookInputs records the first of the momentum inputs x and the gradient
// inputs g of the coordinates from lo on outside the watched bounds w, if
// the span has none yet.
func (f *finds) lookInputs(w *[2]*Bounds, lo int, x, g []float64) {
	for k, in := range [2][]float64{x, g} {
		if f.far[k].Coord < 0 && w[k] != nil {
			if i := vec.FirstOutside(in, w[k].Lo, w[k].Hi); i >= 0 {
				f.far[k] = Outlier{lo + i, in[i]}
			}
		}
	}
}

// lookState records the first of the positions theta and the momenta p of
// the coordinates from lo on that are not finite or beyond
// ±samplers.Runaway, if the span has none yet.
func (f *finds) lookState(lo int, theta, p []float64) {
	if f.position < 0 {
		if i := vec.FirstUnbounded(theta, samplers.Runaway); i >= 0 {
			f.position = lo + i
		}
	}
	if f.momentum < 0 {
		if i := vec.FirstUnbounded(p, samplers.Runaway); i >= 0 {
			f.momentum = lo + i
		}
	}
}

// first returns the first of the spans' finds: each kind from the first
// span that found one.
func first(spanFinds []finds) finds {
	f := nothingFound
	for _, s := range spanFinds {
		if f.position < 0 {
			f.position = s.position
		}
		if f.momentum < 0 {
			f.momentum = s.momentum
		}
		for k := range f.far {
			if f.far[k].Coord < 0 {
				f.far[k] = s.far[k]
			}
		}
	}
	return f
}

// divergence is what samplers.CheckState returns for a state in which f
// was found, at step st.Steps, with k chains.
func (f finds) divergence(st *samplers.State, k int) error {
	for _, c := range []struct {
		i    int
		what string
	}{{f.position, "position"}, {f.momentum, "momentum"}} {
		if c.i >= 0 {
			return &samplers.DivergenceError{Step: st.Steps, Chain: c.i % k, What: c.what}
		}
	}
	return nil
}

// outlier returns the first coordinate i of x at which scale·x[i] lies
// outside b, looking over spans shared out among the cores: the generic
// step's lookInputs.
func outlier(b *Bounds, scale float64, x []float64) Outlier {
	if b == nil {
		return noOutlier
	}
	i := spans.First(len(x), func(lo, hi int) int {
		for i, v := range x[lo:hi] {
			if v := scale * v; v < b.Lo || v > b.Hi {
				return lo + i
			}
		}
		return -1
	})
	if i < 0 {
		return noOutlier
	}
	return Outlier{i, scale * x[i]}
}
