package coordnet

import "math"

// shallowFastPath enables shallowRows (tests switch it off to compare).
var shallowFastPath = true

// shallow reports whether the network has one hidden layer (in → h → 1), the
// shape of NNSGHMC's trained networks, which the shallow kernels evaluate.
// They sum in the order of the general kernel's plain loops, so they take
// only the layers those loops compute: not BLAS's (in·h > smallLayer), nor
// a hidden layer of one unit, which mulAdd sums as an output layer.
func (k *mlpKernel) shallow() bool {
	s := k.op.Sizes
	return shallowFastPath && k.op.layers() == 2 && s[1] > 1 && s[0]*s[1] <= smallLayer
}

// shallowParams returns a one-hidden-layer network's parameters, with W0's
// columns made contiguous in k.wt: wt[j·in+i] = W0[i·h+j], the weights of
// hidden unit j.
func (k *mlpKernel) shallowParams() (b0, w1 []float64, b1 float64) {
	in, h := k.op.Sizes[0], k.op.Sizes[1]
	w0 := k.params[0][:in*h]
	k.wt = transpose(grow(k.wt, in*h), w0, in, h)
	return k.params[1][:h], k.params[2][:h], k.params[3][0]
}

// shallowRows evaluates a network with one hidden layer row by row, the
// hidden units in registers: f(x_r) into out and g_r·∇ₓf(x_r) into dx (each
// skipped when nil). It is the fast path of Value and InputGrad and
// gives bit for bit what forward and reverse give: the same products summed
// in the same order.
func (k *mlpKernel) shallowRows(x []float64, rows int, g, out, dx []float64) {
	in := k.op.Sizes[0]
	b0, w1, b1 := k.shallowParams()
	if k.op.Act == ReLU {
		switch {
		case dx == nil && in == 2:
			k.shallowReLUValue2(x, rows, out, b0, w1, b1)
			return
		case dx == nil && in == 3:
			k.shallowReLUValue3(x, rows, out, b0, w1, b1)
			return
		case in == 2:
			k.shallowReLU2(x, rows, g, out, dx)
			return
		case in == 3:
			k.shallowReLU3(x, rows, g, out, dx)
			return
		}
	}
	tanh := k.op.Act == Tanh
	for r := 0; r < rows; r++ {
		xr := x[r*in : (r+1)*in : (r+1)*in]
		var dxr []float64
		gr := 0.0
		if dx != nil {
			dxr = dx[r*in : (r+1)*in : (r+1)*in]
			clear(dxr)
			gr = g[r]
		}
		sum := 0.0
		for j, bj := range b0 {
			wj := k.wt[j*in : (j+1)*in : (j+1)*in]
			z := bj
			for i, v := range xr {
				z += v * wj[i]
			}
			// a ReLU unit that is off adds ±0, which changes no sum
			a, da := z, 1.0
			if tanh {
				a = math.Tanh(z)
				da = 1 - a*a
			} else if z <= 0 {
				a, da = 0, 0
			}
			sum += a * w1[j]
			if dxr != nil {
				c := gr * w1[j] * da
				for i := range dxr {
					dxr[i] += c * wj[i]
				}
			}
		}
		if out != nil {
			out[r] = b1 + sum
		}
	}
}

// shallowReLUValue2 is shallowRows for values alone of f_Q's shape, 2
// inputs and ReLU. Where useSIMD, the AVX2 kernel of valueSIMD evaluates
// the rows up to a multiple of eight, with the same bits.
func (k *mlpKernel) shallowReLUValue2(x []float64, rows int, out, b0, w1 []float64, b1 float64) {
	h := len(b0)
	wt := k.wt[:2*h]
	w1 = w1[:h]
	r := k.valueSIMD(2, x, rows, out)
	// two rows at a time: their sums are independent chains of additions,
	// which the processor overlaps; each row's sum is formed in the same
	// order as one row alone would form it
	for ; r+1 < rows; r += 2 {
		x0, x1, y0, y1 := x[2*r], x[2*r+1], x[2*r+2], x[2*r+3]
		sx, sy := 0.0, 0.0
		for j, bj := range b0 {
			w0, wb := wt[2*j], wt[2*j+1]
			zx := bj + x0*w0 + x1*wb
			zy := bj + y0*w0 + y1*wb
			sx += max(zx, 0) * w1[j] // builtin max: no branch to mispredict
			sy += max(zy, 0) * w1[j]
		}
		out[r], out[r+1] = b1+sx, b1+sy
	}
	for ; r < rows; r++ {
		x0, x1 := x[2*r], x[2*r+1]
		sum := 0.0
		for j, bj := range b0 {
			z := bj + x0*wt[2*j] + x1*wt[2*j+1]
			sum += max(z, 0) * w1[j]
		}
		out[r] = b1 + sum
	}
}

