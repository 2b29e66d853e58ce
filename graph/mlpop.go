package graph

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"runtime"
	"sync"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
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
//	mlpValue(X, θ)           = f(x_i)                       (n)
//	mlpInputGrad(X, θ, g)    = g_i·∇ₓf(x_i)                 (n, in)
//	mlpParamGrad_l(X, θ, g)  = Σ_i g_i·∂f(x_i)/∂θ_l          (shape of θ_l)
//	mlpJVP(X, θ, H)          = ∇ₓf(x_i)·H_i                 (n)
//	mlpInputHVP(X, θ, g, H)  = g_i·∇ₓ²f(x_i)·H_i            (n, in)
//	mlpMixed_l(X, θ, g, H)   = Σ_i g_i·∂(∇ₓf(x_i)·H_i)/∂θ_l  (shape of θ_l)
//
// with derivatives
//
//	mlpValue:     dX = mlpInputGrad(g),  dθ_l = mlpParamGrad_l(g)
//	mlpInputGrad: dX = mlpInputHVP(g, U), dθ_l = mlpMixed_l(g, U), dg = mlpJVP(U)
//	mlpJVP:       dX = mlpInputHVP(u, H), dθ_l = mlpMixed_l(u, H), dH = mlpInputGrad(u)
//
// (U and u are the upstream gradients). The third derivatives — of
// mlpParamGrad, mlpInputHVP and mlpMixed — are not implemented and make
// Grad fail with an error rather than return something wrong.
type mlpOp struct {
	kind  mlpKind
	sizes []int // in, hidden…, 1
	act   Activation
	param int // mlpParamGrad, mlpMixed: index into W0, B0, W1, B1, …
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

func (op mlpOp) Arity() int { return 1 + 2*op.layers() + op.extra() }

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
	case mlpValue, mlpJVP:
		return 1
	}
	return 2
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
	return tensor.Shape(op.paramShape(op.param)), nil
}

func (op mlpOp) ReturnsPtr() bool     { return false }
func (op mlpOp) CallsExtern() bool    { return false }
func (op mlpOp) OverwritesInput() int { return -1 }

func (op mlpOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "metasgmcmc.%v", op) }

func (op mlpOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

func (op mlpOp) String() string {
	s := fmt.Sprintf("%s%v(%s)", mlpKindNames[op.kind], op.sizes, op.act)
	if op.kind == mlpParamGrad || op.kind == mlpMixed {
		s += fmt.Sprintf("[%d]", op.param)
	}
	return s
}

func (op mlpOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

func (op mlpOp) with(kind mlpKind, param int) mlpOp {
	return mlpOp{kind: kind, sizes: op.sizes, act: op.act, param: param}
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
		if ds[0], err = op.with(mlpInputGrad, 0).apply(inputs, grad); err != nil {
			return nil, err
		}
		for j := 0; j < np; j++ {
			if ds[1+j], err = op.with(mlpParamGrad, j).apply(inputs, grad); err != nil {
				return nil, err
			}
		}
	case mlpInputGrad, mlpJVP:
		// mlpInputGrad(g) is linear in g; mlpJVP(H) is linear in H. Both are
		// ⟨g_i, ∇ₓf(x_i)·H_i⟩ seen from either side.
		g, h := inputs[1+np], grad
		if op.kind == mlpJVP {
			g, h = grad, inputs[1+np]
		}
		if ds[0], err = op.with(mlpInputHVP, 0).apply(inputs, g, h); err != nil {
			return nil, err
		}
		for j := 0; j < np; j++ {
			if ds[1+j], err = op.with(mlpMixed, j).apply(inputs, g, h); err != nil {
				return nil, err
			}
		}
		if op.kind == mlpInputGrad {
			ds[1+np], err = op.with(mlpJVP, 0).apply(inputs, h)
		} else {
			ds[1+np], err = op.with(mlpInputGrad, 0).apply(inputs, g)
		}
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%v: third derivatives of the fused MLP are not implemented", op)
	}
	return ds, nil
}

func (op mlpOp) DoDiff(G.ExecutionContext, G.Nodes, *G.Node) error {
	return fmt.Errorf("%v: automatic (LispMachine) differentiation is not supported; use symbolic gradients", op)
}

// Do evaluates the op row by row, in parallel over blocks of rows.
func (op mlpOp) Do(vals ...G.Value) (G.Value, error) {
	if len(vals) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(vals), op.Arity())
	}
	shapes := make([]G.DimSizer, len(vals))
	data := make([][]float64, len(vals))
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
			data[i] = make([]float64, len(d))
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
	out := make([]float64, outShape.TotalSize())
	op.compute(data, out)
	if dt == tensor.Float32 {
		o32 := make([]float32, len(out))
		for i, v := range out {
			o32[i] = float32(v)
		}
		return tensor.New(tensor.WithShape(outShape...), tensor.WithBacking(o32)), nil
	}
	return tensor.New(tensor.WithShape(outShape...), tensor.WithBacking(out)), nil
}

