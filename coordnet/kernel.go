package coordnet

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/metasgmcmc/metasgmcmc/internal/spans"
)

// mlpBlock is the number of rows a kernel processes at once, with BLAS.
const mlpBlock = 256

// compute fills out from the inputs' data; for InputGrad, value (when not
// nil) also receives the network's outputs f(x_i) from the same pass.
func (op Spec) compute(data [][]float64, out, value []float64) {
	in := op.Sizes[0]
	n := len(data[0]) / in
	np := 2 * op.layers()
	params := data[1 : 1+np]
	var g, h []float64
	switch op.Kind {
	case InputGrad, ParamGrad:
		g = data[1+np]
	case JVP:
		h = data[1+np]
	case InputHVP, Mixed:
		g, h = data[1+np], data[2+np]
	}
	reduce := op.Kind == ParamGrad || op.Kind == Mixed
	// The rows are cut into spans of a fixed size, shared out among the
	// workers; a reduction adds the spans' partial sums in span order, so
	// the result does not depend on the number of workers.
	partial := make([][]float64, (n+mlpSpan-1)/mlpSpan)
	spans.Share(n, mlpSpan, func() (func(lo, hi int), func()) {
		k := getMLPKernel(op, params)
		return func(lo, hi int) {
			if reduce {
				partial[lo/mlpSpan] = make([]float64, len(out))
			}
			op.computeSpan(k, data, out, value, g, h, partial[lo/mlpSpan], lo, hi)
		}, func() { putMLPKernel(k) }
	})
	if reduce {
		for _, p := range partial {
			for j, v := range p {
				out[j] += v
			}
		}
	}
}

// mlpSpan is the number of rows a worker of compute takes at a time.
const mlpSpan = 8 * mlpBlock

// computeSpan runs the kernel k on rows [lo, hi) block by block; a
// reduction adds into partial.
func (op Spec) computeSpan(k *mlpKernel, data [][]float64, out, value, g, h, partial []float64, lo, hi int) {
	in := op.Sizes[0]
	for b0 := lo; b0 < hi; b0 += mlpBlock {
		b1 := min(b0+mlpBlock, hi)
		rows := b1 - b0
		x := data[0][b0*in : b1*in]
		var gb, hb []float64
		if g != nil {
			gb = g[b0:b1]
		}
		if h != nil {
			hb = h[b0*in : b1*in]
		}
		switch op.Kind {
		case Value:
			if k.shallow() {
				k.shallowRows(x, rows, nil, out[b0:b1], nil)
				break
			}
			k.forward(x, rows)
			copy(out[b0:b1], k.z[len(k.z)-1][:rows])
		case InputGrad:
			var vb []float64
			if value != nil {
				vb = value[b0:b1]
			}
			if k.shallow() {
				k.shallowRows(x, rows, gb, vb, out[b0*in:b1*in])
				break
			}
			k.forward(x, rows)
			copy(vb, k.z[len(k.z)-1][:rows])
			k.reverse(gb, out[b0*in:b1*in], nil)
		case ParamGrad:
			if k.shallowReLU() {
				k.shallowParamGrad(x, gb, rows, partial)
				break
			}
			k.forward(x, rows)
			k.reverse(gb, nil, partial)
		case JVP:
			// the directional derivative of f along H_i
			if k.shallowReLU() {
				k.shallowJVP(x, hb, rows, out[b0:b1])
				break
			}
			k.tangent(x, hb, rows)
			copy(out[b0:b1], k.zd[len(k.zd)-1][:rows])
		case InputHVP:
			if k.shallowReLU() {
				// ReLU's act2 is zero, and so is every term tangentReverse
				// sums: +0, as from mulT
				clear(out[b0*in : b1*in])
				break
			}
			k.tangent(x, hb, rows)
			k.tangentReverse(gb, out[b0*in:b1*in], nil)
		case Mixed:
			if k.shallowReLU() {
				k.shallowMixed(x, gb, hb, rows, partial)
				break
			}
			k.tangent(x, hb, rows)
			k.tangentReverse(gb, nil, partial)
		}
	}
}

// mlpKernel evaluates a block of rows at a time in preallocated buffers:
// per layer l the pre-activations Z_l, activations A_l, their tangents
// Ż_l, Ȧ_l along a direction H, and the adjoints of all four, each
// (rows × width_l) row-major.
type mlpKernel struct {
	op               Spec
	params           [][]float64
	z, a, zd, ad     [][]float64
	zb, ab, zdb, adb [][]float64
	x, h             []float64
	wt               []float64   // the shallow kernels' transposed first layer
	acc              []float64   // the shallow kernels' column of dW0
	gn               GradNet     // the shallow kernels' weights unit by unit
	lanes            []float64   // the AVX2 reductions' parameters and sums, four units a vector
	wT               [][]float64 // the layers' transposed weights, for back; nil until used with these params
	at               []float64   // a layer's transposed input, for mulTAdd
	rows             int
	off              []int // offsets of the parameters in a flat gradient
}