// shallowReLUValue3 is shallowRows for values alone of f_D's shape, 3
// inputs and ReLU, with valueSIMD like shallowReLUValue2.
func (k *mlpKernel) shallowReLUValue3(x []float64, rows int, out, b0, w1 []float64, b1 float64) {
	h := len(b0)
	wt := k.wt[:3*h]
	w1 = w1[:h]
	for r := k.valueSIMD(3, x, rows, out); r < rows; r++ {
		x0, x1, x2 := x[3*r], x[3*r+1], x[3*r+2]
		sum := 0.0
		for j, bj := range b0 {
			z := bj + x0*wt[3*j] + x1*wt[3*j+1] + x2*wt[3*j+2]
			sum += max(z, 0) * w1[j] // builtin max: no branch to mispredict
		}
		out[r] = b1 + sum
	}
}

// shallowReLU2 and shallowReLU3 are shallowRows with input gradients for
// f_Q's and f_D's shapes, 2 and 3 inputs and ReLU: GradNet's rows, the
// inputs in registers and no branch on the units' signs.
func (k *mlpKernel) shallowReLU2(x []float64, rows int, g, out, dx []float64) {
	k.gn.pack(2, k.params)
	for r, gr := range g[:rows] {
		f, d0, d1 := k.gn.grad2(x[2*r], x[2*r+1], gr)
		if out != nil {
			out[r] = f
		}
		dx[2*r], dx[2*r+1] = d0, d1
	}
}

func (k *mlpKernel) shallowReLU3(x []float64, rows int, g, out, dx []float64) {
	k.gn.pack(3, k.params)
	for r, gr := range g[:rows] {
		f, d0, d1, d2 := k.gn.grad3(x[3*r], x[3*r+1], x[3*r+2], gr)
		if out != nil {
			out[r] = f
		}
		dx[3*r], dx[3*r+1], dx[3*r+2] = d0, d1, d2
	}
}

// reluMask is all ones where a ReLU unit is on (z > 0) and zero where it is
// off: masking g·w with it gives g·w·relu'(z) exactly, except +0 where the
// product g·w·0 would be ±0; neither changes a sum.
func reluMask(z float64) uint64 {
	var m uint64
	if z > 0 {
		m = ^uint64(0)
	}
	return m
}

// The fast paths of the derivative kinds are for ReLU networks; with tanh,
// math.Tanh takes most of their time and they gain too little over the
// general kernel to be worth their code. They follow the general kernel's
// sums term by term. Every sum they add into — an output of a row or a
// parameter gradient in partial — starts at +0, and such a sum is never −0
// and no ±0 term changes it; so where the general kernel adds a zero (the
// terms of a unit that is off, or of an input that is zero) they may skip
// it or add a zero of either sign.

// shallowReLU reports whether the fast paths of the derivative kinds apply.
func (k *mlpKernel) shallowReLU() bool { return k.shallow() && k.op.Act == ReLU }

// reluGate is v where a ReLU unit with pre-activation z is on (z > 0) and
// +0 where it is off, without a branch: v·relu'(z) but for the sign of a
// zero, which changes no sum. A NaN z is off, as in forward.
func reluGate(z, v float64) float64 {
	return math.Float64frombits(math.Float64bits(v) & reluMask(z))
}

