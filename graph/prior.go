package graph

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/internal/vec"
	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GaussianPrior returns −log N(θ_k; 0, σ²I) = Σ_i θ_ik²/(2σ²) + D·½·log(2πσ²)
// for every column k of theta (D, K), shape (K), as one op whose derivative,
// g_k·θ_ik/σ², is one op too. Built from Gorgonia's Square, Sum, Mul and Add,
// the value and its derivative make five passes over θ, one of them a
// broadcast copy, and a task's evaluation takes the prior's gradient twice
// (alone and in the energy's). The derivative is not differentiable again.
func GaussianPrior(theta *G.Node, sigma float64) (*G.Node, error) {
	if !(sigma > 0) {
		return nil, fmt.Errorf("graph.GaussianPrior: σ = %v, want positive", sigma)
	}
	if theta.Shape().Dims() != 2 {
		return nil, fmt.Errorf("graph.GaussianPrior: positions of shape %v, want (D, K)", theta.Shape())
	}
	return G.ApplyOp(newPriorOp(sigma*sigma, false), theta)
}

// priorOp is GaussianPrior's value (grad false) or, with grad, its
// derivative (θ, g) ↦ θ_ik·g_k/σ².
type priorOp struct {
	OpBase
	sigma2 float64
	grad   bool
}

func newPriorOp(sigma2 float64, grad bool) priorOp {
	name, arity := fmt.Sprintf("GaussianPrior(σ²=%v)", sigma2), 1
	if grad {
		name, arity = fmt.Sprintf("GaussianPriorGrad(σ²=%v)", sigma2), 2
	}
	return priorOp{OpBase: NewOpBase(opNamespace, name, arity), sigma2: sigma2, grad: grad}
}

func (op priorOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m, v := G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: a}
	if op.grad {
		return hm.NewFnType(m, v, m)
	}
	return hm.NewFnType(m, v)
}

func (op priorOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(in), op.Arity())
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("%v: positions of shape %v", op, in[0])
	}
	if op.grad {
		if g, ok := in[1].(tensor.Shape); !ok || len(g) != 1 || g[0] != s[1] {
			return nil, fmt.Errorf("%v: gradient of shape %v for positions %v", op, in[1], s)
		}
		return s.Clone(), nil
	}
	return tensor.Shape{s[1]}, nil
}

func (op priorOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo computes the op into prealloc where Output allows.
func (op priorOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(vals), op.Arity())
	}
	ts := make([]tensor.Tensor, len(vals))
	for i, v := range vals {
		t, ok := v.(tensor.Tensor)
		if !ok {
			return nil, fmt.Errorf("%v: value %T is not a tensor", op, v)
		}
		if !t.IsNativelyAccessible() || t.RequiresIterator() {
			t = tensor.Materialize(t)
		}
		ts[i] = t
	}
	s := ts[0].Shape()
	if len(s) != 2 {
		return nil, fmt.Errorf("%v: positions of shape %v", op, s)
	}
	d, k := s[0], s[1]
	switch th := ts[0].Data().(type) {
	case []float64:
		return priorDo(op, th, ts, d, k, prealloc, vals)
	case []float32:
		return priorDo(op, th, ts, d, k, prealloc, vals)
	}
	return nil, fmt.Errorf("%v: unsupported dtype %v", op, ts[0].Dtype())
}

func priorDo[T float32 | float64](op priorOp, theta []T, ts []tensor.Tensor, d, k int, prealloc G.Value, vals []G.Value) (G.Value, error) {
	if !op.grad {
		// accumulate in float64 whatever the dtype, in blocks of rows
		// shared out among the cores and added in the blocks' order
		rows := max(1, spans.ElementSpan/k)
		part := make([]float64, (d+rows-1)/rows*k)
		spans.Share(d, rows, func() (func(lo, hi int), func()) {
			return func(lo, hi int) {
				p := part[lo/rows*k:][:k]
				for i := lo; i < hi; i++ {
					vec.AddSquares(p, theta[i*k:(i+1)*k])
				}
			}, nil
		})
		sum := make([]float64, k)
		for b := 0; b < len(part); b += k {
			floats.Add(sum, part[b:b+k])
		}
		out, u := Output[T](prealloc, tensor.Shape{k}, vals...)
		norm := float64(d) * 0.5 * math.Log(2*math.Pi*op.sigma2)
		for c, v := range sum {
			u[c] = T(v/(2*op.sigma2) + norm)
		}
		return out, nil
	}
	g, ok := ts[1].Data().([]T)
	if !ok || len(g) != k {
		return nil, fmt.Errorf("%v: gradient %v for %d chains", op, ts[1].Shape(), k)
	}
	scale := make([]T, k)
	for c, v := range g {
		scale[c] = T(float64(v) / op.sigma2)
	}
	out, data := Output[T](prealloc, tensor.Shape{d, k}, vals...)
	spans.Share(d, max(1, spans.ElementSpan/k), func() (func(lo, hi int), func()) {
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				row, o := theta[i*k:(i+1)*k], data[i*k:(i+1)*k]
				for c, v := range row {
					o[c] = v * scale[c]
				}
			}
		}, nil
	})
	return out, nil
}

func (op priorOp) DiffWRT(int) []bool {
	if op.grad {
		return []bool{false, false}
	}
	return []bool{true}
}

func (op priorOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if op.grad {
		return nil, fmt.Errorf("%v: the prior's gradient is not differentiated again", op)
	}
	d, err := G.ApplyOp(newPriorOp(op.sigma2, true), inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}