// compute fills out from the inputs' data.
func (op mlpOp) compute(data [][]float64, out []float64) {
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
	workers := min(runtime.GOMAXPROCS(0), max(1, n/2048))
	partial := make([][]float64, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*n/workers, (w+1)*n/workers
		if reduce {
			partial[w] = make([]float64, len(out))
		}
		wg.Add(1)
		go func(w, lo, hi int) {
			defer wg.Done()
			k := newMLPKernel(op, params)
			for i := lo; i < hi; i++ {
				x := data[0][i*in : (i+1)*in]
				switch op.kind {
				case mlpValue:
					out[i] = k.forward(x)
				case mlpInputGrad:
					k.forward(x)
					k.reverse(g[i], out[i*in:(i+1)*in], nil, -1)
				case mlpParamGrad:
					k.forward(x)
					k.reverse(g[i], nil, partial[w], op.param)
				case mlpJVP:
					k.forward(x)
					gx := k.gx
					k.reverse(1, gx, nil, -1)
					s := 0.0
					for c := 0; c < in; c++ {
						s += gx[c] * h[i*in+c]
					}
					out[i] = s
				case mlpInputHVP:
					k.tangent(x, h[i*in:(i+1)*in])
					k.tangentReverse(g[i], out[i*in:(i+1)*in], nil, -1)
				case mlpMixed:
					k.tangent(x, h[i*in:(i+1)*in])
					k.tangentReverse(g[i], nil, partial[w], op.param)
				}
			}
		}(w, lo, hi)
	}
	wg.Wait()
	if reduce {
		for _, p := range partial {
			for j, v := range p {
				out[j] += v
			}
		}
	}
}

// mlpKernel evaluates one row at a time in preallocated buffers.
type mlpKernel struct {
	op     mlpOp
	params [][]float64
	// per layer l: pre-activation z, activation a, tangents zd, ad, and
	// their adjoints
	z, a, zd, ad     [][]float64
	zb, ab, zdb, adb [][]float64
	x, h, gx         []float64
}

func newMLPKernel(op mlpOp, params [][]float64) *mlpKernel {
	k := &mlpKernel{op: op, params: params}
	L := op.layers()
	mk := func() [][]float64 {
		v := make([][]float64, L)
		for l := range v {
			v[l] = make([]float64, op.sizes[l+1])
		}
		return v
	}
	k.z, k.a, k.zd, k.ad = mk(), mk(), mk(), mk()
	k.zb, k.ab, k.zdb, k.adb = mk(), mk(), mk(), mk()
	k.gx = make([]float64, op.sizes[0])
	return k
}

// act, act1, act2 are the activation and its first two derivatives, given
// the pre-activation z and the activation a.
func (k *mlpKernel) act(z float64) float64 {
	if k.op.act == Tanh {
		return math.Tanh(z)
	}
	return math.Max(z, 0)
}

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

// input returns the input of layer l: x for l = 0, else a_{l−1}.
func (k *mlpKernel) input(l int) []float64 {
	if l == 0 {
		return k.x
	}
	return k.a[l-1]
}

// forward computes the row's layers and returns f(x).
func (k *mlpKernel) forward(x []float64) float64 {
	k.x = x
	L := k.op.layers()
	for l := 0; l < L; l++ {
		W, b := k.params[2*l], k.params[2*l+1]
		fin, fout := k.op.sizes[l], k.op.sizes[l+1]
		z, in := k.z[l], k.input(l)
		copy(z, b)
		for r := 0; r < fin; r++ {
			v := in[r]
			row := W[r*fout : (r+1)*fout]
			for c, w := range row {
				z[c] += v * w
			}
		}
		if l < L-1 {
			for c, v := range z {
				k.a[l][c] = k.act(v)
			}
		}
	}
	return k.z[L-1][0]
}

