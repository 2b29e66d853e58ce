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
	"github.com/metasgmcmc/metasgmcmc/internal/spans"
)

// dataMatMulOp is the first layer's product X·W of the minibatch X (M, in),
// which is data and has no gradient, and the weights W read as an (in, n)
// matrix from the node that holds them: the first layer's rows of θ, of
// shape (in·out, K), are row-major the (in, out·K) matrix of every chain's
// weights, so no reshaped copy of them is made. Gorgonia's product
// differentiates W as Xᵀ·G with Xᵀ copied out on every evaluation (a
// strided copy of the whole minibatch); its derivative here, with grad
// set, is one GEMM that reads X transposed in place and writes it in the
// weights' shape. The derivative is not differentiated again (nothing
// differentiates the energy's gradient).
type dataMatMulOp struct {
	graph.OpBase
	grad bool         // Xᵀ·G (in, n) from X (M, in) and G (M, n), instead of X·W
	w    tensor.Shape // the weights' node's shape, of in·n elements
}

// opNamespace is the namespace of this package's ops (see graph.NewOpBase).
const opNamespace = "metasgmcmc.bnn"

func newDataMatMulOp(grad bool, w tensor.Shape) dataMatMulOp {
	name := fmt.Sprintf("DataMatMul(w=%v)", w)
	if grad {
		name = fmt.Sprintf("DataMatMulGrad(w=%v)", w)
	}
	return dataMatMulOp{OpBase: graph.NewOpBase(opNamespace, name, 2), grad: grad, w: w.Clone()}
}

func (op dataMatMulOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := G.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, m, m)
}

