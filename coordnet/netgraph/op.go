package netgraph

import (
	"fmt"
	"sync"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
	"github.com/metasgmcmc/metasgmcmc/graph"
)

// Net is one MLP with shared weights applied to every row of an
// (n, in) matrix — the per-coordinate networks f_Q and f_D of NNSGHMC. Its
// weights are input nodes, so gradients can be taken with respect to them.
type Net struct {
	Weights *coordnet.Weights
	W, B    G.Nodes
}

// NewNet binds weights into g as input nodes named name.W0, name.B0, ….
func NewNet(g *G.ExprGraph, dt tensor.Dtype, name string, w *coordnet.Weights) (*Net, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	m := &Net{Weights: w}
	s := w.Spec(coordnet.Value)
	for l := 0; l+1 < len(s.Sizes); l++ {
		m.W = append(m.W, graph.Input(g, dt, fmt.Sprintf("%s.W%d", name, l), s.ParamShape(2*l)...))
		m.B = append(m.B, graph.Input(g, dt, fmt.Sprintf("%s.B%d", name, l), s.ParamShape(2*l+1)...))
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
	op := newMLPOp(m.Weights.Spec(coordnet.Value))
	return G.ApplyOp(op, append(G.Nodes{x}, m.Params()...)...)
}

// The per-coordinate MLP as fused Gorgonia ops. Built from Gorgonia's
// primitives, an MLP over n rows materialises a dozen (n, width) tensors in
// the forward pass and more in every derivative; NNSGHMC's step needs the
// networks, their input-derivatives (Γ) and the derivatives of those (the
// meta-gradient), so at n = 300,000 coordinates the primitive graph is slow
// and large. These ops compute each row in registers instead. Every op's
// derivative is again one of these ops, so Gorgonia's autodiff composes them
// to any order the sampler needs. There is one op per coordnet.Kind, which
// computes what coordnet.Spec.Compute does:
//
//	Value(X, θ)          = f(x_i)                       (n)
//	InputGrad(X, θ, g)   = g_i·∇ₓf(x_i)                 (n, in)
//	ParamGrad(X, θ, g)   = Σ_i g_i·∂f(x_i)/∂θ            (all parameters, flat)
//	JVP(X, θ, H)         = ∇ₓf(x_i)·H_i                 (n)
//	InputHVP(X, θ, g, H) = g_i·∇ₓ²f(x_i)·H_i            (n, in)
//	Mixed(X, θ, g, H)    = Σ_i g_i·∂(∇ₓf(x_i)·H_i)/∂θ    (all parameters, flat)
//
// with derivatives (θ_l is a slice of the flat parameter gradient)
//
//	Value:     dX = InputGrad(g),  dθ_l = ParamGrad(g)_l
//	InputGrad: dX = InputHVP(g, U), dθ_l = Mixed(g, U)_l, dg = JVP(U)
//	JVP:       dX = InputHVP(u, H), dθ_l = Mixed(u, H)_l, dH = InputGrad(u)
//
// (U and u are the upstream gradients). The third derivatives — of
// ParamGrad, InputHVP and Mixed — are not implemented and make Grad fail
// with an error rather than return something wrong.
type mlpOp struct {
	graph.OpBase
	coordnet.Spec
}

// opNamespace is the ops' namespace (see graph.NewOpBase): the one of
// package graph's own ops, in which these were written first, so that a
// graph hashes its nodes as it did then.
const opNamespace = "metasgmcmc"

// newMLPOp returns the op that computes s. Its name, which it hashes by,
// spells s: the kind's name, the layer sizes and the activation, as in
// "MLPJVP[2 10 1](relu)".
func newMLPOp(s coordnet.Spec) mlpOp {
	op := mlpOp{Spec: s}
	op.OpBase = graph.NewOpBase(opNamespace, fmt.Sprintf("%s%v(%s)", kindNames[s.Kind], s.Sizes, s.Act), 1+2*op.layers()+op.extra())
	return op
}

// kindNames are the ops' names by kind, as they were first written.
var kindNames = map[coordnet.Kind]string{
	coordnet.Value:     "MLP",
	coordnet.InputGrad: "MLPInputGrad",
	coordnet.ParamGrad: "MLPParamGrad",
	coordnet.JVP:       "MLPJVP",
	coordnet.InputHVP:  "MLPInputHVP",
	coordnet.Mixed:     "MLPMixed",
}

// layers is the number of layers, hidden and output.
func (op mlpOp) layers() int { return len(op.Sizes) - 1 }

// extra is the number of inputs after X and the parameters.
func (op mlpOp) extra() int {
	switch op.Kind {
	case coordnet.Value:
		return 0
	case coordnet.InputGrad, coordnet.ParamGrad, coordnet.JVP:
		return 1
	}
	return 2
}

func (op mlpOp) outDims() int {
	switch op.Kind {
	case coordnet.InputGrad, coordnet.InputHVP:
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
	switch op.Kind {
	case coordnet.InputGrad, coordnet.ParamGrad:
		ts = append(ts, G.TensorType{Dims: 1, Of: a}) // g
	case coordnet.JVP:
		ts = append(ts, G.TensorType{Dims: 2, Of: a}) // H
	case coordnet.InputHVP, coordnet.Mixed:
		ts = append(ts, G.TensorType{Dims: 1, Of: a}, G.TensorType{Dims: 2, Of: a})
	}
	return hm.NewFnType(append(ts, G.TensorType{Dims: op.outDims(), Of: a})...)
}

func (op mlpOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(in), op.Arity())
	}
	xs, ok := in[0].(tensor.Shape)
	if !ok || len(xs) != 2 || xs[1] != op.Sizes[0] {
		return nil, fmt.Errorf("%v: input X has shape %v, want (n, %d)", op, in[0], op.Sizes[0])
	}
	n := xs[0]
	for j := 0; j < 2*op.layers(); j++ {
		s, ok := in[1+j].(tensor.Shape)
		if !ok || !s.Eq(tensor.Shape(op.ParamShape(j))) {
			return nil, fmt.Errorf("%v: parameter %d has shape %v, want %v", op, j, in[1+j], op.ParamShape(j))
		}
	}
	rest := in[1+2*op.layers():]
	for _, r := range rest {
		s, ok := r.(tensor.Shape)
		if !ok || s[0] != n {
			return nil, fmt.Errorf("%v: extra input of shape %v for %d rows", op, r, n)
		}
	}
	switch op.Kind {
	case coordnet.Value, coordnet.JVP:
		return tensor.Shape{n}, nil
	case coordnet.InputGrad, coordnet.InputHVP:
		return tensor.Shape{n, op.Sizes[0]}, nil
	}
	return tensor.Shape{op.NumParams()}, nil
}

