package graph

import (
	"fmt"
	"math"
	"sync"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/internal/spans"
)

// The per-coordinate MLP as fused Gorgonia ops. Built from Gorgonia's
// primitives, an MLP over n rows materialises a dozen (n, width) tensors in
// the forward pass and more in every derivative; NNSGHMC's step needs the
// networks, their input-derivatives (Γ) and the derivatives of those (the
// meta-gradient), so at n = 300,000 coordinates the primitive graph is slow
// and large. These ops compute each row in registers instead. Every op's
// derivative is again one of these ops, so Gorgonia's autodiff composes them
// to any order the sampler needs:
//
//	mlpValue(X, θ)          = f(x_i)                       (n)
//	mlpInputGrad(X, θ, g)   = g_i·∇ₓf(x_i)                 (n, in)
//	mlpParamGrad(X, θ, g)   = Σ_i g_i·∂f(x_i)/∂θ            (all parameters, flat)
//	mlpJVP(X, θ, H)         = ∇ₓf(x_i)·H_i                 (n)
//	mlpInputHVP(X, θ, g, H) = g_i·∇ₓ²f(x_i)·H_i            (n, in)
//	mlpMixed(X, θ, g, H)    = Σ_i g_i·∂(∇ₓf(x_i)·H_i)/∂θ    (all parameters, flat)
//
// with derivatives (θ_l is a slice of the flat parameter gradient)
//
//	mlpValue:     dX = mlpInputGrad(g),  dθ_l = mlpParamGrad(g)_l
//	mlpInputGrad: dX = mlpInputHVP(g, U), dθ_l = mlpMixed(g, U)_l, dg = mlpJVP(U)
//	mlpJVP:       dX = mlpInputHVP(u, H), dθ_l = mlpMixed(u, H)_l, dH = mlpInputGrad(u)
//
// (U and u are the upstream gradients). The third derivatives — of
// mlpParamGrad, mlpInputHVP and mlpMixed — are not implemented and make
// Grad fail with an error rather than return something wrong.
//
// An mlpOp used only for its kernels (compute) needs no OpBase.
type mlpOp struct {
	OpBase
	kind  mlpKind
	sizes []int // in, hidden…, 1
	act   Activation
}

// newMLPOp returns the op of the given kind for a network of the given
// layer sizes and activation.
func newMLPOp(kind mlpKind, sizes []int, act Activation) mlpOp {
	op := mlpOp{kind: kind, sizes: sizes, act: act}
	op.OpBase = NewOpBase(opNamespace, fmt.Sprintf("%s%v(%s)", mlpKindNames[kind], sizes, act), 1+2*op.layers()+op.extra())
	return op
}

type mlpKind int

const (
	mlpValue mlpKind = iota
	mlpInputGrad
	mlpParamGrad
	mlpJVP
	mlpInputHVP
	mlpMixed
)

var mlpKindNames = [...]string{"MLP", "MLPInputGrad", "MLPParamGrad", "MLPJVP", "MLPInputHVP", "MLPMixed"}

func (op mlpOp) layers() int { return len(op.sizes) - 1 }

// extra is the number of inputs after X and the parameters.
func (op mlpOp) extra() int {
	switch op.kind {
	case mlpValue:
		return 0
	case mlpInputGrad, mlpParamGrad, mlpJVP:
		return 1
	}
	return 2
}

// paramShape is the shape of parameter j (W_l for even j, B_l for odd).
func (op mlpOp) paramShape(j int) []int {
	l := j / 2
	if j%2 == 0 {
		return []int{op.sizes[l], op.sizes[l+1]}
	}
	return []int{1, op.sizes[l+1]}
}

func (op mlpOp) outDims() int {
	switch op.kind {
	case mlpInputGrad, mlpInputHVP:
		return 2
	}
	return 1
}