// shallowParamGrad is the fast path of ParamGrad: it adds
// Σ_r g_r·∂f(x_r)/∂θ over a block's rows into the flat dp, hidden unit by
// hidden unit, the unit's gradients held in registers (W0's column in
// k.acc) while the rows go by. Each gradient gets the terms reverse gives
// it, in the same row order.
func (k *mlpKernel) shallowParamGrad(x, g []float64, rows int, dp []float64) {
	in := k.op.Sizes[0]
	b0, w1, _ := k.shallowParams()
	dw0, db0, dw1 := dp[k.off[0]:k.off[1]], dp[k.off[1]:k.off[2]], dp[k.off[2]:k.off[3]]
	g = g[:rows]
	for _, gr := range g {
		dp[k.off[3]] += gr
	}
	switch in {
	case 2:
		k.shallowReLUParamGrad2(x, g, dw0, db0, dw1, b0, w1)
		return
	case 3:
		k.shallowReLUParamGrad3(x, g, dw0, db0, dw1, b0, w1)
		return
	}
	k.eachUnit(dw0, func(j int, wj, acc []float64) {
		sw, sb, w1j := dw1[j], db0[j], w1[j]
		for r, gr := range g {
			xr := x[r*in : (r+1)*in : (r+1)*in]
			z := b0[j]
			for i, v := range xr {
				z += v * wj[i]
			}
			zb := reluGate(z, gr*w1j) // the adjoint of z
			sw += reluGate(z, z) * gr
			sb += zb
			for i, v := range xr {
				acc[i] += v * zb
			}
		}
		dw1[j], db0[j] = sw, sb
	})
}

// eachUnit calls unit for every hidden unit j of a network with one
// hidden layer after shallowParams, with wj the unit's weights W0[·,j]
// (from k.wt) and acc its column of the gradient dw0 of W0, into which
// unit adds: the general case of the ReLU fast paths that reduce over rows
// unit by unit.
func (k *mlpKernel) eachUnit(dw0 []float64, unit func(j int, wj, acc []float64)) {
	in, h := k.op.Sizes[0], k.op.Sizes[1]
	k.acc = grow(k.acc, in)
	acc := k.acc
	for j := 0; j < h; j++ {
		for i := range acc {
			acc[i] = dw0[i*h+j]
		}
		unit(j, k.wt[j*in:(j+1)*in:(j+1)*in], acc)
		for i, v := range acc {
			dw0[i*h+j] = v
		}
	}
}

// shallowReLUParamGrad2 and shallowReLUParamGrad3 are shallowParamGrad for
// f_Q's and f_D's shapes, 2 and 3 inputs, with all of a unit's weights and
// gradients in registers. Where useSIMD, the AVX2 kernel of paramGradSIMD
// does their operations four units at a time, with the same bits.
func (k *mlpKernel) shallowReLUParamGrad2(x, g, dw0, db0, dw1, b0, w1 []float64) {
	if k.paramGradSIMD(2, x, g, dw0, db0, dw1, b0, w1) {
		return
	}
	h := len(b0)
	wt, dw0, db0, dw1, w1 := k.wt[:2*h], dw0[:2*h], db0[:h], dw1[:h], w1[:h]
	x = x[:2*len(g)]
	for j, bj := range b0 {
		v0, v1, w1j := wt[2*j], wt[2*j+1], w1[j]
		d0, d1, sw, sb := dw0[j], dw0[h+j], dw1[j], db0[j]
		for r, gr := range g {
			x0, x1 := x[2*r], x[2*r+1]
			z := bj + x0*v0 + x1*v1
			zb := reluGate(z, gr*w1j)
			sw += reluGate(z, z) * gr
			sb += zb
			d0 += x0 * zb
			d1 += x1 * zb
		}
		dw0[j], dw0[h+j], dw1[j], db0[j] = d0, d1, sw, sb
	}
}

