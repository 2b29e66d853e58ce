package bnn

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/internal/vec"
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

// biasAct writes act(z + b), chain-first, into y, rows outer: the first
// layer's z keeps all chains of a row side by side, so each of its rows is
// read while it is in cache.
func biasAct[T float32 | float64](op biasActOp, y, z, b []T, m, out int) {
	var bt []T // a later layer's biases chain-first, (K, out)
	if k := op.k; !op.first {
		bt = make([]T, k*out)
		for j := 0; j < out; j++ {
			for c := 0; c < k; c++ {
				bt[c*out+j] = b[j*k+c]
			}
		}
	}
	byRows(m, func(lo, hi int) { biasActRows(op, y, z, b, bt, m, out, lo, hi) })
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

// biasActRows is biasAct for the rows [rlo, rhi) of all chains. A first
// layer's row of z, unit j of chain c at j·K + c, lies as the biases b do:
// the row's activations are formed in that order and then written out
// chain by chain. A later layer's row of a chain is contiguous, its biases
// the chain's row of bt.
func biasActRows[T float32 | float64](op biasActOp, y, z, b, bt []T, m, out, rlo, rhi int) {
	k := op.k
	var row []T
	if op.first {
		row = make([]T, out*k)
	}
	for r := rlo; r < rhi; r++ {
		if op.first {
			addAct(op.act, row, z[r*out*k:(r+1)*out*k], b)
			for c := 0; c < k; c++ {
				yr := y[(c*m+r)*out : (c*m+r+1)*out]
				for j := range yr {
					yr[j] = row[j*k+c]
				}
			}
			continue
		}
		for c := 0; c < k; c++ {
			at := (c*m + r) * out
			addAct(op.act, y[at:at+out], z[at:at+out], bt[c*out:(c+1)*out])
		}
	}
}

// addAct sets y to act(z + b), element by element.
func addAct[T float32 | float64](act layerAct, y, z, b []T) {
	switch act {
	case actReLU:
		vec.AddReLU(y, z, b)
	case actSigmoid:
		vec.Add(y, z, b)
		for j, v := range y {
			y[j] = T(1 / (1 + math.Exp(-float64(v))))
		}
	default:
		vec.Add(y, z, b)
	}
}

// SymDiff returns ∂/∂z, g⊙act'(y) laid out like z, computed from the
// output y and the upstream gradient g, and ∂/∂b, its sum over the rows.
func (op biasActOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dz, err := G.ApplyOp(newBiasActGradOp(op, inputs[0].Shape().Clone()), output, grad)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(newBiasSumOp(op), dz)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dz, db}, nil
}

// biasActGradOp is the derivative of biasActOp with respect to z, from its
// output y (K, M, out) and the upstream gradient g (K, M, out): g⊙act'(y)
// laid out like z. It is not differentiated again (nothing differentiates
// the energy's gradient).
//
// It embeds the biasActOp it differentiates, with that op's OpBase replaced
// by its own.
type biasActGradOp struct {
	biasActOp
	z tensor.Shape // the pre-activations' shape
}

func newBiasActGradOp(fwd biasActOp, z tensor.Shape) biasActGradOp {
	name := fmt.Sprintf("BiasAct%sGrad(first=%v,K=%d,z=%v)", layerActNames[fwd.act], fwd.first, fwd.k, z)
	op := biasActGradOp{biasActOp: fwd, z: z}
	op.OpBase = graph.NewOpBase(opNamespace, name, 2)
	return op
}

func (op biasActGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: 3, Of: a}, G.TensorType{Dims: 3, Of: a}, G.TensorType{Dims: op.zDims(), Of: a})
}