func (op mlpOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	ts := make([]hm.Type, 0, op.Arity()+1)
	ts = append(ts, G.TensorType{Dims: 2, Of: a}) // X
	for j := 0; j < 2*op.layers(); j++ {
		ts = append(ts, G.TensorType{Dims: 2, Of: a})
	}
	switch op.kind {
	case mlpInputGrad, mlpParamGrad:
		ts = append(ts, G.TensorType{Dims: 1, Of: a}) // g
	case mlpJVP:
		ts = append(ts, G.TensorType{Dims: 2, Of: a}) // H
	case mlpInputHVP, mlpMixed:
		ts = append(ts, G.TensorType{Dims: 1, Of: a}, G.TensorType{Dims: 2, Of: a})
	}
	return hm.NewFnType(append(ts, G.TensorType{Dims: op.outDims(), Of: a})...)
}

func (op mlpOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(in), op.Arity())
	}
	xs, ok := in[0].(tensor.Shape)
	if !ok || len(xs) != 2 || xs[1] != op.sizes[0] {
		return nil, fmt.Errorf("%v: input X has shape %v, want (n, %d)", op, in[0], op.sizes[0])
	}
	n := xs[0]
	for j := 0; j < 2*op.layers(); j++ {
		s, ok := in[1+j].(tensor.Shape)
		if !ok || !s.Eq(tensor.Shape(op.paramShape(j))) {
			return nil, fmt.Errorf("%v: parameter %d has shape %v, want %v", op, j, in[1+j], op.paramShape(j))
		}
	}
	rest := in[1+2*op.layers():]
	for _, r := range rest {
		s, ok := r.(tensor.Shape)
		if !ok || s[0] != n {
			return nil, fmt.Errorf("%v: extra input of shape %v for %d rows", op, r, n)
		}
	}
	switch op.kind {
	case mlpValue, mlpJVP:
		return tensor.Shape{n}, nil
	case mlpInputGrad, mlpInputHVP:
		return tensor.Shape{n, op.sizes[0]}, nil
	}
	return tensor.Shape{op.numParams()}, nil
}

// numParams is the number of weights and biases.
func (op mlpOp) numParams() int {
	n := 0
	for l := 0; l < op.layers(); l++ {
		n += (op.sizes[l] + 1) * op.sizes[l+1]
	}
	return n
}

// paramOffset is the offset of parameter j (W_l for even j, B_l for odd) in
// the flat parameter gradient.
func (op mlpOp) paramOffset(j int) int {
	off := 0
	for i := 0; i < j; i++ {
		s := op.paramShape(i)
		off += s[0] * s[1]
	}
	return off
}

func (op mlpOp) with(kind mlpKind) mlpOp { return newMLPOp(kind, op.sizes, op.act) }