func (k *mlpKernel) shallowReLUParamGrad3(x, g, dw0, db0, dw1, b0, w1 []float64) {
	if k.paramGradSIMD(3, x, g, dw0, db0, dw1, b0, w1) {
		return
	}
	h := len(b0)
	wt, dw0, db0, dw1, w1 := k.wt[:3*h], dw0[:3*h], db0[:h], dw1[:h], w1[:h]
	x = x[:3*len(g)]
	for j, bj := range b0 {
		v0, v1, v2, w1j := wt[3*j], wt[3*j+1], wt[3*j+2], w1[j]
		d0, d1, d2, sw, sb := dw0[j], dw0[h+j], dw0[2*h+j], dw1[j], db0[j]
		for r, gr := range g {
			x0, x1, x2 := x[3*r], x[3*r+1], x[3*r+2]
			z := bj + x0*v0 + x1*v1 + x2*v2
			zb := reluGate(z, gr*w1j)
			sw += reluGate(z, z) * gr
			sb += zb
			d0 += x0 * zb
			d1 += x1 * zb
			d2 += x2 * zb
		}
		dw0[j], dw0[h+j], dw0[2*h+j], dw1[j], db0[j] = d0, d1, d2, sw, sb
	}
}

// shallowJVP is the fast path of JVP: ∇ₓf(x_r)·H_r into out, row by row
// as tangent sums it.
func (k *mlpKernel) shallowJVP(x, hd []float64, rows int, out []float64) {
	in := k.op.Sizes[0]
	b0, w1, _ := k.shallowParams()
	out = out[:rows]
	switch in {
	case 2:
		k.shallowReLUJVP2(x, hd, out, b0, w1)
		return
	case 3:
		k.shallowReLUJVP3(x, hd, out, b0, w1)
		return
	}
	for r := range out {
		xr, hr := x[r*in:(r+1)*in:(r+1)*in], hd[r*in:(r+1)*in:(r+1)*in]
		s := 0.0
		for j, bj := range b0 {
			wj := k.wt[j*in : (j+1)*in : (j+1)*in]
			z, zd := bj, 0.0
			for i, v := range xr {
				z += v * wj[i]
				zd += hr[i] * wj[i]
			}
			s += reluGate(z, zd) * w1[j]
		}
		out[r] = s
	}
}

// shallowReLUJVP2 and shallowReLUJVP3 are shallowJVP for f_Q's and f_D's
// shapes, 2 and 3 inputs. They sum ż without tangent's leading +0, which
// changes only the sign of a zero ż.
func (k *mlpKernel) shallowReLUJVP2(x, hd, out, b0, w1 []float64) {
	h := len(b0)
	wt, w1 := k.wt[:2*h], w1[:h]
	for r := range out {
		x0, x1, h0, h1 := x[2*r], x[2*r+1], hd[2*r], hd[2*r+1]
		s := 0.0
		for j, bj := range b0 {
			z := bj + x0*wt[2*j] + x1*wt[2*j+1]
			zd := h0*wt[2*j] + h1*wt[2*j+1]
			s += reluGate(z, zd) * w1[j]
		}
		out[r] = s
	}
}

func (k *mlpKernel) shallowReLUJVP3(x, hd, out, b0, w1 []float64) {
	h := len(b0)
	wt, w1 := k.wt[:3*h], w1[:h]
	for r := range out {
		x0, x1, x2 := x[3*r], x[3*r+1], x[3*r+2]
		h0, h1, h2 := hd[3*r], hd[3*r+1], hd[3*r+2]
		s := 0.0
		for j, bj := range b0 {
			z := bj + x0*wt[3*j] + x1*wt[3*j+1] + x2*wt[3*j+2]
			zd := h0*wt[3*j] + h1*wt[3*j+1] + h2*wt[3*j+2]
			s += reluGate(z, zd) * w1[j]
		}
		out[r] = s
	}
}