// dims returns the GEMM's sizes from the input shapes: the result is r × c
// and the inner dimension is inner.
func (op dataMatMulOp) dims(x, y tensor.Shape) (r, c, inner int, err error) {
	if len(x) != 2 || len(y) != 2 || x[1] == 0 || op.w.TotalSize()%x[1] != 0 {
		return 0, 0, 0, fmt.Errorf("%v: shapes %v and %v", op, x, y)
	}
	in, n := x[1], op.w.TotalSize()/x[1]
	if op.grad {
		if x[0] != y[0] || y[1] != n {
			return 0, 0, 0, fmt.Errorf("%v: %v data for a gradient of shape %v", op, x, y)
		}
		return in, n, x[0], nil
	}
	if !y.Eq(op.w) {
		return 0, 0, 0, fmt.Errorf("%v: %v data for weights of shape %v", op, x, y)
	}
	return x[0], n, in, nil
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
	if op.grad {
		return op.w.Clone(), nil
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
	tA, lda, shape := blas.NoTrans, inner, []int{r, c}
	if op.grad {
		tA, lda, shape = blas.Trans, r, op.w
	}
	return typed(op, prealloc, vals, x, y, shape,
		func(out, a, b []float64) {
			byColumns(c, func(lo, hi int) {
				blas64.Implementation().Dgemm(tA, blas.NoTrans, r, hi-lo, inner, 1, a, lda, b[lo:], c, 0, out[lo:], c)
			})
		},
		func(out, a, b []float32) {
			byColumns(c, func(lo, hi int) {
				blas32.Implementation().Sgemm(tA, blas.NoTrans, r, hi-lo, inner, 1, a, lda, b[lo:], c, 0, out[lo:], c)
			})
		})
}

// gemmSpans is the number of GEMM calls dataMatMulOp splits its product
// into, column blocks of multiples of gemmUnit columns (the BLAS kernels'
// column blocks) as even as they go: one for each core of a two-core
// machine; on one core, two calls run as fast as one, and more calls
// slower (BenchmarkGEMMSpans).
const gemmSpans, gemmUnit = 2, 16

// byColumns runs f over gemmSpans even spans of the columns [0, c) shared
// out among the cores: the spans do not depend on the number of cores, so
// neither does the result (TestDataMatMulSplit). Few spans, as each GEMM call packs the whole left
// operand again; even ones, so that two cores finish together. The BLAS
// then runs single-threaded in each call (graph/openblas).
func byColumns(c int, f func(lo, hi int)) {
	units := (c + gemmUnit - 1) / gemmUnit
	n := min(gemmSpans, units)
	spans.Share(n, 1, func() (func(lo, hi int), func()) {
		return func(i, _ int) {
			f(min(c, i*units/n*gemmUnit), min(c, (i+1)*units/n*gemmUnit))
		}, nil
	})
}

func (op dataMatMulOp) DiffWRT(int) []bool { return []bool{false, !op.grad} }

// SymDiff returns no gradient for the data and Xᵀ·G for the weights.
func (op dataMatMulOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if op.grad {
		return nil, fmt.Errorf("%v: the energy's gradient is not differentiated again", op)
	}
	dw, err := G.ApplyOp(newDataMatMulOp(true, op.w), inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{nil, dw}, nil
}

// dataMatMul returns X·W for the data x and weights w, read as a matrix of
// x's columns rows; see dataMatMulOp.
func dataMatMul(x, w *G.Node) (*G.Node, error) {
	return G.ApplyOp(newDataMatMulOp(false, w.Shape()), x, w)
}

// chainMatMulOp is a later layer's product for K chains at once: from the
// layer's inputs Z (K, M, in) and its weights as they lie in θ, the rows
// (in·out, K) with W_c[i][j] at (i·out + j)·K + c, it returns Z_c·W_c for
// every chain, (K, M, out), one GEMM a chain with the chains shared out
// among the cores. Built from Gorgonia's primitives this is a transpose of
// the weights to (K, in, out) and a batched product on one core, and the
// derivatives transpose again. Its derivatives are chainMatMulOp too:
//
//	wrt Z: G_c·W_cᵀ, from G (K, M, out) and the weights
//	wrt W: Z_cᵀ·G_c, from Z and G, laid out like the weights
//
// which are not differentiated again (nothing differentiates the energy's
// gradient).
type chainMatMulOp struct {
	graph.OpBase
	k   int
	wrt byte // 0: the product; 'z' or 'w': its derivative
	in  int  // the layer's inputs and outputs,
	out int  // which the shapes alone do not give for the derivatives
}

func newChainMatMulOp(k, in, out int, wrt byte) chainMatMulOp {
	name := fmt.Sprintf("ChainMatMul(K=%d,in=%d,out=%d)", k, in, out)
	if wrt != 0 {
		name = fmt.Sprintf("ChainMatMulGrad_%c(K=%d,in=%d,out=%d)", wrt, k, in, out)
	}
	return chainMatMulOp{OpBase: graph.NewOpBase(opNamespace, name, 2), k: k, wrt: wrt, in: in, out: out}
}

func (op chainMatMulOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t3, t2 := G.TensorType{Dims: 3, Of: a}, G.TensorType{Dims: 2, Of: a}
	switch op.wrt {
	case 'z':
		return hm.NewFnType(t3, t2, t3)
	case 'w':
		return hm.NewFnType(t3, t3, t2)
	}
	return hm.NewFnType(t3, t2, t3)
}

// shapes checks the inputs' shapes and returns M and the output's shape.
func (op chainMatMulOp) shapes(a, b tensor.Shape) (m int, out tensor.Shape, err error) {
	k, in, o := op.k, op.in, op.out
	bad := func() (int, tensor.Shape, error) {
		return 0, nil, fmt.Errorf("%v: shapes %v and %v", op, a, b)
	}
	if len(a) != 3 || a[0] != k {
		return bad()
	}
	m = a[1]
	switch op.wrt {
	case 'z': // G (K, M, out), W (in·out, K)
		if !a.Eq(tensor.Shape{k, m, o}) || !b.Eq(tensor.Shape{in * o, k}) {
			return bad()
		}
		return m, tensor.Shape{k, m, in}, nil
	case 'w': // Z (K, M, in), G (K, M, out)
		if !a.Eq(tensor.Shape{k, m, in}) || !b.Eq(tensor.Shape{k, m, o}) {
			return bad()
		}
		return m, tensor.Shape{in * o, k}, nil
	}
	if !a.Eq(tensor.Shape{k, m, in}) || !b.Eq(tensor.Shape{in * o, k}) {
		return bad()
	}
	return m, tensor.Shape{k, m, o}, nil
}

func (op chainMatMulOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	a, b, err := twoShapes(op, in)
	if err != nil {
		return nil, err
	}
	_, out, err := op.shapes(a, b)
	return out, err
}

func (op chainMatMulOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo computes the op into prealloc where graph.Output allows.
func (op chainMatMulOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	a, b, err := twoValues(op, vals)
	if err != nil {
		return nil, err
	}
	m, shape, err := op.shapes(a.Shape(), b.Shape())
	if err != nil {
		return nil, err
	}
	return typed(op, prealloc, vals, a, b, shape,
		func(out, a, b []float64) { chainMatMul(op, out, a, b, m, gemm64) },
		func(out, a, b []float32) { chainMatMul(op, out, a, b, m, gemm32) })
}

// gemm64 and gemm32 are C = A·B or its variants with transposes, row-major
// and dense.
func gemm64(tA, tB blas.Transpose, r, c, inner int, a []float64, lda int, b []float64, ldb int, out []float64) {
	blas64.Implementation().Dgemm(tA, tB, r, c, inner, 1, a, lda, b, ldb, 0, out, c)
}

func gemm32(tA, tB blas.Transpose, r, c, inner int, a []float32, lda int, b []float32, ldb int, out []float32) {
	blas32.Implementation().Sgemm(tA, tB, r, c, inner, 1, a, lda, b, ldb, 0, out, c)
}

// chainMatMul computes op into out, a GEMM a chain. The weights of chain c
// are gathered from their interleaved rows into a worker's own (in, out)
// block first; the weights' derivative is formed chain by chain in a
// (K, in, out) block and laid out like the weights after, so that no two
// workers write into the same cache lines.
func chainMatMul[T float32 | float64](op chainMatMulOp, out, a, b []T, m int,
	gemm func(tA, tB blas.Transpose, r, c, inner int, a []T, lda int, b []T, ldb int, out []T)) {
	k, in, o := op.k, op.in, op.out
	var dw []T
	if op.wrt == 'w' {
		dw = make([]T, k*in*o)
	}
	spans.Share(k, 1, func() (func(lo, hi int), func()) {
		w := make([]T, in*o)
		return func(lo, hi int) {
			for c := lo; c < hi; c++ {
				if op.wrt != 'w' {
					for i := range w {
						w[i] = b[i*k+c]
					}
				}
				switch op.wrt {
				case 'z': // G_c (M, out) · W_cᵀ
					gemm(blas.NoTrans, blas.Trans, m, in, o, a[c*m*o:], o, w, o, out[c*m*in:(c+1)*m*in])
				case 'w': // Z_cᵀ (in, M) · G_c (M, out)
					gemm(blas.Trans, blas.NoTrans, in, o, m, a[c*m*in:], in, b[c*m*o:], o, dw[c*in*o:(c+1)*in*o])
				default: // Z_c (M, in) · W_c (in, out)
					gemm(blas.NoTrans, blas.NoTrans, m, o, in, a[c*m*in:], in, w, o, out[c*m*o:(c+1)*m*o])
				}
			}
		}, nil
	})
	if dw != nil {
		spans.Share(in*o, max(1, spans.ElementSpan/k), func() (func(lo, hi int), func()) {
			return func(lo, hi int) {
				for i := lo; i < hi; i++ {
					for c := 0; c < k; c++ {
						out[i*k+c] = dw[(c*in*o)+i]
					}
				}
			}, nil
		})
	}
}

func (op chainMatMulOp) DiffWRT(int) []bool {
	if op.wrt != 0 {
		return []bool{false, false}
	}
	return []bool{true, true}
}

// SymDiff returns the derivatives with respect to the inputs and the
// weights.
func (op chainMatMulOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if op.wrt != 0 {
		return nil, fmt.Errorf("%v: the energy's gradient is not differentiated again", op)
	}
	dz, err := G.ApplyOp(newChainMatMulOp(op.k, op.in, op.out, 'z'), grad, inputs[1])
	if err != nil {
		return nil, err
	}
	dw, err := G.ApplyOp(newChainMatMulOp(op.k, op.in, op.out, 'w'), inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dz, dw}, nil
}

// applyChainMatMul returns Z_c·W_c for the K chains of z (K, M, in) and of the
// weights w (in·out, K) as they lie in θ; see chainMatMulOp.
func applyChainMatMul(z, w *G.Node, k, in, out int) (*G.Node, error) {
	return G.ApplyOp(newChainMatMulOp(k, in, out, 0), z, w)
}