// reverse back-propagates an upstream gradient gy of f(x) after forward.
// It writes ∂/∂x into dx (if not nil) and adds ∂/∂θ_param into dp (if not
// nil; param < 0 for none).
func (k *mlpKernel) reverse(gy float64, dx, dp []float64, param int) {
	L := k.op.layers()
	k.zb[L-1][0] = gy
	for l := L - 1; l >= 0; l-- {
		W := k.params[2*l]
		fin, fout := k.op.sizes[l], k.op.sizes[l+1]
		zb, in := k.zb[l], k.input(l)
		if dp != nil && param/2 == l {
			if param%2 == 1 {
				for c, v := range zb {
					dp[c] += v
				}
			} else {
				for r := 0; r < fin; r++ {
					for c := 0; c < fout; c++ {
						dp[r*fout+c] += in[r] * zb[c]
					}
				}
			}
		}
		var ib []float64 // adjoint of the layer's input
		if l > 0 {
			ib = k.ab[l-1]
		} else if dx != nil {
			ib = dx
		} else {
			break
		}
		for r := 0; r < fin; r++ {
			s := 0.0
			row := W[r*fout : (r+1)*fout]
			for c, w := range row {
				s += w * zb[c]
			}
			ib[r] = s
		}
		if l > 0 {
			for c := range k.zb[l-1] {
				k.zb[l-1][c] = ib[c] * k.act1(k.z[l-1][c], k.a[l-1][c])
			}
		}
	}
}

// tangent runs forward and the forward-mode derivative along h.
func (k *mlpKernel) tangent(x, h []float64) {
	k.forward(x)
	k.h = h
	L := k.op.layers()
	for l := 0; l < L; l++ {
		W := k.params[2*l]
		fin, fout := k.op.sizes[l], k.op.sizes[l+1]
		zd := k.zd[l]
		in := h
		if l > 0 {
			in = k.ad[l-1]
		}
		clear(zd)
		for r := 0; r < fin; r++ {
			v := in[r]
			row := W[r*fout : (r+1)*fout]
			for c, w := range row {
				zd[c] += v * w
			}
		}
		if l < L-1 {
			for c := range zd {
				k.ad[l][c] = k.act1(k.z[l][c], k.a[l][c]) * zd[c]
			}
		}
	}
}

// tangentReverse back-propagates gy·(∇ₓf·h) after tangent: it writes its
// derivative w.r.t. x (gy·∇ₓ²f·h) into dx and adds its derivative w.r.t.
// θ_param into dp.
func (k *mlpKernel) tangentReverse(gy float64, dx, dp []float64, param int) {
	L := k.op.layers()
	clear(k.zb[L-1])
	k.zdb[L-1][0] = gy
	for l := L - 1; l >= 0; l-- {
		W := k.params[2*l]
		fin, fout := k.op.sizes[l], k.op.sizes[l+1]
		zb, zdb := k.zb[l], k.zdb[l]
		in, ind := k.input(l), k.h
		if l > 0 {
			ind = k.ad[l-1]
		}
		if dp != nil && param/2 == l {
			if param%2 == 1 {
				for c, v := range zb {
					dp[c] += v
				}
			} else {
				for r := 0; r < fin; r++ {
					for c := 0; c < fout; c++ {
						dp[r*fout+c] += in[r]*zb[c] + ind[r]*zdb[c]
					}
				}
			}
		}
		if l == 0 {
			if dx != nil {
				for r := 0; r < fin; r++ {
					s := 0.0
					row := W[r*fout : (r+1)*fout]
					for c, w := range row {
						s += w * zb[c]
					}
					dx[r] = s
				}
			}
			break
		}
		ab, adb := k.ab[l-1], k.adb[l-1]
		for r := 0; r < fin; r++ {
			s, sd := 0.0, 0.0
			row := W[r*fout : (r+1)*fout]
			for c, w := range row {
				s += w * zb[c]
				sd += w * zdb[c]
			}
			ab[r], adb[r] = s, sd
		}
		for c := range k.zb[l-1] {
			z, a := k.z[l-1][c], k.a[l-1][c]
			d1 := k.act1(z, a)
			k.zdb[l-1][c] = adb[c] * d1
			k.zb[l-1][c] = ab[c]*d1 + adb[c]*k.act2(z, a)*k.zd[l-1][c]
		}
	}
}
