package bnn

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/internal/spans"
)

// biasActOp adds a layer's biases to the pre-activations of all K chains
// and applies the activation, in one pass, and returns the layer's output
// chain-first, (K, M, out). Built from Gorgonia's primitives this is a
// transpose of the bias, a broadcast (a repeat and an add, each a full
// copy), the activation and, for the first layer, a transpose of the
// result; their derivatives are as many again. With OpenBLAS the products
// are fast and these copies were most of the energy's time.
//
// The bias b is the layer's bias block of θ as it lies there, (out, K)
// row-major: unit j of chain c at j·K + c. The pre-activations z are
//
//	first layer: (M, out·K), column j·K + c (the product X·W0all)
//	later layers: (K, M, out) (the batched products)
//
// and y[c][m][j] = act(z + b[j·K + c]). act is the hidden layers' ReLU or
// sigmoid, or the identity for the output layer. Its derivatives are
// biasActGradOp, which are not differentiable again (nothing differentiates
// the energy's gradient).
type biasActOp struct {
	graph.OpBase
	first bool
	act   layerAct
	k     int // chains
}

func newBiasActOp(first bool, act layerAct, k int) biasActOp {
	name := fmt.Sprintf("BiasAct%s(first=%v,K=%d)", layerActNames[act], first, k)
	return biasActOp{OpBase: graph.NewOpBase(opNamespace, name, 2), first: first, act: act, k: k}
}

// layerAct is the activation biasActOp applies.
type layerAct int

const (
	actIdentity layerAct = iota
	actReLU
	actSigmoid
)

var layerActNames = [...]string{"Identity", "ReLU", "Sigmoid"}

// shapes returns M and out from z's shape and checks b's.
func (op biasActOp) shapes(z, b tensor.Shape) (m, out int, err error) {
	switch {
	case op.first && len(z) == 2 && z[1]%op.k == 0:
		m, out = z[0], z[1]/op.k
	case !op.first && len(z) == 3 && z[0] == op.k:
		m, out = z[1], z[2]
	default:
		return 0, 0, fmt.Errorf("%v: pre-activations of shape %v", op, z)
	}
	if len(b) != 2 || b[0] != out || b[1] != op.k {
		return 0, 0, fmt.Errorf("%v: biases of shape %v for pre-activations %v, want (%d, %d)", op, b, z, out, op.k)
	}
	return m, out, nil
}

// zRow returns the offset in z of chain c, row r, unit 0, and the stride
// between units.
func (op biasActOp) zRow(c, r, m, out int) (off, stride int) {
	if op.first {
		return r*out*op.k + c, op.k
	}
	return (c*m + r) * out, 1
}

func (op biasActOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: op.zDims(), Of: a}, G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 3, Of: a})
}

func (op biasActOp) zDims() int {
	if op.first {
		return 2
	}
	return 3
}

func (op biasActOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	z, b, err := twoShapes(op, in)
	if err != nil {
		return nil, err
	}
	m, out, err := op.shapes(z, b)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{op.k, m, out}, nil
}