// paramGrads applies a flat parameter-gradient op and splits its result
// into the parameters' shapes.
func (op mlpOp) paramGrads(inputs G.Nodes, extra ...*G.Node) (G.Nodes, error) {
	all, err := op.apply(inputs, extra...)
	if err != nil {
		return nil, err
	}
	var ds G.Nodes
	for j := 0; j < 2*op.layers(); j++ {
		s := op.paramShape(j)
		off := op.paramOffset(j)
		d, err := Slice(all, 0, off, off+s[0]*s[1])
		if err != nil {
			return nil, err
		}
		if d, err = Reshape(d, s...); err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// apply applies a derivative op to X, the parameters and extra inputs.
func (op mlpOp) apply(inputs G.Nodes, extra ...*G.Node) (*G.Node, error) {
	args := append(append(G.Nodes{}, inputs[:1+2*op.layers()]...), extra...)
	return G.ApplyOp(op, args...)
}

func (op mlpOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	np := 2 * op.layers()
	ds := make(G.Nodes, len(inputs))
	var err error
	switch op.kind {
	case mlpValue:
		if ds[0], err = op.with(mlpInputGrad).apply(inputs, grad); err != nil {
			return nil, err
		}
		ps, err := op.with(mlpParamGrad).paramGrads(inputs, grad)
		if err != nil {
			return nil, err
		}
		copy(ds[1:], ps)
	case mlpInputGrad, mlpJVP:
		// mlpInputGrad(g) is linear in g; mlpJVP(H) is linear in H. Both are
		// ⟨g_i, ∇ₓf(x_i)·H_i⟩ seen from either side.
		g, h := inputs[1+np], grad
		if op.kind == mlpJVP {
			g, h = grad, inputs[1+np]
		}
		if ds[0], err = op.with(mlpInputHVP).apply(inputs, g, h); err != nil {
			return nil, err
		}
		ps, err := op.with(mlpMixed).paramGrads(inputs, g, h)
		if err != nil {
			return nil, err
		}
		copy(ds[1:], ps)
		if op.kind == mlpInputGrad {
			ds[1+np], err = op.with(mlpJVP).apply(inputs, h)
		} else {
			ds[1+np], err = op.with(mlpInputGrad).apply(inputs, g)
		}
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%v: third derivatives of the fused MLP are not implemented", op)
	}
	return ds, nil
}

// Do evaluates the op row by row, in parallel over blocks of rows.
func (op mlpOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo evaluates the op into prealloc where Output allows.
func (op mlpOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(vals), op.Arity())
	}
	shapes := make([]G.DimSizer, len(vals))
	data := make([][]float64, len(vals))
	var scratch []*[]float64 // float64 copies of float32 data, back to the pool at the end
	defer func() {
		for _, b := range scratch {
			f64Scratch.Put(b)
		}
	}()
	widen := func(n int) []float64 {
		b, _ := f64Scratch.Get().(*[]float64)
		if b == nil || cap(*b) < n {
			b = new([]float64)
			*b = make([]float64, n)
		}
		*b = (*b)[:n]
		scratch = append(scratch, b)
		return *b
	}
	var dt tensor.Dtype
	for i, v := range vals {
		t, ok := v.(tensor.Tensor)
		if !ok {
			return nil, fmt.Errorf("%v: input %d is %T, not a tensor", op, i, v)
		}
		shapes[i] = t.Shape()
		dt = t.Dtype()
		switch d := t.Data().(type) {
		case []float64:
			data[i] = d
		case []float32:
			data[i] = widen(len(d))
			for j, x := range d {
				data[i][j] = float64(x)
			}
		default:
			return nil, fmt.Errorf("%v: input %d has unsupported data %T", op, i, d)
		}
	}
	outShape, err := op.InferShape(shapes...)
	if err != nil {
		return nil, err
	}
	if dt == tensor.Float32 {
		out := widen(outShape.TotalSize())
		clear(out) // compute adds into it
		op.compute(data, out, nil)
		t, o32 := Output[float32](prealloc, outShape, vals...)
		for i, v := range out {
			o32[i] = float32(v)
		}
		return t, nil
	}
	t, out := Output[float64](prealloc, outShape, vals...)
	clear(out) // compute adds into it
	op.compute(data, out, nil)
	return t, nil
}

// f64Scratch holds the float64 buffers that float32 evaluations compute in.
var f64Scratch sync.Pool

// mlpBlock is the number of rows a kernel processes at once, with BLAS.
const mlpBlock = 256

// compute fills out from the inputs' data; for mlpInputGrad, value (when not
// nil) also receives the network's outputs f(x_i) from the same pass.
func (op mlpOp) compute(data [][]float64, out, value []float64) {
	in := op.sizes[0]
	n := len(data[0]) / in
	np := 2 * op.layers()
	params := data[1 : 1+np]
	var g, h []float64
	switch op.kind {
	case mlpInputGrad, mlpParamGrad:
		g = data[1+np]
	case mlpJVP:
		h = data[1+np]
	case mlpInputHVP, mlpMixed:
		g, h = data[1+np], data[2+np]
	}
	reduce := op.kind == mlpParamGrad || op.kind == mlpMixed
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
func (op mlpOp) computeSpan(k *mlpKernel, data [][]float64, out, value, g, h, partial []float64, lo, hi int) {
	in := op.sizes[0]
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
		switch op.kind {
		case mlpValue:
			if k.shallow() {
				k.shallowRows(x, rows, nil, out[b0:b1], nil)
				break
			}
			k.forward(x, rows)
			copy(out[b0:b1], k.z[len(k.z)-1][:rows])
		case mlpInputGrad:
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
		case mlpParamGrad:
			if k.shallowReLU() {
				k.shallowParamGrad(x, gb, rows, partial)
				break
			}
			k.forward(x, rows)
			k.reverse(gb, nil, partial)
		case mlpJVP:
			// the directional derivative of f along H_i
			if k.shallowReLU() {
				k.shallowJVP(x, hb, rows, out[b0:b1])
				break
			}
			k.tangent(x, hb, rows)
			copy(out[b0:b1], k.zd[len(k.zd)-1][:rows])
		case mlpInputHVP:
			if k.shallowReLU() {
				// ReLU's act2 is zero, and so is every term tangentReverse
				// sums: +0, as from mulT
				clear(out[b0*in : b1*in])
				break
			}
			k.tangent(x, hb, rows)
			k.tangentReverse(gb, out[b0*in:b1*in], nil)
		case mlpMixed:
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
	op               mlpOp
	params           [][]float64
	z, a, zd, ad     [][]float64
	zb, ab, zdb, adb [][]float64
	x, h             []float64
	wt               []float64 // the shallow kernels' transposed first layer
	acc              []float64 // the shallow kernels' column of dW0
	rows             int
	off              []int // offsets of the parameters in a flat gradient
}

// kernels are reused across runs: their buffers are the op's only
// allocation besides its output.
var mlpKernels sync.Map // network shape → *sync.Pool of *mlpKernel

func getMLPKernel(op mlpOp, params [][]float64) *mlpKernel {
	key := fmt.Sprint(op.sizes)
	p, _ := mlpKernels.LoadOrStore(key, &sync.Pool{})
	if k, ok := p.(*sync.Pool).Get().(*mlpKernel); ok {
		k.op, k.params = op, params
		return k
	}
	return newMLPKernel(op, params)
}

func putMLPKernel(k *mlpKernel) {
	k.params, k.x, k.h = nil, nil, nil
	if p, ok := mlpKernels.Load(fmt.Sprint(k.op.sizes)); ok {
		p.(*sync.Pool).Put(k)
	}
}

func newMLPKernel(op mlpOp, params [][]float64) *mlpKernel {
	k := &mlpKernel{op: op, params: params}
	L := op.layers()
	mk := func() [][]float64 {
		v := make([][]float64, L)
		for l := range v {
			v[l] = make([]float64, mlpBlock*op.sizes[l+1])
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
func mulAdd(c, a, w []float64, rows, fin, fout int) {
	if fin*fout > smallLayer {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, mat(a, rows, fin), mat(w, fin, fout), 1, mat(c, rows, fout))
		return
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

// shallowFastPath enables shallowRows (tests switch it off to compare).
var shallowFastPath = true

// shallow reports whether the network has one hidden layer (in → h → 1), the
// shape of NNSGHMC's trained networks, which the shallow kernels evaluate.
// They sum in the order of the general kernel's plain loops, so they take
// only the layers those loops compute: not BLAS's (in·h > smallLayer), nor
// a hidden layer of one unit, which mulAdd sums as an output layer.
func (k *mlpKernel) shallow() bool {
	s := k.op.sizes
	return shallowFastPath && k.op.layers() == 2 && s[1] > 1 && s[0]*s[1] <= smallLayer
}

// shallowParams returns a one-hidden-layer network's parameters, with W0's
// columns made contiguous in k.wt: wt[j·in+i] = W0[i·h+j], the weights of
// hidden unit j.
func (k *mlpKernel) shallowParams() (b0, w1 []float64, b1 float64) {
	in, h := k.op.sizes[0], k.op.sizes[1]
	w0 := k.params[0][:in*h]
	k.wt = grow(k.wt, in*h)
	for i := 0; i < in; i++ {
		for j := 0; j < h; j++ {
			k.wt[j*in+i] = w0[i*h+j]
		}
	}
	return k.params[1][:h], k.params[2][:h], k.params[3][0]
}

// shallowRows evaluates a network with one hidden layer row by row, the
// hidden units in registers: f(x_r) into out and g_r·∇ₓf(x_r) into dx (each
// skipped when nil). It is the fast path of mlpValue and mlpInputGrad and
// gives bit for bit what forward and reverse give: the same products summed
// in the same order.
func (k *mlpKernel) shallowRows(x []float64, rows int, g, out, dx []float64) {
	in := k.op.sizes[0]
	b0, w1, b1 := k.shallowParams()
	if k.op.act == ReLU {
		switch {
		case dx == nil && in == 2:
			k.shallowReLUValue2(x, rows, out, b0, w1, b1)
			return
		case dx == nil && in == 3:
			k.shallowReLUValue3(x, rows, out, b0, w1, b1)
			return
		case in == 2:
			k.shallowReLU2(x, rows, g, out, dx, b0, w1, b1)
			return
		case in == 3:
			k.shallowReLU3(x, rows, g, out, dx, b0, w1, b1)
			return
		}
	}
	tanh := k.op.act == Tanh
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
// inputs and ReLU.
func (k *mlpKernel) shallowReLUValue2(x []float64, rows int, out, b0, w1 []float64, b1 float64) {
	h := len(b0)
	wt := k.wt[:2*h]
	w1 = w1[:h]
	r := 0
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
// inputs and ReLU.
func (k *mlpKernel) shallowReLUValue3(x []float64, rows int, out, b0, w1 []float64, b1 float64) {
	h := len(b0)
	wt := k.wt[:3*h]
	w1 = w1[:h]
	for r := 0; r < rows; r++ {
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
// f_Q's and f_D's shapes, 2 and 3 inputs and ReLU, with the inputs in
// registers and no branch on the units' signs.
func (k *mlpKernel) shallowReLU2(x []float64, rows int, g, out, dx, b0, w1 []float64, b1 float64) {
	h := len(b0)
	wt := k.wt[:2*h]
	w1 = w1[:h]
	for r := 0; r < rows; r++ {
		x0, x1, gr := x[2*r], x[2*r+1], g[r]
		sum, d0, d1 := 0.0, 0.0, 0.0
		for j, bj := range b0 {
			z := bj + x0*wt[2*j] + x1*wt[2*j+1]
			sum += max(z, 0) * w1[j]
			c := math.Float64frombits(math.Float64bits(gr*w1[j]) & reluMask(z))
			d0 += c * wt[2*j]
			d1 += c * wt[2*j+1]
		}
		if out != nil {
			out[r] = b1 + sum
		}
		dx[2*r], dx[2*r+1] = d0, d1
	}
}

func (k *mlpKernel) shallowReLU3(x []float64, rows int, g, out, dx, b0, w1 []float64, b1 float64) {
	h := len(b0)
	wt := k.wt[:3*h]
	w1 = w1[:h]
	for r := 0; r < rows; r++ {
		x0, x1, x2, gr := x[3*r], x[3*r+1], x[3*r+2], g[r]
		sum, d0, d1, d2 := 0.0, 0.0, 0.0, 0.0
		for j, bj := range b0 {
			z := bj + x0*wt[3*j] + x1*wt[3*j+1] + x2*wt[3*j+2]
			sum += max(z, 0) * w1[j]
			c := math.Float64frombits(math.Float64bits(gr*w1[j]) & reluMask(z))
			d0 += c * wt[3*j]
			d1 += c * wt[3*j+1]
			d2 += c * wt[3*j+2]
		}
		if out != nil {
			out[r] = b1 + sum
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
func (k *mlpKernel) shallowReLU() bool { return k.shallow() && k.op.act == ReLU }

// ReLUGate is v where a ReLU unit with pre-activation z is on (z > 0) and
// +0 where it is off, without a branch: v·relu'(z) but for the sign of a
// zero, which changes no sum. A NaN z is off, as in forward. Code that
// differentiates a ReLU network without a graph uses it to agree with the
// network's kernels bit for bit.
func ReLUGate(z, v float64) float64 {
	return math.Float64frombits(math.Float64bits(v) & reluMask(z))
}

// shallowParamGrad is the fast path of mlpParamGrad: it adds
// Σ_r g_r·∂f(x_r)/∂θ over a block's rows into the flat dp, hidden unit by
// hidden unit, the unit's gradients held in registers (W0's column in
// k.acc) while the rows go by. Each gradient gets the terms reverse gives
// it, in the same row order.
func (k *mlpKernel) shallowParamGrad(x, g []float64, rows int, dp []float64) {
	in := k.op.sizes[0]
	b0, w1, _ := k.shallowParams()
	h := len(b0)
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
	k.acc = grow(k.acc, in)
	acc := k.acc
	for j, bj := range b0 {
		wj := k.wt[j*in : (j+1)*in : (j+1)*in]
		for i := range acc {
			acc[i] = dw0[i*h+j]
		}
		sw, sb, w1j := dw1[j], db0[j], w1[j]
		for r, gr := range g {
			xr := x[r*in : (r+1)*in : (r+1)*in]
			z := bj
			for i, v := range xr {
				z += v * wj[i]
			}
			zb := ReLUGate(z, gr*w1j) // the adjoint of z
			sw += ReLUGate(z, z) * gr
			sb += zb
			for i, v := range xr {
				acc[i] += v * zb
			}
		}
		for i, v := range acc {
			dw0[i*h+j] = v
		}
		dw1[j], db0[j] = sw, sb
	}
}

// shallowReLUParamGrad2 and shallowReLUParamGrad3 are shallowParamGrad for
// f_Q's and f_D's shapes, 2 and 3 inputs, with all of a unit's weights and
// gradients in registers.
func (k *mlpKernel) shallowReLUParamGrad2(x, g, dw0, db0, dw1, b0, w1 []float64) {
	h := len(b0)
	wt, dw0, db0, dw1, w1 := k.wt[:2*h], dw0[:2*h], db0[:h], dw1[:h], w1[:h]
	x = x[:2*len(g)]
	for j, bj := range b0 {
		v0, v1, w1j := wt[2*j], wt[2*j+1], w1[j]
		d0, d1, sw, sb := dw0[j], dw0[h+j], dw1[j], db0[j]
		for r, gr := range g {
			x0, x1 := x[2*r], x[2*r+1]
			z := bj + x0*v0 + x1*v1
			zb := ReLUGate(z, gr*w1j)
			sw += ReLUGate(z, z) * gr
			sb += zb
			d0 += x0 * zb
			d1 += x1 * zb
		}
		dw0[j], dw0[h+j], dw1[j], db0[j] = d0, d1, sw, sb
	}
}

func (k *mlpKernel) shallowReLUParamGrad3(x, g, dw0, db0, dw1, b0, w1 []float64) {
	h := len(b0)
	wt, dw0, db0, dw1, w1 := k.wt[:3*h], dw0[:3*h], db0[:h], dw1[:h], w1[:h]
	x = x[:3*len(g)]
	for j, bj := range b0 {
		v0, v1, v2, w1j := wt[3*j], wt[3*j+1], wt[3*j+2], w1[j]
		d0, d1, d2, sw, sb := dw0[j], dw0[h+j], dw0[2*h+j], dw1[j], db0[j]
		for r, gr := range g {
			x0, x1, x2 := x[3*r], x[3*r+1], x[3*r+2]
			z := bj + x0*v0 + x1*v1 + x2*v2
			zb := ReLUGate(z, gr*w1j)
			sw += ReLUGate(z, z) * gr
			sb += zb
			d0 += x0 * zb
			d1 += x1 * zb
			d2 += x2 * zb
		}
		dw0[j], dw0[h+j], dw0[2*h+j], dw1[j], db0[j] = d0, d1, d2, sw, sb
	}
}

// shallowJVP is the fast path of mlpJVP: ∇ₓf(x_r)·H_r into out, row by row
// as tangent sums it.
func (k *mlpKernel) shallowJVP(x, hd []float64, rows int, out []float64) {
	in := k.op.sizes[0]
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
			s += ReLUGate(z, zd) * w1[j]
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
			s += ReLUGate(z, zd) * w1[j]
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
			s += ReLUGate(z, zd) * w1[j]
		}
		out[r] = s
	}
}

// shallowMixed is the fast path of mlpMixed: it adds
// Σ_r g_r·∂(∇ₓf(x_r)·H_r)/∂θ over a block's rows into the flat dp, hidden
// unit by hidden unit like shallowParamGrad. ReLU's act2 is zero, and so
// is the adjoint of z that tangentReverse carries: only the tangent path's
// terms are left, ż_j·g into W1 and H_i·ż̄_j into W0, with ż̄_j = g·w1_j
// where unit j is on.
func (k *mlpKernel) shallowMixed(x, g, hd []float64, rows int, dp []float64) {
	in := k.op.sizes[0]
	b0, w1, _ := k.shallowParams()
	h := len(b0)
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
	k.acc = grow(k.acc, in)
	acc := k.acc
	for j, bj := range b0 {
		wj := k.wt[j*in : (j+1)*in : (j+1)*in]
		for i := range acc {
			acc[i] = dw0[i*h+j]
		}
		sw, w1j := dw1[j], w1[j]
		for r, gr := range g {
			xr, hr := x[r*in:(r+1)*in:(r+1)*in], hd[r*in:(r+1)*in:(r+1)*in]
			z, zd := bj, 0.0
			for i, v := range xr {
				z += v * wj[i]
				zd += hr[i] * wj[i]
			}
			sw += ReLUGate(z, zd) * gr
			zdb := ReLUGate(z, gr*w1j) // the adjoint of ż
			for i, v := range hr {
				acc[i] += v * zdb
			}
		}
		for i, v := range acc {
			dw0[i*h+j] = v
		}
		dw1[j] = sw
	}
}

// shallowReLUMixed2 and shallowReLUMixed3 are shallowMixed for f_Q's and
// f_D's shapes, 2 and 3 inputs, with all of a unit's weights and gradients
// in registers, and ż without the leading +0 like shallowReLUJVP2 and 3.
func (k *mlpKernel) shallowReLUMixed2(x, g, hd, dw0, dw1, b0, w1 []float64) {
	h := len(b0)
	wt, dw0, dw1, w1 := k.wt[:2*h], dw0[:2*h], dw1[:h], w1[:h]
	x, hd = x[:2*len(g)], hd[:2*len(g)]
	for j, bj := range b0 {
		v0, v1, w1j := wt[2*j], wt[2*j+1], w1[j]
		d0, d1, sw := dw0[j], dw0[h+j], dw1[j]
		for r, gr := range g {
			h0, h1 := hd[2*r], hd[2*r+1]
			z := bj + x[2*r]*v0 + x[2*r+1]*v1
			sw += ReLUGate(z, h0*v0+h1*v1) * gr
			zdb := ReLUGate(z, gr*w1j)
			d0 += h0 * zdb
			d1 += h1 * zdb
		}
		dw0[j], dw0[h+j], dw1[j] = d0, d1, sw
	}
}

func (k *mlpKernel) shallowReLUMixed3(x, g, hd, dw0, dw1, b0, w1 []float64) {
	h := len(b0)
	wt, dw0, dw1, w1 := k.wt[:3*h], dw0[:3*h], dw1[:h], w1[:h]
	x, hd = x[:3*len(g)], hd[:3*len(g)]
	for j, bj := range b0 {
		v0, v1, v2, w1j := wt[3*j], wt[3*j+1], wt[3*j+2], w1[j]
		d0, d1, d2, sw := dw0[j], dw0[h+j], dw0[2*h+j], dw1[j]
		for r, gr := range g {
			h0, h1, h2 := hd[3*r], hd[3*r+1], hd[3*r+2]
			z := bj + x[3*r]*v0 + x[3*r+1]*v1 + x[3*r+2]*v2
			sw += ReLUGate(z, h0*v0+h1*v1+h2*v2) * gr
			zdb := ReLUGate(z, gr*w1j)
			d0 += h0 * zdb
			d1 += h1 * zdb
			d2 += h2 * zdb
		}
		dw0[j], dw0[h+j], dw0[2*h+j], dw1[j] = d0, d1, d2, sw
	}
}

// act1 and act2 are the activation's first two derivatives, given the
// pre-activation z and the activation a.
func (k *mlpKernel) act1(z, a float64) float64 {
	if k.op.act == Tanh {
		return 1 - a*a
	}
	if z > 0 {
		return 1
	}
	return 0
}

func (k *mlpKernel) act2(z, a float64) float64 {
	if k.op.act == Tanh {
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
		fin, fout := k.op.sizes[l], k.op.sizes[l+1]
		z := k.z[l][:rows*fout]
		b := k.params[2*l+1]
		for r := 0; r < rows; r++ {
			copy(z[r*fout:(r+1)*fout], b)
		}
		mulAdd(z, k.input(l), k.params[2*l], rows, fin, fout)
		if l < L-1 {
			a := k.a[l][:rows*fout]
			if k.op.act == Tanh {
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
	fin, fout := k.op.sizes[l], k.op.sizes[l+1]
	rows := k.rows
	mulTAdd(dp[k.off[2*l]:k.off[2*l]+fin*fout], in, zb, rows, fin, fout)
	db := dp[k.off[2*l+1] : k.off[2*l+1]+fout]
	for r := 0; r < rows; r++ {
		for c, v := range zb[r*fout : (r+1)*fout] {
			db[c] += v
		}
	}
}

// back multiplies an adjoint by W_lᵀ: dst = src·W_lᵀ.
func (k *mlpKernel) back(l int, src, dst []float64) {
	fin, fout := k.op.sizes[l], k.op.sizes[l+1]
	mulT(dst, src, k.params[2*l], k.rows, fin, fout)
}

// reverse back-propagates upstream gradients gy of f over the block after
// forward. It writes ∂/∂X into dx (if not nil) and adds ∂/∂θ into the flat
// dp (if not nil).
func (k *mlpKernel) reverse(gy, dx, dp []float64) {
	L := k.op.layers()
	rows := k.rows
	copy(k.zb[L-1][:rows], gy)
	for l := L - 1; l >= 0; l-- {
		fout := k.op.sizes[l+1]
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
		for c := range zprev[:rows*k.op.sizes[l]] {
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
		fin, fout := k.op.sizes[l], k.op.sizes[l+1]
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
		fout := k.op.sizes[l+1]
		zb, zdb := k.zb[l][:rows*fout], k.zdb[l][:rows*fout]
		ind := k.h
		if l > 0 {
			ind = k.ad[l-1]
		}
		if dp != nil {
			k.addParamGrad(l, k.input(l), zb, dp)
			// the tangent path adds ind·ż̄ to dW but nothing to db
			fin := k.op.sizes[l]
			mulTAdd(dp[k.off[2*l]:k.off[2*l]+fin*fout], ind, zdb, rows, fin, fout)
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
		for c := range ab[:rows*k.op.sizes[l]] {
			d1 := k.act1(z[c], a[c])
			k.zdb[l-1][c] = adb[c] * d1
			k.zb[l-1][c] = ab[c]*d1 + adb[c]*k.act2(z[c], a[c])*zd[c]
		}
	}
}