// kernels are reused across runs: their buffers are the op's only
// allocation besides its output.
var mlpKernels sync.Map // network shape → *sync.Pool of *mlpKernel

func getMLPKernel(op Spec, params [][]float64) *mlpKernel {
	key := fmt.Sprint(op.Sizes)
	p, _ := mlpKernels.LoadOrStore(key, &sync.Pool{})
	if k, ok := p.(*sync.Pool).Get().(*mlpKernel); ok {
		k.op, k.params = op, params
		clear(k.wT) // transposed from the previous params
		return k
	}
	return newMLPKernel(op, params)
}

func putMLPKernel(k *mlpKernel) {
	k.params, k.x, k.h = nil, nil, nil
	if p, ok := mlpKernels.Load(fmt.Sprint(k.op.Sizes)); ok {
		p.(*sync.Pool).Put(k)
	}
}

func newMLPKernel(op Spec, params [][]float64) *mlpKernel {
	k := &mlpKernel{op: op, params: params}
	L := op.layers()
	mk := func() [][]float64 {
		v := make([][]float64, L)
		for l := range v {
			v[l] = make([]float64, mlpBlock*op.Sizes[l+1])
		}
		return v
	}
	k.z, k.a, k.zd, k.ad = mk(), mk(), mk(), mk()
	k.zb, k.ab, k.zdb, k.adb = mk(), mk(), mk(), mk()
	for j := 0; j < 2*L; j++ {
		k.off = append(k.off, op.paramOffset(j))
	}
	return k
}

// mat views data as a rows × cols matrix.
func mat(data []float64, rows, cols int) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: data[:rows*cols]}
}

// smallLayer is the largest fin·fout for which plain loops beat BLAS calls
// on a block of rows (BLAS pays a call and goroutine cost per product).
const smallLayer = 512

// mulAdd sets C += A·W for A (rows × fin), W (fin × fout), C (rows × fout).
// A layer larger than smallLayer goes to BLAS, or, where the AVX2 kernel
// takes its width, to the kernel, which sums as addRows does.
func mulAdd(c, a, w []float64, rows, fin, fout int) {
	if fin*fout > smallLayer {
		if !simdWidth(fout) {
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, mat(a, rows, fin), mat(w, fin, fout), 1, mat(c, rows, fout))
			return
		}
		done := gemmSIMD(c, a, w, rows, fin, fout)
		c, a, rows = c[done*fout:], a[done*fin:], rows-done
	}
	if fout == 1 { // an output layer: one dot product per row
		w = w[:fin]
		for r := range c[:rows] {
			s := 0.0
			for i, v := range a[r*fin : (r+1)*fin] {
				s += v * w[i]
			}
			c[r] += s
		}
		return
	}
	addRows(c, a, w, rows, fin, fout)
}

// addRows sets C += A·W row by row, each element's products added to it in
// the order of A's columns.
func addRows(c, a, w []float64, rows, fin, fout int) {
	w = w[:fin*fout]
	for r := 0; r < rows; r++ {
		cr := c[r*fout : (r+1)*fout : (r+1)*fout]
		ar := a[r*fin : (r+1)*fin : (r+1)*fin]
		for i, v := range ar {
			wi := w[i*fout : (i+1)*fout : (i+1)*fout]
			wi = wi[:len(cr)]
			for j := range cr {
				cr[j] += v * wi[j]
			}
		}
	}
}

// simdWidth reports whether the AVX2 kernel takes products of this many
// columns.
func simdWidth(cols int) bool { return useSIMD && cols%8 == 0 }

// mulT sets D = S·Wᵀ for S (rows × fout), W (fin × fout), D (rows × fin).
func mulT(d, src, w []float64, rows, fin, fout int) {
	if fin*fout > smallLayer {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, mat(src, rows, fout), mat(w, fin, fout), 0, mat(d, rows, fin))
		return
	}
	for r := 0; r < rows; r++ {
		sr := src[r*fout : (r+1)*fout]
		dr := d[r*fin : (r+1)*fin]
		for i := range dr {
			s := 0.0
			for j, wij := range w[i*fout : (i+1)*fout] {
				s += sr[j] * wij
			}
			dr[i] = s
		}
	}
}

