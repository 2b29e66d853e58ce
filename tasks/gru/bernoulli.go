package gru

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph"
)

// bernoulliOp is the Bernoulli log-likelihood of the frames x under the
// output logits l, summed over the keys: from l and x, both (K, R, O), it
// gives Σ_o x_o·l_o − softplus(l_o), shape (K, R). With grad it is the
// derivative instead: from l, x and the upstream gradient g (K, R), it gives
// g·(x − σ(l)), shape (K, R, O). Built from Gorgonia's primitives this was
// a product, a softplus, a difference and a sum, and as many derivatives
// again (a negation and a sigmoid among them), each a full pass over the
// (K, R, O) logits that Gorgonia's unary ops also copy on every run. The
// derivative is not differentiated again (nothing differentiates the
// energy's gradient), nor is anything differentiated with respect to x.
type bernoulliOp struct {
	graph.OpBase
	grad bool
}

func newBernoulliOp(grad bool) bernoulliOp {
	if grad {
		return bernoulliOp{OpBase: graph.NewOpBase(opNamespace, "BernoulliLogLikGrad", 3), grad: true}
	}
	return bernoulliOp{OpBase: graph.NewOpBase(opNamespace, "BernoulliLogLik", 2)}
}

func (op bernoulliOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t3, t2 := G.TensorType{Dims: 3, Of: a}, G.TensorType{Dims: 2, Of: a}
	if op.grad {
		return hm.NewFnType(t3, t3, t2, t3)
	}
	return hm.NewFnType(t3, t3, t2)
}

func (op bernoulliOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(in), op.Arity())
	}
	l, ok1 := in[0].(tensor.Shape)
	x, ok2 := in[1].(tensor.Shape)
	if !ok1 || !ok2 || len(l) != 3 || !l.Eq(x) {
		return nil, fmt.Errorf("%v: logits %v and frames %v", op, in[0], in[1])
	}
	if !op.grad {
		return tensor.Shape{l[0], l[1]}, nil
	}
	if g, ok := in[2].(tensor.Shape); !ok || len(g) != 2 || g[0] != l[0] || g[1] != l[1] {
		return nil, fmt.Errorf("%v: upstream gradient %v for logits %v", op, in[2], l)
	}
	return l.Clone(), nil
}

func (op bernoulliOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo computes the op into prealloc where graph.Output allows.
func (op bernoulliOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(vals), op.Arity())
	}
	ts := make([]tensor.Tensor, len(vals))
	shapes := make([]G.DimSizer, len(vals))
	for i, v := range vals {
		t, err := dense(v)
		if err != nil {
			return nil, err
		}
		ts[i], shapes[i] = t, t.Shape()
	}
	shape, err := op.InferShape(shapes...)
	if err != nil {
		return nil, err
	}
	keys := ts[0].Shape()[2]
	switch ts[0].Data().(type) {
	case []float64:
		return bernoulliInto[float64](op, prealloc, vals, ts, shape, keys)
	case []float32:
		return bernoulliInto[float32](op, prealloc, vals, ts, shape, keys)
	}
	return nil, fmt.Errorf("%v: unsupported dtype %v", op, ts[0].Dtype())
}

// bernoulliInto runs bernoulli on the data of ts, all of dtype T, into an
// output of the given shape (prealloc where graph.Output allows).
func bernoulliInto[T float32 | float64](op bernoulliOp, prealloc G.Value, vals []G.Value, ts []tensor.Tensor, shape tensor.Shape, keys int) (G.Value, error) {
	data := make([][]T, len(ts))
	for i, t := range ts {
		d, ok := t.Data().([]T)
		if !ok {
			return nil, fmt.Errorf("%v: mixed dtypes", op)
		}
		data[i] = d
	}
	var g []T
	if op.grad {
		g = data[2]
	}
	t, out := graph.Output[T](prealloc, shape, vals...)
	bernoulli(op.grad, data[0], data[1], g, out, keys)
	return t, nil
}

// bernoulli computes the log-likelihood sums (or, with grad, their
// derivative) into out, for rows of keys logits.
func bernoulli[T float32 | float64](grad bool, l, x, g, out []T, keys int) {
	for r := range len(l) / keys {
		lr, xr := l[r*keys:(r+1)*keys], x[r*keys:(r+1)*keys]
		if grad {
			or := out[r*keys : (r+1)*keys]
			for o, v := range lr {
				or[o] = g[r] * (xr[o] - T(sigm(float64(v))))
			}
			continue
		}
		s := 0.0
		for o, v := range lr {
			s += float64(xr[o])*float64(v) - logOnePlusExp(float64(v))
		}
		out[r] = T(s)
	}
}

// logOnePlusExp is softplus, log(1 + eˣ), computed stably.
func logOnePlusExp(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }

func (op bernoulliOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	d[0] = !op.grad
	return d
}

// SymDiff returns the derivative with respect to the logits, and none with
// respect to the frames.
func (op bernoulliOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if op.grad {
		return nil, fmt.Errorf("%v: the energy's gradient is not differentiated again", op)
	}
	dl, err := G.ApplyOp(newBernoulliOp(true), inputs[0], inputs[1], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dl, nil}, nil
}
