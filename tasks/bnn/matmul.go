package bnn

import (
	"fmt"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph"
)

// dataMatMulOp is the first layer's product X·W of the minibatch X (M, in),
// which is data and has no gradient, and the weights W (in, n). Gorgonia's
// product differentiates W as Xᵀ·G with Xᵀ copied out on every evaluation
// (a strided copy of the whole minibatch); its derivative here, with grad
// set, is one GEMM that reads X transposed in place. The derivative is not
// differentiated again (nothing differentiates the energy's gradient).
type dataMatMulOp struct {
	graph.OpBase
	grad bool // Xᵀ·G (in, n) from X (M, in) and G (M, n), instead of X·W
}

// opNamespace is the namespace of this package's ops (see graph.NewOpBase).
const opNamespace = "metasgmcmc.bnn"

func newDataMatMulOp(grad bool) dataMatMulOp {
	name := "DataMatMul"
	if grad {
		name = "DataMatMulGrad"
	}
	return dataMatMulOp{OpBase: graph.NewOpBase(opNamespace, name, 2), grad: grad}
}

func (op dataMatMulOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := G.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, m, m)
}

// dims returns the GEMM's sizes from the input shapes: the result is r × c
// and the inner dimension is inner.
func (op dataMatMulOp) dims(x, y tensor.Shape) (r, c, inner int, err error) {
	if len(x) != 2 || len(y) != 2 {
		return 0, 0, 0, fmt.Errorf("%v: shapes %v and %v", op, x, y)
	}
	if op.grad {
		if x[0] != y[0] {
			return 0, 0, 0, fmt.Errorf("%v: %v data for a gradient of shape %v", op, x, y)
		}
		return x[1], y[1], x[0], nil
	}
	if x[1] != y[0] {
		return 0, 0, 0, fmt.Errorf("%v: %v data for weights of shape %v", op, x, y)
	}
	return x[0], y[1], x[1], nil
}

func (op dataMatMulOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	x, y, err := twoShapes(op, in)
	if err != nil {
		return nil, err
	}
	r, c, _, err := op.dims(x, y)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{r, c}, nil
}

func (op dataMatMulOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo computes the product into prealloc where graph.Output allows.
func (op dataMatMulOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, y, err := twoValues(op, vals)
	if err != nil {
		return nil, err
	}
	r, c, inner, err := op.dims(x.Shape(), y.Shape())
	if err != nil {
		return nil, err
	}
	tA, lda := blas.NoTrans, inner
	if op.grad {
		tA, lda = blas.Trans, r
	}
	return typed(op, prealloc, vals, x, y, []int{r, c},
		func(out, a, b []float64) {
			blas64.Implementation().Dgemm(tA, blas.NoTrans, r, c, inner, 1, a, lda, b, c, 0, out, c)
		},
		func(out, a, b []float32) {
			blas32.Implementation().Sgemm(tA, blas.NoTrans, r, c, inner, 1, a, lda, b, c, 0, out, c)
		})
}

func (op dataMatMulOp) DiffWRT(int) []bool { return []bool{false, !op.grad} }

// SymDiff returns no gradient for the data and Xᵀ·G for the weights.
func (op dataMatMulOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if op.grad {
		return nil, fmt.Errorf("%v: the energy's gradient is not differentiated again", op)
	}
	dw, err := G.ApplyOp(newDataMatMulOp(true), inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{nil, dw}, nil
}

// dataMatMul returns X·W for the data x and weights w; see dataMatMulOp.
func dataMatMul(x, w *G.Node) (*G.Node, error) { return G.ApplyOp(newDataMatMulOp(false), x, w) }
