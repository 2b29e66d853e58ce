package coordnet

import (
	"fmt"
	"sync"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph"
)

// Net is one MLP with shared weights applied to every row of an
// (n, in) matrix — the per-coordinate networks f_Q and f_D of NNSGHMC. Its
// weights are input nodes, so gradients can be taken with respect to them.
type Net struct {
	Weights *Weights
	W, B    G.Nodes
}

// NewNet binds weights into g as input nodes named name.W0, name.B0, ….
func NewNet(g *G.ExprGraph, dt tensor.Dtype, name string, w *Weights) (*Net, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	m := &Net{Weights: w}
	s := w.sizes()
	for l := 0; l+1 < len(s); l++ {
		m.W = append(m.W, graph.Input(g, dt, fmt.Sprintf("%s.W%d", name, l), s[l], s[l+1]))
		m.B = append(m.B, graph.Input(g, dt, fmt.Sprintf("%s.B%d", name, l), 1, s[l+1]))
	}
	return m, m.Sync()
}

// Params returns the weight nodes in the order of Weights.Params.
func (m *Net) Params() G.Nodes {
	var ps G.Nodes
	for l := range m.W {
		ps = append(ps, m.W[l], m.B[l])
	}
	return ps
}

// Sync copies the current values of m.Weights into the graph's nodes.
func (m *Net) Sync() error {
	for i, p := range m.Weights.Params() {
		if err := graph.SetValue(m.Params()[i], p); err != nil {
			return err
		}
	}
	return nil
}

// Forward applies the network to every row of x, shape (n, in), and returns
// the (n) vector of outputs, as one fused op whose derivatives of first and
// second order are fused ops too.
func (m *Net) Forward(x *G.Node) (*G.Node, error) {
	s := x.Shape()
	if len(s) != 2 || s[1] != m.Weights.Inputs {
		return nil, fmt.Errorf("Net.Forward: input shape %v, want (n, %d)", s, m.Weights.Inputs)
	}
	op := newMLPOp(mlpValue, m.Weights.sizes(), m.Weights.Activation)
	return G.ApplyOp(op, append(G.Nodes{x}, m.Params()...)...)
}

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
type mlpOp struct {
	graph.OpBase
	spec
}

// spec is what an op computes: its kind and the network's layer sizes and
// activation. The kernels need nothing else.
type spec struct {
	kind  mlpKind
	sizes []int // in, hidden…, 1
	act   Activation
}

// opNamespace is the ops' namespace (see graph.NewOpBase): the one of
// package graph's own ops, in which these were written first, so that a
// graph hashes its nodes as it did then.
const opNamespace = "metasgmcmc"

// newMLPOp returns the op of the given kind for a network of the given
// layer sizes and activation.
func newMLPOp(kind mlpKind, sizes []int, act Activation) mlpOp {
	op := mlpOp{spec: spec{kind: kind, sizes: sizes, act: act}}
	op.OpBase = graph.NewOpBase(opNamespace, fmt.Sprintf("%s%v(%s)", mlpKindNames[kind], sizes, act), 1+2*op.layers()+op.extra())
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

func (op spec) layers() int { return len(op.sizes) - 1 }

// extra is the number of inputs after X and the parameters.
func (op spec) extra() int {
	switch op.kind {
	case mlpValue:
		return 0
	case mlpInputGrad, mlpParamGrad, mlpJVP:
		return 1
	}
	return 2
}

// paramShape is the shape of parameter j (W_l for even j, B_l for odd).
func (op spec) paramShape(j int) []int {
	l := j / 2
	if j%2 == 0 {
		return []int{op.sizes[l], op.sizes[l+1]}
	}
	return []int{1, op.sizes[l+1]}
}

func (op spec) outDims() int {
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
func (op spec) numParams() int {
	n := 0
	for l := 0; l < op.layers(); l++ {
		n += (op.sizes[l] + 1) * op.sizes[l+1]
	}
	return n
}

// paramOffset is the offset of parameter j (W_l for even j, B_l for odd) in
// the flat parameter gradient.
func (op spec) paramOffset(j int) int {
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
		d, err := graph.Slice(all, 0, off, off+s[0]*s[1])
		if err != nil {
			return nil, err
		}
		if d, err = graph.Reshape(d, s...); err != nil {
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
		t, o32 := graph.Output[float32](prealloc, outShape, vals...)
		for i, v := range out {
			o32[i] = float32(v)
		}
		return t, nil
	}
	t, out := graph.Output[float64](prealloc, outShape, vals...)
	clear(out) // compute adds into it
	op.compute(data, out, nil)
	return t, nil
}

// f64Scratch holds the float64 buffers that float32 evaluations compute in.
var f64Scratch sync.Pool
