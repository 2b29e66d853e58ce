package diag

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Draws holds the draws of K chains of a D-dimensional quantity, T draws
// per chain, in one []float64 in (chain, draw, dim) order, the order of
// ArviZ's (chain, draw, *shape) arrays: element (c, t, i), coordinate i of
// draw t of chain c, is at (c·T + t)·D + i of Raw. So the D values of one
// draw are contiguous (Draw), and so are the T×D values of one chain, a
// row-major matrix with a row per draw (Chain, ready for mat.NewDense).
//
// A Draws of T draws takes 8·K·T·D bytes. One grown by Append or
// AppendCoordinateMajor keeps spare room for more draws at the end of each
// chain, up to a quarter more (twice as many below 1024 draws), as append
// does; Grow reserves room ahead of time and Raw gives the spare room back.
//
// Make one with NewDraws or NewDrawsFrom; the zero value holds no chains.
// A Draws is not safe for concurrent use if any of the goroutines changes
// it: Set, Append, AppendCoordinateMajor, Grow and Raw count as changes.
type Draws struct {
	k, t, d int
	room    int       // draws of room per chain, ≥ t: chain c is at [c·room·d, (c·room + t)·d)
	data    []float64 // k·room·d values
}

// NewDraws returns K chains of T zero draws of dimension D, to be filled
// with Set, or with t = 0 an empty Draws to be filled by Append or
// AppendCoordinateMajor. It panics, like make, if k or d is less than 1 or
// t is negative.
func NewDraws(k, t, d int) *Draws {
	if k < 1 || d < 1 || t < 0 {
		panic(fmt.Sprintf("diag: NewDraws: invalid shape %d chains × %d draws × %d dimensions", k, t, d))
	}
	return &Draws{k: k, t: t, d: d, room: t, data: make([]float64, k*t*d)}
}

// NewDrawsFrom returns a Draws of K chains of T draws of dimension D
// backed by data, which holds them in (chain, draw, dim) order, element
// (c, t, i) at (c·T + t)·D + i; data is used, not copied. It returns nil
// and an error if k or d is less than 1, t is negative, or len(data) is
// not k·t·d.
func NewDrawsFrom(data []float64, k, t, d int) (*Draws, error) {
	switch {
	case k < 1 || d < 1 || t < 0:
		return nil, fmt.Errorf("diag: NewDrawsFrom: invalid shape %d chains × %d draws × %d dimensions", k, t, d)
	case len(data) != k*t*d:
		return nil, fmt.Errorf("diag: NewDrawsFrom: %d values for %d chains × %d draws × %d dimensions = %d", len(data), k, t, d, k*t*d)
	}
	return &Draws{k: k, t: t, d: d, room: t, data: data}, nil
}

// Dims returns the number of chains K, of draws per chain T and of
// dimensions D.
func (x *Draws) Dims() (k, t, d int) { return x.k, x.t, x.d }

// offset returns the position of element (c, t, i) in x.data, panicking if
// it is out of range.
func (x *Draws) offset(fn string, c, t, i int) int {
	if uint(c) >= uint(x.k) || uint(t) >= uint(x.t) || uint(i) >= uint(x.d) {
		panic(fmt.Sprintf("diag: Draws.%s: index (%d, %d, %d) out of range for %d chains × %d draws × %d dimensions", fn, c, t, i, x.k, x.t, x.d))
	}
	return (c*x.room+t)*x.d + i
}

// At returns coordinate i of draw t of chain c. It panics if an index is
// out of range.
func (x *Draws) At(c, t, i int) float64 { return x.data[x.offset("At", c, t, i)] }

// Set sets coordinate i of draw t of chain c to v. It panics if an index
// is out of range.
func (x *Draws) Set(c, t, i int, v float64) { x.data[x.offset("Set", c, t, i)] = v }