// mulTAdd sets G += Aᵀ·Z for A (rows × fin), Z (rows × fout), G (fin × fout).
func mulTAdd(g, a, z []float64, rows, fin, fout int) {
	if fin*fout > smallLayer {
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, mat(a, rows, fin), mat(z, rows, fout), 1, mat(g, fin, fout))
		return
	}
	for r := 0; r < rows; r++ {
		zr := z[r*fout : (r+1)*fout]
		for i, v := range a[r*fin : (r+1)*fin] {
			if v == 0 {
				continue
			}
			gi := g[i*fout : (i+1)*fout]
			for j, zj := range zr {
				gi[j] += v * zj
			}
		}
	}
}

// act1 and act2 are the activation's first two derivatives, given the
// pre-activation z and the activation a.
func (k *mlpKernel) act1(z, a float64) float64 {
	if k.op.Act == Tanh {
		return 1 - a*a
	}
	if z > 0 {
		return 1
	}
	return 0
}

func (k *mlpKernel) act2(z, a float64) float64 {
	if k.op.Act == Tanh {
		return -2 * a * (1 - a*a)
	}
	return 0
}

// input returns the input of layer l: X for l = 0, else A_{l−1}.
func (k *mlpKernel) input(l int) []float64 {
	if l == 0 {
		return k.x
	}
	return k.a[l-1]
}

// forward computes the layers of a block: Z_l = A_{l−1}·W_l + b_l.
func (k *mlpKernel) forward(x []float64, rows int) {
	k.x, k.rows = x, rows
	L := k.op.layers()
	for l := 0; l < L; l++ {
		fin, fout := k.op.Sizes[l], k.op.Sizes[l+1]
		z := k.z[l][:rows*fout]
		b := k.params[2*l+1]
		for r := 0; r < rows; r++ {
			copy(z[r*fout:(r+1)*fout], b)
		}
		mulAdd(z, k.input(l), k.params[2*l], rows, fin, fout)
		if l < L-1 {
			a := k.a[l][:rows*fout]
			if k.op.Act == Tanh {
				for c, v := range z {
					a[c] = math.Tanh(v)
				}
			} else {
				for c, v := range z {
					if v > 0 {
						a[c] = v
					} else {
						a[c] = 0
					}
				}
			}
		}
	}
}

// addParamGrad adds the gradient of layer l's weights and bias from the
// adjoint zb of Z_l and the layer's input in: dW_l += inᵀ·zb, db_l += Σ_rows zb.
func (k *mlpKernel) addParamGrad(l int, in, zb, dp []float64) {
	fin, fout := k.op.Sizes[l], k.op.Sizes[l+1]
	rows := k.rows
	k.mulTAdd(dp[k.off[2*l]:k.off[2*l]+fin*fout], in, zb, rows, fin, fout)
	db := dp[k.off[2*l+1] : k.off[2*l+1]+fout]
	for r := 0; r < rows; r++ {
		for c, v := range zb[r*fout : (r+1)*fout] {
			db[c] += v
		}
	}
}

// back multiplies an adjoint by W_lᵀ: dst = src·W_lᵀ. A layer larger than
// smallLayer whose width the AVX2 kernel takes goes to the kernel with
// W_lᵀ, which sums each element's products from zero in mulT's order (the
// rows it leaves to addRows, which sums alike); other layers to mulT.
func (k *mlpKernel) back(l int, src, dst []float64) {
	fin, fout := k.op.Sizes[l], k.op.Sizes[l+1]
	rows := k.rows
	if fin*fout <= smallLayer || !simdWidth(fin) {
		mulT(dst, src, k.params[2*l], rows, fin, fout)
		return
	}
	wt := k.transposed(l)
	clear(dst[:rows*fin])
	done := gemmSIMD(dst, src, wt, rows, fout, fin)
	addRows(dst[done*fin:], src[done*fout:], wt, rows-done, fout, fin)
}

// mulTAdd is the package's mulTAdd, but that a layer larger than
// smallLayer whose width the AVX2 kernel takes goes to the kernel with Aᵀ
// (the rows it leaves to addRows), which adds each element's products in
// the order of the rows, as BLAS does, without skipping A's zeros.
func (k *mlpKernel) mulTAdd(g, a, z []float64, rows, fin, fout int) {
	if fin*fout <= smallLayer || !simdWidth(fout) {
		mulTAdd(g, a, z, rows, fin, fout)
		return
	}
	k.at = transpose(grow(k.at, fin*rows), a, rows, fin)
	done := gemmSIMD(g, k.at, z, fin, rows, fout)
	addRows(g[done*fout:], k.at[done*rows:], z, fin-done, rows, fout)
}

