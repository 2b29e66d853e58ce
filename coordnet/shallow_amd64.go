//go:build !purego

package coordnet

import "unsafe"

// The AVX2 kernels of the ReLU reductions shallowReLUParamGrad2/3 and
// shallowReLUMixed2/3 (shallow_amd64.s). Those add, for every hidden unit
// j, terms over the rows r = 0, 1, … into sums that start at dp's values;
// a vector across rows would add a unit's terms in another order, so the
// lanes of a vector are hidden units instead: the rows go by one at a
// time, and each lane does the scalar loop's operations on its unit in
// their order (a multiply and an add apiece, no fused multiply-add; the
// same association; reluGate as a compare z > 0 and an and), adding its
// terms in row order into its own sum. Each sum therefore gets the Go
// kernel's bits.
//
// The kernels take the units four at a time, in groups: for group q, the
// units 4q … 4q+3, lanes holds (in+2) vectors of parameters, b0, the unit's
// weights W0[i,·] for every input i and W1, followed by the vectors of the
// sums, dW0[i,·] for every input i, dW1 and (for the parameter gradient)
// dB0. The lanes past the last unit have zero parameters and sums; they
// compute something no real lane reads, and are not stored back.

// paramGradSIMD is shallowReLUParamGrad2 (in = 2) or 3 (in = 3) with the
// AVX2 kernel, when useSIMD; it reports whether it ran.
func (k *mlpKernel) paramGradSIMD(in int, x, g, dw0, db0, dw1, b0, w1 []float64) bool {
	if !useSIMD || len(g) == 0 {
		return false
	}
	x = x[:in*len(g)]
	s, groups := k.packLanes(in, b0, w1, dw0, dw1, db0)
	if in == 2 {
		paramGrad2AVX2(&x[0], &g[0], &s[0], len(g), groups)
	} else {
		paramGrad3AVX2(&x[0], &g[0], &s[0], len(g), groups)
	}
	k.unpackLanes(in, s, dw0, dw1, db0)
	return true
}

// mixedSIMD is shallowReLUMixed2 (in = 2) or 3 (in = 3) with the AVX2
// kernel, when useSIMD; it reports whether it ran.
func (k *mlpKernel) mixedSIMD(in int, x, g, hd, dw0, dw1, b0, w1 []float64) bool {
	if !useSIMD || len(g) == 0 {
		return false
	}
	x, hd = x[:in*len(g)], hd[:in*len(g)]
	s, groups := k.packLanes(in, b0, w1, dw0, dw1, nil)
	if in == 2 {
		mixed2AVX2(&x[0], &hd[0], &g[0], &s[0], len(g), groups)
	} else {
		mixed3AVX2(&x[0], &hd[0], &g[0], &s[0], len(g), groups)
	}
	k.unpackLanes(in, s, dw0, dw1, nil)
	return true
}

// laneVectors returns the number of vectors of a group in lanes: in+2 of
// parameters and in+1 of sums, one more with dB0's sums.
func laneVectors(in int, db0 bool) int {
	if db0 {
		return 2*in + 4
	}
	return 2*in + 3
}

// packLanes lays out, after shallowParams, the parameters of the h hidden
// units and the sums dw0, dw1 (and db0 where not nil) in k.lanes as the
// kernels take them, in groups of four units, and returns the layout,
// 32-byte aligned, and the number of groups.
func (k *mlpKernel) packLanes(in int, b0, w1, dw0, dw1, db0 []float64) ([]float64, int) {
	h := len(b0)
	groups := (h + 3) / 4
	nv := laneVectors(in, db0 != nil)
	n := groups * nv * 4
	k.lanes = grow(k.lanes, n+3)
	off := int(-uintptr(unsafe.Pointer(&k.lanes[0])) % 32 / 8)
	s := k.lanes[off : off+n]
	clear(s)
	wt := k.wt[:in*h]
	for j := 0; j < h; j++ {
		g := s[j/4*nv*4+j%4:]
		g[0] = b0[j]
		for i := 0; i < in; i++ {
			g[4*(1+i)] = wt[in*j+i]
			g[4*(in+2+i)] = dw0[i*h+j]
		}
		g[4*(in+1)] = w1[j]
		g[4*(2*in+2)] = dw1[j]
		if db0 != nil {
			g[4*(2*in+3)] = db0[j]
		}
	}
	return s, groups
}

// unpackLanes stores the sums of the real units of packLanes' layout s
// back into dw0, dw1 (and db0 where not nil).
func (k *mlpKernel) unpackLanes(in int, s, dw0, dw1, db0 []float64) {
	h := len(dw1)
	nv := laneVectors(in, db0 != nil)
	for j := 0; j < h; j++ {
		g := s[j/4*nv*4+j%4:]
		for i := 0; i < in; i++ {
			dw0[i*h+j] = g[4*(in+2+i)]
		}
		dw1[j] = g[4*(2*in+2)]
		if db0 != nil {
			db0[j] = g[4*(2*in+3)]
		}
	}
}

//go:noescape
func paramGrad2AVX2(x, gs, s *float64, rows, groups int)

//go:noescape
func paramGrad3AVX2(x, gs, s *float64, rows, groups int)

//go:noescape
func mixed2AVX2(x, hd, gs, s *float64, rows, groups int)

//go:noescape
func mixed3AVX2(x, hd, gs, s *float64, rows, groups int)

// valueSIMD evaluates shallowReLUValue2 (in = 2) or 3 (in = 3) on the
// first rows&^7 rows with the AVX2 kernel, when useSIMD, and returns their
// number. Its sums have no reduction over rows: the lanes are rows, eight
// at a time (two vectors), and each lane sums its units in the Go kernel's
// order j = 0, 1, …, h−1. max(z, 0) is |VMAXPD(0, z)|: z where z > 0, +0
// where z ≤ 0 and z without its sign where z is NaN, as Go's max gives on
// amd64.
func (k *mlpKernel) valueSIMD(in int, x []float64, rows int, out []float64) int {
	n := rows &^ 7
	if !useSIMD || n == 0 {
		return 0
	}
	x, out = x[:in*n], out[:n]
	k.gn.pack(in, k.params)
	if in == 2 {
		valueRows2AVX2(&out[0], &x[0], &k.gn.packed[0], n, k.gn.h, k.gn.b1)
	} else {
		valueRows3AVX2(&out[0], &x[0], &k.gn.packed[0], n, k.gn.h, k.gn.b1)
	}
	return n
}

//go:noescape
func valueRows2AVX2(out, x, w *float64, n, h int, b1 float64)

//go:noescape
func valueRows3AVX2(out, x, w *float64, n, h int, b1 float64)