func (op biasActOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo computes the op into prealloc where graph.Output allows.
func (op biasActOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	z, b, err := twoValues(op, vals)
	if err != nil {
		return nil, err
	}
	m, out, err := op.shapes(z.Shape(), b.Shape())
	if err != nil {
		return nil, err
	}
	return typed(op, prealloc, vals, z, b, []int{op.k, m, out},
		func(y, z, b []float64) { biasAct(op, y, z, b, m, out) },
		func(y, z, b []float32) { biasAct(op, y, z, b, m, out) })
}

// biasAct writes act(z + b), chain-first, into y. The rows are the outer
// loop: the first layer's z keeps all chains of a row side by side, so each
// of its rows is read while it is in cache.
func biasAct[T float32 | float64](op biasActOp, y, z, b []T, m, out int) {
	byRows(m, func(lo, hi int) { biasActRows(op, y, z, b, m, out, lo, hi) })
}

// rowSpan is the number of rows one worker of the ops takes at a time.
const rowSpan = 16

// byRows runs f over the rows [0, m) in fixed spans of rowSpan shared out
// among the cores, for work that is independent row by row.
func byRows(m int, f func(lo, hi int)) {
	spans.Share(m, rowSpan, func() (func(lo, hi int), func()) { return f, nil })
}

// byChain runs f over the chains [0, k) in spans of one chain shared out
// among the cores, for sums over the rows that are each one chain's: each
// is formed in the same order whatever the number of cores.
func byChain(k int, f func(lo, hi int)) {
	spans.Share(k, 1, func() (func(lo, hi int), func()) { return f, nil })
}

// biasActRows is biasAct for the rows [rlo, rhi) of all chains, rows
// outer.
func biasActRows[T float32 | float64](op biasActOp, y, z, b []T, m, out, rlo, rhi int) {
	k := op.k
	for r := rlo; r < rhi; r++ {
		for c := 0; c < k; c++ {
			yr := y[(c*m+r)*out : (c*m+r+1)*out]
			off, stride := op.zRow(c, r, m, out)
			switch op.act {
			case actReLU:
				for j := range yr {
					yr[j] = max(z[off+j*stride]+b[j*k+c], 0) // builtin max: no branch to mispredict
				}
			case actSigmoid:
				for j := range yr {
					yr[j] = T(1 / (1 + math.Exp(-float64(z[off+j*stride]+b[j*k+c]))))
				}
			default:
				for j := range yr {
					yr[j] = z[off+j*stride] + b[j*k+c]
				}
			}
		}
	}
}

// SymDiff returns ∂/∂z and ∂/∂b, both computed from the output y and the
// upstream gradient g: g⊙act'(y), laid out like z, and its sum over rows.
func (op biasActOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dz, err := G.ApplyOp(newBiasActGradOp(op, false, inputs[0].Shape().Clone()), output, grad)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(newBiasActGradOp(op, true, inputs[0].Shape().Clone()), output, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dz, db}, nil
}

// biasActGradOp is a derivative of biasActOp from its output y (K, M, out)
// and the upstream gradient g (K, M, out): g⊙act'(y) laid out like z, or,
// with wrtBias, its sum over the rows laid out like b, (out, K).
//
// It embeds the biasActOp it differentiates, with that op's OpBase replaced
// by its own.
type biasActGradOp struct {
	biasActOp
	wrtBias bool
	z       tensor.Shape // the pre-activations' shape
}

func newBiasActGradOp(fwd biasActOp, wrtBias bool, z tensor.Shape) biasActGradOp {
	wrt := "z"
	if wrtBias {
		wrt = "b"
	}
	name := fmt.Sprintf("BiasAct%sGrad_%s(first=%v,K=%d,z=%v)", layerActNames[fwd.act], wrt, fwd.first, fwd.k, z)
	op := biasActGradOp{biasActOp: fwd, wrtBias: wrtBias, z: z}
	op.OpBase = graph.NewOpBase(opNamespace, name, 2)
	return op
}

func (op biasActGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	dims := op.zDims()
	if op.wrtBias {
		dims = 2
	}
	return hm.NewFnType(G.TensorType{Dims: 3, Of: a}, G.TensorType{Dims: 3, Of: a}, G.TensorType{Dims: dims, Of: a})
}

func (op biasActGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	y, g, err := twoShapes(op, in)
	if err != nil {
		return nil, err
	}
	if len(y) != 3 || !y.Eq(g) || y[0] != op.k {
		return nil, fmt.Errorf("%v: shapes %v and %v", op, y, g)
	}
	if op.wrtBias {
		return tensor.Shape{y[2], op.k}, nil
	}
	return op.z.Clone(), nil
}

func (op biasActGradOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo computes the op into prealloc where graph.Output allows.
func (op biasActGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	y, g, err := twoValues(op, vals)
	if err != nil {
		return nil, err
	}
	s := y.Shape()
	if len(s) != 3 || !s.Eq(g.Shape()) || s[0] != op.k {
		return nil, fmt.Errorf("%v: shapes %v and %v", op, s, g.Shape())
	}
	m, out := s[1], s[2]
	shape := op.z
	if op.wrtBias {
		shape = tensor.Shape{out, op.k}
	}
	return typed(op, prealloc, vals, y, g, shape,
		func(d, y, g []float64) { biasActGrad(op, d, y, g, m, out) },
		func(d, y, g []float32) { biasActGrad(op, d, y, g, m, out) })
}

// biasActGrad writes the gradient into d: g⊙act'(y) laid out like z, rows
// outer as in biasAct, or its sum over the rows, each sum in row order.
func biasActGrad[T float32 | float64](op biasActGradOp, d, y, g []T, m, out int) {
	if op.wrtBias {
		byChain(op.k, func(lo, hi int) {
			sum := make([]T, out)
			for c := lo; c < hi; c++ {
				biasGradSum(op, sum, y[c*m*out:(c+1)*m*out], g[c*m*out:(c+1)*m*out])
				for j, v := range sum {
					d[j*op.k+c] = v
				}
			}
		})
		return
	}
	byRows(m, func(lo, hi int) { biasActGradRows(op, d, y, g, m, out, lo, hi) })
}

// biasActGradRows writes g⊙act'(y) for the rows [rlo, rhi) of all chains
// into d, laid out like z.
func biasActGradRows[T float32 | float64](op biasActGradOp, d, y, g []T, m, out, rlo, rhi int) {
	for r := rlo; r < rhi; r++ {
		for c := 0; c < op.k; c++ {
			at := (c*m + r) * out
			yr, gr := y[at:at+out], g[at:at+out]
			off, stride := op.zRow(c, r, m, out)
			for j, a := range yr {
				d[off+j*stride] = actGrad(op.act, gr[j], a)
			}
		}
	}
}

// biasGradSum sets sum to the sum over the rows of one chain's g⊙act'(y),
// (M, out) each, in row order. It sums into a buffer of the worker's own:
// the chains' sums are interleaved in d, and workers adding into
// neighbouring elements of d would share cache lines.
func biasGradSum[T float32 | float64](op biasActGradOp, sum, y, g []T) {
	clear(sum)
	out := len(sum)
	for at := 0; at < len(y); at += out {
		yr, gr := y[at:at+out], g[at:at+out]
		for j, a := range yr {
			sum[j] += actGrad(op.act, gr[j], a)
		}
	}
}

// actGrad returns v·act'(·) at the activation's output a.
func actGrad[T float32 | float64](act layerAct, v, a T) T {
	switch act {
	case actReLU:
		return keepIfPositive(v, a)
	case actSigmoid:
		return v * (a * (1 - a))
	}
	return v
}

// keepIfPositive returns v where a > 0 and 0 where a = +0, the values of
// biasAct's ReLU, without a branch to mispredict: about half of the units
// are off, in no pattern.
func keepIfPositive[T float32 | float64](v, a T) T {
	mask := uint64(-int64(math.Float64bits(float64(a))) >> 63) // all ones iff a > 0
	return T(math.Float64frombits(math.Float64bits(float64(v)) & mask))
}

func (op biasActGradOp) DiffWRT(int) []bool { return []bool{false, false} }

func (op biasActGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v: the energy's gradient is not differentiated again", op)
}

// twoShapes returns the two input shapes of op.
func twoShapes(op fmt.Stringer, in []G.DimSizer) (tensor.Shape, tensor.Shape, error) {
	if len(in) != 2 {
		return nil, nil, fmt.Errorf("%v: %d inputs, want 2", op, len(in))
	}
	a, ok1 := in[0].(tensor.Shape)
	b, ok2 := in[1].(tensor.Shape)
	if !ok1 || !ok2 {
		return nil, nil, fmt.Errorf("%v: input shapes %v and %v", op, in[0], in[1])
	}
	return a, b, nil
}

// twoValues returns the two inputs of op as contiguous tensors.
func twoValues(op fmt.Stringer, vals []G.Value) (tensor.Tensor, tensor.Tensor, error) {
	if len(vals) != 2 {
		return nil, nil, fmt.Errorf("%v: %d inputs, want 2", op, len(vals))
	}
	var ts [2]tensor.Tensor
	for i, v := range vals {
		t, ok := v.(tensor.Tensor)
		if !ok {
			return nil, nil, fmt.Errorf("%v: value %T is not a tensor", op, v)
		}
		if !t.IsNativelyAccessible() || t.RequiresIterator() {
			t = tensor.Materialize(t)
		}
		ts[i] = t
	}
	return ts[0], ts[1], nil
}

// typed runs f64 or f32, by the dtype of a and b (which must agree), on
// their data and an output of the given shape (prealloc where graph.Output
// allows; vals are the op's inputs), and returns the output.
func typed(op fmt.Stringer, prealloc G.Value, vals []G.Value, a, b tensor.Tensor, shape []int, f64 func(out, a, b []float64), f32 func(out, a, b []float32)) (G.Value, error) {
	switch ad := a.Data().(type) {
	case []float64:
		return typedAs(op, prealloc, vals, ad, b, shape, f64)
	case []float32:
		return typedAs(op, prealloc, vals, ad, b, shape, f32)
	}
	return nil, fmt.Errorf("%v: unsupported dtype %v", op, a.Dtype())
}

// typedAs is typed for a's data ad of element type T: it runs f on ad, b's
// data, which must be of the same type, and the output.
func typedAs[T float32 | float64](op fmt.Stringer, prealloc G.Value, vals []G.Value, ad []T, b tensor.Tensor, shape []int, f func(out, a, b []T)) (G.Value, error) {
	bd, ok := b.Data().([]T)
	if !ok {
		return nil, fmt.Errorf("%v: mixed dtypes", op)
	}
	t, out := graph.Output[T](prealloc, shape, vals...)
	f(out, ad, bd)
	return t, nil
}

// applyBiasAct returns act(z + b) chain-first; see biasActOp.
func applyBiasAct(z, b *G.Node, first bool, act layerAct, k int) (*G.Node, error) {
	return G.ApplyOp(newBiasActOp(first, act, k), z, b)
}