// transposed returns W_lᵀ (fout × fin), transposed once per use of the
// kernel.
func (k *mlpKernel) transposed(l int) []float64 {
	if k.wT == nil {
		k.wT = make([][]float64, k.op.layers())
	}
	fin, fout := k.op.Sizes[l], k.op.Sizes[l+1]
	if k.wT[l] == nil {
		k.wT[l] = transpose(make([]float64, fin*fout), k.params[2*l], fin, fout)
	}
	return k.wT[l]
}

// transpose writes the transpose of src (rows × cols, row-major) into dst
// (cols × rows) and returns dst.
func transpose(dst, src []float64, rows, cols int) []float64 {
	for r := 0; r < rows; r++ {
		for c, v := range src[r*cols : (r+1)*cols] {
			dst[c*rows+r] = v
		}
	}
	return dst
}

// reverse back-propagates upstream gradients gy of f over the block after
// forward. It writes ∂/∂X into dx (if not nil) and adds ∂/∂θ into the flat
// dp (if not nil).
func (k *mlpKernel) reverse(gy, dx, dp []float64) {
	L := k.op.layers()
	rows := k.rows
	copy(k.zb[L-1][:rows], gy)
	for l := L - 1; l >= 0; l-- {
		fout := k.op.Sizes[l+1]
		zb := k.zb[l][:rows*fout]
		if dp != nil {
			k.addParamGrad(l, k.input(l), zb, dp)
		}
		if l == 0 {
			if dx != nil {
				k.back(0, zb, dx)
			}
			break
		}
		ab := k.ab[l-1]
		k.back(l, zb, ab)
		z, a, zprev := k.z[l-1], k.a[l-1], k.zb[l-1]
		for c := range zprev[:rows*k.op.Sizes[l]] {
			zprev[c] = ab[c] * k.act1(z[c], a[c])
		}
	}
}

// tangent runs forward and the forward-mode derivative along the block's
// directions h: Ż_0 = H·W_0, Ȧ_l = act'(Z_l)⊙Ż_l, Ż_l = Ȧ_{l−1}·W_l.
func (k *mlpKernel) tangent(x, h []float64, rows int) {
	k.forward(x, rows)
	k.h = h
	L := k.op.layers()
	for l := 0; l < L; l++ {
		fin, fout := k.op.Sizes[l], k.op.Sizes[l+1]
		in := h
		if l > 0 {
			in = k.ad[l-1]
		}
		zd := k.zd[l][:rows*fout]
		clear(zd)
		mulAdd(zd, in, k.params[2*l], rows, fin, fout)
		if l < L-1 {
			zd, ad, z, a := k.zd[l], k.ad[l], k.z[l], k.a[l]
			for c := range zd[:rows*fout] {
				ad[c] = k.act1(z[c], a[c]) * zd[c]
			}
		}
	}
}

// tangentReverse back-propagates gy·(∇ₓf·h) over the block after tangent:
// it writes its derivative w.r.t. X (gy·∇ₓ²f·h) into dx and adds its
// derivative w.r.t. θ into the flat dp.
func (k *mlpKernel) tangentReverse(gy, dx, dp []float64) {
	L := k.op.layers()
	rows := k.rows
	clear(k.zb[L-1][:rows])
	copy(k.zdb[L-1][:rows], gy)
	for l := L - 1; l >= 0; l-- {
		fout := k.op.Sizes[l+1]
		zb, zdb := k.zb[l][:rows*fout], k.zdb[l][:rows*fout]
		ind := k.h
		if l > 0 {
			ind = k.ad[l-1]
		}
		if dp != nil {
			k.addParamGrad(l, k.input(l), zb, dp)
			// the tangent path adds ind·ż̄ to dW but nothing to db
			fin := k.op.Sizes[l]
			k.mulTAdd(dp[k.off[2*l]:k.off[2*l]+fin*fout], ind, zdb, rows, fin, fout)
		}
		if l == 0 {
			if dx != nil {
				k.back(0, zb, dx)
			}
			break
		}
		ab, adb := k.ab[l-1], k.adb[l-1]
		k.back(l, zb, ab)
		k.back(l, zdb, adb)
		z, a, zd := k.z[l-1], k.a[l-1], k.zd[l-1]
		for c := range ab[:rows*k.op.Sizes[l]] {
			d1 := k.act1(z[c], a[c])
			k.zdb[l-1][c] = adb[c] * d1
			k.zb[l-1][c] = ab[c]*d1 + adb[c]*k.act2(z[c], a[c])*zd[c]
		}
	}
}

// grow returns dst resized to n, reallocated if its capacity is short.
func grow(dst []float64, n int) []float64 {
	if cap(dst) < n {
		return make([]float64, n)
	}
	return dst[:n]
}