// Draw returns draw t of chain c, its D coordinates, as a view of the
// Draws' storage: writing to it changes the Draws. The view stays valid
// until the Draws reallocates (Append, AppendCoordinateMajor or Grow
// beyond its room, or Raw). It panics if an index is out of range.
func (x *Draws) Draw(c, t int) []float64 {
	o := x.offset("Draw", c, t, 0)
	return x.data[o : o+x.d : o+x.d]
}

// Chain returns the T draws of chain c as a view of the Draws' storage:
// T·D values, draw t at [t·D, (t+1)·D), a row-major T×D matrix
// (mat.NewDense(T, D, x.Chain(c)) wraps it without copying). It is valid
// as long as a view from Draw is. It panics if c is out of range.
func (x *Draws) Chain(c int) []float64 {
	if uint(c) >= uint(x.k) {
		panic(fmt.Sprintf("diag: Draws.Chain: chain %d out of range for %d chains", c, x.k))
	}
	o := c * x.room * x.d
	return x.data[o : o+x.t*x.d : o+x.t*x.d]
}

// Coordinate returns coordinate i of every draw in [chain][draw] form, the
// input of ESS, SplitRhat, MCSE, RankRhat, BulkESS, TailESS and
// RankDiagnostics: out[c][t] is coordinate i of draw t of chain c. The
// values are copied, into dst if it has K slices each with capacity for T
// values (as a previous call's result has), and into new slices otherwise.
// It panics if i is out of range.
func (x *Draws) Coordinate(dst [][]float64, i int) [][]float64 {
	if uint(i) >= uint(x.d) {
		panic(fmt.Sprintf("diag: Draws.Coordinate: coordinate %d out of range for %d dimensions", i, x.d))
	}
	if len(dst) != x.k {
		dst = make([][]float64, x.k)
	}
	for c := range dst {
		if cap(dst[c]) < x.t {
			dst[c] = make([]float64, x.t)
		}
		col := dst[c][:x.t]
		src := x.data[c*x.room*x.d+i:]
		for t := range col {
			col[t] = src[t*x.d]
		}
		dst[c] = col
	}
	return dst
}

// Append appends one draw to every chain: draw[c·D + i] becomes coordinate
// i of draw T of chain c, so draw holds the K new draws in (chain, dim)
// order. It returns an error, and appends nothing, if len(draw) is not
// K·D. Values are stored as given; the diagnostics refuse NaN and ±Inf.
func (x *Draws) Append(draw []float64) error {
	if len(draw) != x.k*x.d {
		return fmt.Errorf("diag: Draws.Append: %d values for %d chains × %d dimensions", len(draw), x.k, x.d)
	}
	x.grow(1)
	for c := 0; c < x.k; c++ {
		copy(x.data[(c*x.room+x.t)*x.d:], draw[c*x.d:(c+1)*x.d])
	}
	x.t++
	return nil
}

// AppendCoordinateMajor appends one draw to every chain from the positions
// of a run loop in the samplers' coordinate-major (D, K) layout:
// theta[i·K + c], coordinate i of chain c, becomes coordinate i of draw T
// of chain c. A run loop calls it once a step with the positions of all K
// chains. It returns an error, and appends nothing, if len(theta) is not
// D·K. Values are stored as given; the diagnostics refuse NaN and ±Inf.
func (x *Draws) AppendCoordinateMajor(theta []float64) error {
	if len(theta) != x.k*x.d {
		return fmt.Errorf("diag: Draws.AppendCoordinateMajor: %d values for %d dimensions × %d chains", len(theta), x.d, x.k)
	}
	x.grow(1)
	for c := 0; c < x.k; c++ {
		dst := x.data[(c*x.room+x.t)*x.d:]
		for i := 0; i < x.d; i++ {
			dst[i] = theta[i*x.k+c]
		}
	}
	x.t++
	return nil
}