// shallowMixed is the fast path of Mixed: it adds
// Σ_r g_r·∂(∇ₓf(x_r)·H_r)/∂θ over a block's rows into the flat dp, hidden
// unit by hidden unit like shallowParamGrad. ReLU's act2 is zero, and so
// is the adjoint of z that tangentReverse carries: only the tangent path's
// terms are left, ż_j·g into W1 and H_i·ż̄_j into W0, with ż̄_j = g·w1_j
// where unit j is on.
func (k *mlpKernel) shallowMixed(x, g, hd []float64, rows int, dp []float64) {
	in := k.op.Sizes[0]
	b0, w1, _ := k.shallowParams()
	dw0, dw1 := dp[k.off[0]:k.off[1]], dp[k.off[2]:k.off[3]]
	g = g[:rows]
	switch in {
	case 2:
		k.shallowReLUMixed2(x, g, hd, dw0, dw1, b0, w1)
		return
	case 3:
		k.shallowReLUMixed3(x, g, hd, dw0, dw1, b0, w1)
		return
	}
	k.eachUnit(dw0, func(j int, wj, acc []float64) {
		sw, w1j := dw1[j], w1[j]
		for r, gr := range g {
			xr, hr := x[r*in:(r+1)*in:(r+1)*in], hd[r*in:(r+1)*in:(r+1)*in]
			z, zd := b0[j], 0.0
			for i, v := range xr {
				z += v * wj[i]
				zd += hr[i] * wj[i]
			}
			sw += reluGate(z, zd) * gr
			zdb := reluGate(z, gr*w1j) // the adjoint of ż
			for i, v := range hr {
				acc[i] += v * zdb
			}
		}
		dw1[j] = sw
	})
}

// shallowReLUMixed2 and shallowReLUMixed3 are shallowMixed for f_Q's and
// f_D's shapes, 2 and 3 inputs, with all of a unit's weights and gradients
// in registers, and ż without the leading +0 like shallowReLUJVP2 and 3.
// Where useSIMD, the AVX2 kernel of mixedSIMD does their operations four
// units at a time, with the same bits.
func (k *mlpKernel) shallowReLUMixed2(x, g, hd, dw0, dw1, b0, w1 []float64) {
	if k.mixedSIMD(2, x, g, hd, dw0, dw1, b0, w1) {
		return
	}
	h := len(b0)
	wt, dw0, dw1, w1 := k.wt[:2*h], dw0[:2*h], dw1[:h], w1[:h]
	x, hd = x[:2*len(g)], hd[:2*len(g)]
	for j, bj := range b0 {
		v0, v1, w1j := wt[2*j], wt[2*j+1], w1[j]
		d0, d1, sw := dw0[j], dw0[h+j], dw1[j]
		for r, gr := range g {
			h0, h1 := hd[2*r], hd[2*r+1]
			z := bj + x[2*r]*v0 + x[2*r+1]*v1
			sw += reluGate(z, h0*v0+h1*v1) * gr
			zdb := reluGate(z, gr*w1j)
			d0 += h0 * zdb
			d1 += h1 * zdb
		}
		dw0[j], dw0[h+j], dw1[j] = d0, d1, sw
	}
}

func (k *mlpKernel) shallowReLUMixed3(x, g, hd, dw0, dw1, b0, w1 []float64) {
	if k.mixedSIMD(3, x, g, hd, dw0, dw1, b0, w1) {
		return
	}
	h := len(b0)
	wt, dw0, dw1, w1 := k.wt[:3*h], dw0[:3*h], dw1[:h], w1[:h]
	x, hd = x[:3*len(g)], hd[:3*len(g)]
	for j, bj := range b0 {
		v0, v1, v2, w1j := wt[3*j], wt[3*j+1], wt[3*j+2], w1[j]
		d0, d1, d2, sw := dw0[j], dw0[h+j], dw0[2*h+j], dw1[j]
		for r, gr := range g {
			h0, h1, h2 := hd[3*r], hd[3*r+1], hd[3*r+2]
			z := bj + x[3*r]*v0 + x[3*r+1]*v1 + x[3*r+2]*v2
			sw += reluGate(z, h0*v0+h1*v1+h2*v2) * gr
			zdb := reluGate(z, gr*w1j)
			d0 += h0 * zdb
			d1 += h1 * zdb
			d2 += h2 * zdb
		}
		dw0[j], dw0[h+j], dw0[2*h+j], dw1[j] = d0, d1, d2, sw
	}
}