func (op biasActGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	y, g, err := twoShapes(op, in)
	if err != nil {
		return nil, err
	}
	if len(y) != 3 || !y.Eq(g) || y[0] != op.k {
		return nil, fmt.Errorf("%v: shapes %v and %v", op, y, g)
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
	return typed(op, prealloc, vals, y, g, op.z,
		func(d, y, g []float64) { biasActGrad(op, d, y, g, m, out) },
		func(d, y, g []float32) { biasActGrad(op, d, y, g, m, out) })
}

// biasActGrad writes g⊙act'(y), laid out like z, into d. A later layer's
// z is laid out like y: one pass over all of them in spans; a first
// layer's row is formed chain by chain and written out unit-major.
func biasActGrad[T float32 | float64](op biasActGradOp, d, y, g []T, m, out int) {
	if !op.first {
		spans.For(len(d), func(lo, hi int) { actGrad(op.act, d[lo:hi], g[lo:hi], y[lo:hi]) })
		return
	}
	k := op.k
	byRows(m, func(lo, hi int) {
		row := make([]T, k*out) // chain-first
		for r := lo; r < hi; r++ {
			for c := 0; c < k; c++ {
				at := (c*m + r) * out
				actGrad(op.act, row[c*out:(c+1)*out], g[at:at+out], y[at:at+out])
			}
			dr := d[r*out*k : (r+1)*out*k]
			for j := 0; j < out; j++ {
				for c := 0; c < k; c++ {
					dr[j*k+c] = row[c*out+j]
				}
			}
		}
	})
}

// actGrad sets d to g⊙act'(·) at the activation's outputs a, element by
// element.
func actGrad[T float32 | float64](act layerAct, d, g, a []T) {
	switch act {
	case actReLU: // g where a > 0: a is ReLU's output, +0 where the unit is off
		vec.KeepPositive(d, g, a)
	case actSigmoid:
		g, a = g[:len(d)], a[:len(d)]
		for j := range d {
			d[j] = g[j] * (a[j] * (1 - a[j]))
		}
	default:
		copy(d, g)
	}
}

func (op biasActGradOp) DiffWRT(int) []bool { return []bool{false, false} }

func (op biasActGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v: the energy's gradient is not differentiated again", op)
}

// biasSumOp is the derivative of biasActOp with respect to its biases, from
// the derivative dz with respect to its pre-activations (biasActGradOp's
// output, laid out like z): dz summed over the rows, laid out like the
// biases, (out, K), each sum in row order. It is not differentiated again.
type biasSumOp struct {
	graph.OpBase
	first bool
	k     int
}

func newBiasSumOp(fwd biasActOp) biasSumOp {
	name := fmt.Sprintf("BiasSum(first=%v,K=%d)", fwd.first, fwd.k)
	return biasSumOp{OpBase: graph.NewOpBase(opNamespace, name, 1), first: fwd.first, k: fwd.k}
}

// shapes returns M and out from dz's shape.
func (op biasSumOp) shapes(dz tensor.Shape) (m, out int, err error) {
	switch {
	case op.first && len(dz) == 2 && dz[1]%op.k == 0:
		return dz[0], dz[1] / op.k, nil
	case !op.first && len(dz) == 3 && dz[0] == op.k:
		return dz[1], dz[2], nil
	}
	return 0, 0, fmt.Errorf("%v: pre-activations' gradient of shape %v", op, dz)
}

func (op biasSumOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	dims := 3
	if op.first {
		dims = 2
	}
	return hm.NewFnType(G.TensorType{Dims: dims, Of: a}, G.TensorType{Dims: 2, Of: a})
}

func (op biasSumOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(in))
	}
	dz, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%v: input shape %v", op, in[0])
	}
	_, out, err := op.shapes(dz)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{out, op.k}, nil
}

func (op biasSumOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo computes the sums into prealloc where graph.Output allows.
func (op biasSumOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(vals))
	}
	t, ok := vals[0].(tensor.Tensor)
	if !ok {
		return nil, fmt.Errorf("%v: value %T is not a tensor", op, vals[0])
	}
	if !t.IsNativelyAccessible() || t.RequiresIterator() {
		t = tensor.Materialize(t)
	}
	m, out, err := op.shapes(t.Shape())
	if err != nil {
		return nil, err
	}
	shape := tensor.Shape{out, op.k}
	switch dz := t.Data().(type) {
	case []float64:
		res, db := graph.Output[float64](prealloc, shape, vals...)
		biasSum(op, db, dz, m, out)
		return res, nil
	case []float32:
		res, db := graph.Output[float32](prealloc, shape, vals...)
		biasSum(op, db, dz, m, out)
		return res, nil
	}
	return nil, fmt.Errorf("%v: unsupported dtype %v", op, t.Dtype())
}

// biasSumSpan is the number of a first layer's columns one worker of
// biasSum sums at a time.
const biasSumSpan = 128

// biasSum sets db to dz summed over the rows, each sum in row order. A
// first layer's dz (M, out·K) is laid out as db by column: its rows are
// added up, in spans of columns shared out among the cores. A later
// layer's (K, M, out) is summed chain by chain into a buffer of the
// worker's own and written out unit-major.
func biasSum[T float32 | float64](op biasSumOp, db, dz []T, m, out int) {
	k := op.k
	if op.first {
		n := out * k
		spans.Share(n, biasSumSpan, func() (func(lo, hi int), func()) {
			return func(lo, hi int) {
				acc := db[lo:hi]
				clear(acc)
				for r := 0; r < m; r++ {
					vec.AddTo(acc, dz[r*n+lo:r*n+hi])
				}
			}, nil
		})
		return
	}
	byChain(k, func(lo, hi int) {
		acc := make([]T, out)
		for c := lo; c < hi; c++ {
			clear(acc)
			for r := 0; r < m; r++ {
				at := (c*m + r) * out
				vec.AddTo(acc, dz[at:at+out])
			}
			for j, v := range acc {
				db[j*k+c] = v
			}
		}
	})
}

func (op biasSumOp) DiffWRT(int) []bool { return []bool{false} }

func (op biasSumOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
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