// Grow makes room for at least n more draws per chain, so that the next n
// calls of Append or AppendCoordinateMajor do not reallocate. A run of
// known length calls it once with its number of steps, and the Draws then
// takes exactly 8·K·T·D bytes. It panics if n is negative.
func (x *Draws) Grow(n int) {
	if n < 0 {
		panic("diag: Draws.Grow: negative count")
	}
	if x.t+n > x.room {
		x.resize(x.t + n)
	}
}

// grow makes room for n more draws per chain, growing geometrically.
func (x *Draws) grow(n int) {
	if x.t+n <= x.room {
		return
	}
	room := x.room
	if room < 1024 {
		room = max(2*room, 8)
	} else {
		room += room / 4
	}
	x.resize(max(room, x.t+n))
}

// resize moves the draws into new storage with room draws per chain.
func (x *Draws) resize(room int) {
	data := make([]float64, x.k*room*x.d)
	for c := 0; c < x.k; c++ {
		copy(data[c*room*x.d:], x.data[c*x.room*x.d:(c*x.room+x.t)*x.d])
	}
	x.data, x.room = data, room
}

// Raw returns the draws as one slice of length K·T·D in (chain, draw, dim)
// order, element (c, t, i) at (c·T + t)·D + i. The slice is the Draws' own
// storage, not a copy. If Append or AppendCoordinateMajor left spare room,
// Raw first moves the chains together, in place, so that the next append
// reallocates.
func (x *Draws) Raw() []float64 {
	if x.room != x.t {
		for c := 1; c < x.k; c++ {
			copy(x.data[c*x.t*x.d:], x.data[c*x.room*x.d:(c*x.room+x.t)*x.d])
		}
		x.room = x.t
		x.data = x.data[: x.k*x.t*x.d : x.k*x.t*x.d]
	}
	return x.data
}

// flat returns the draws in (chain, draw, dim) order like Raw, but without
// changing x: a copy if x has spare room.
func (x *Draws) flat() []float64 {
	if x.room == x.t {
		return x.data
	}
	out := make([]float64, 0, x.k*x.t*x.d)
	for c := 0; c < x.k; c++ {
		out = append(out, x.Chain(c)...)
	}
	return out
}

// ForEachCoordinate calls f(i, chains) for every coordinate i of x, with
// chains = x.Coordinate(…, i), the coordinate's draws in [chain][draw]
// form, on up to GOMAXPROCS goroutines at once: f must be safe for
// concurrent use, and must not keep chains, which is reused for another
// coordinate after f returns. Coordinates are started in increasing order;
// once f has failed for coordinate i, no coordinate above i is started.
// ForEachCoordinate returns the error of the lowest coordinate for which f
// failed, which does not depend on the number of goroutines, or nil.
//
// Each goroutine holds one coordinate's draws, 8·K·T bytes, besides what f
// allocates.
func (x *Draws) ForEachCoordinate(f func(i int, chains [][]float64) error) error {
	return forEachCoordinate(x, func() struct{} { return struct{}{} },
		func(i int, chains [][]float64, _ struct{}) error { return f(i, chains) })
}

// forEachCoordinate is ForEachCoordinate with a workspace per goroutine,
// made by newWork and passed to every call of f on that goroutine.
func forEachCoordinate[W any](x *Draws, newWork func() W, f func(i int, chains [][]float64, w W) error) error {
	errs := make([]error, x.d)
	var next, failed atomic.Int64
	failed.Store(int64(x.d)) // the lowest failing coordinate, x.d for none
	work := func() {
		w := newWork()
		var chains [][]float64
		for {
			i := int(next.Add(1) - 1)
			if i >= x.d || int64(i) > failed.Load() {
				return
			}
			chains = x.Coordinate(chains, i)
			if err := f(i, chains, w); err != nil {
				errs[i] = err
				for cur := failed.Load(); int64(i) < cur && !failed.CompareAndSwap(cur, int64(i)); cur = failed.Load() {
				}
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), x.d)
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