// with returns the op of the given kind for the same network.
func (op mlpOp) with(kind coordnet.Kind) mlpOp {
	s := op.Spec
	s.Kind = kind
	return newMLPOp(s)
}

// paramGrads applies a flat parameter-gradient op and splits its result
// into the parameters' shapes.
func (op mlpOp) paramGrads(inputs G.Nodes, extra ...*G.Node) (G.Nodes, error) {
	all, err := op.apply(inputs, extra...)
	if err != nil {
		return nil, err
	}
	var ds G.Nodes
	off := 0 // parameter j's offset in the flat gradient
	for j := 0; j < 2*op.layers(); j++ {
		s := op.ParamShape(j)
		d, err := graph.Slice(all, 0, off, off+s[0]*s[1])
		if err != nil {
			return nil, err
		}
		if d, err = graph.Reshape(d, s...); err != nil {
			return nil, err
		}
		ds = append(ds, d)
		off += s[0] * s[1]
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
	switch op.Kind {
	case coordnet.Value:
		if ds[0], err = op.with(coordnet.InputGrad).apply(inputs, grad); err != nil {
			return nil, err
		}
		ps, err := op.with(coordnet.ParamGrad).paramGrads(inputs, grad)
		if err != nil {
			return nil, err
		}
		copy(ds[1:], ps)
	case coordnet.InputGrad, coordnet.JVP:
		// InputGrad(g) is linear in g; JVP(H) is linear in H. Both are
		// ⟨g_i, ∇ₓf(x_i)·H_i⟩ seen from either side.
		g, h := inputs[1+np], grad
		if op.Kind == coordnet.JVP {
			g, h = grad, inputs[1+np]
		}
		if ds[0], err = op.with(coordnet.InputHVP).apply(inputs, g, h); err != nil {
			return nil, err
		}
		ps, err := op.with(coordnet.Mixed).paramGrads(inputs, g, h)
		if err != nil {
			return nil, err
		}
		copy(ds[1:], ps)
		if op.Kind == coordnet.InputGrad {
			ds[1+np], err = op.with(coordnet.JVP).apply(inputs, h)
		} else {
			ds[1+np], err = op.with(coordnet.InputGrad).apply(inputs, g)
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
		op.Compute(data, out)
		t, o32 := graph.Output[float32](prealloc, outShape, vals...)
		for i, v := range out {
			o32[i] = float32(v)
		}
		return t, nil
	}
	t, out := graph.Output[float64](prealloc, outShape, vals...)
	op.Compute(data, out)
	return t, nil
}

// f64Scratch holds the float64 buffers that float32 evaluations compute in.
var f64Scratch sync.Pool
