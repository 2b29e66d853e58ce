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

// logLikOp is the minibatch term of the energy for K chains at once: from
// the logits L (K, M, C) and the label weights Y (M, C) it returns the K
// values
//
//	scale · Σ_m Σ_c Y[m, c] · log softmax(L[k, m, :])[c],
//
// each summed in row order, the chains shared out among the cores. Built
// from Gorgonia's primitives this is a log-softmax (a max, a subtraction, an
// exponential, a sum and a log, each a pass over L), a broadcast of Y over
// the chains (a repeat: a full copy), a product and a sum, and as many again
// for the gradient, each on one core. Its derivative is logLikGradOp, which
// is not differentiated again (nothing differentiates the energy's
// gradient).
type logLikOp struct {
	graph.OpBase
	scale float64
}

func newLogLikOp(scale float64) logLikOp {
	return logLikOp{OpBase: graph.NewOpBase(opNamespace, fmt.Sprintf("LogLik(scale=%v)", scale), 2), scale: scale}
}

// logLikShapes returns K, M and C from the logits' and the labels' shapes.
func logLikShapes(op fmt.Stringer, l, y tensor.Shape) (k, m, c int, err error) {
	if len(l) != 3 || len(y) != 2 || l[1] != y[0] || l[2] != y[1] {
		return 0, 0, 0, fmt.Errorf("%v: logits of shape %v and labels %v, want (K, M, C) and (M, C)", op, l, y)
	}
	return l[0], l[1], l[2], nil
}

func (op logLikOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: 3, Of: a}, G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: a})
}

func (op logLikOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	l, y, err := twoShapes(op, in)
	if err != nil {
		return nil, err
	}
	k, _, _, err := logLikShapes(op, l, y)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{k}, nil
}

func (op logLikOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo computes the op into prealloc where graph.Output allows.
func (op logLikOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	l, y, err := twoValues(op, vals)
	if err != nil {
		return nil, err
	}
	k, m, c, err := logLikShapes(op, l.Shape(), y.Shape())
	if err != nil {
		return nil, err
	}
	return typed(op, prealloc, vals, l, y, []int{k},
		func(out, l, y []float64) { logLik(out, l, y, m, c, op.scale) },
		func(out, l, y []float32) { logLik(out, l, y, m, c, op.scale) })
}

// logLik writes each chain's scaled log-likelihood into out, accumulating
// in float64.
func logLik[T float32 | float64](out, l, y []T, m, c int, scale float64) {
	byChainWith(len(out), func(sm *softmaxRows, lo, hi int) {
		for k := lo; k < hi; k++ {
			rows := l[k*m*c : (k+1)*m*c]
			rowExps(sm, rows, m, c)
			sum := 0.0
			for r := 0; r < m; r++ {
				row, yr := rows[r*c:(r+1)*c], y[r*c:(r+1)*c]
				lse := sm.logSumExp(r, c)
				for j, w := range yr {
					if w != 0 {
						sum += float64(w) * (float64(row[j]) - lse)
					}
				}
			}
			out[k] = T(scale * sum)
		}
	})
}

// byChainWith is byChain with a softmaxRows of each worker's own, kept
// from one chain to the next.
func byChainWith(k int, f func(sm *softmaxRows, lo, hi int)) {
	spans.Share(k, 1, func() (func(lo, hi int), func()) {
		sm := new(softmaxRows)
		return func(lo, hi int) { f(sm, lo, hi) }, nil
	})
}

// softmaxRows holds the exponentials of one chain's logits, each row
// shifted by its maximum, all of them computed at once (vec.Exp).
type softmaxRows struct {
	max, shifted, exp []float64 // the rows' maxima; x − max and e^{x − max}, row-major
}

// rowExps computes the exponentials of the m rows of c logits into s:
// each row's maximum (from −∞, in float64), and e^{x − max} as math.Exp
// gives it.
func rowExps[T float32 | float64](s *softmaxRows, rows []T, m, c int) {
	if len(s.max) < m {
		s.max, s.shifted, s.exp = make([]float64, m), make([]float64, m*c), make([]float64, m*c)
	}
	for r := 0; r < m; r++ {
		row, sh := rows[r*c:(r+1)*c], s.shifted[r*c:(r+1)*c]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = max(mx, float64(v))
		}
		for j, v := range row {
			sh[j] = float64(v) - mx
		}
		s.max[r] = mx
	}
	vec.Exp(s.exp[:m*c], s.shifted[:m*c])
}

// logSumExp returns log Σ exp(x) of row r, in float64, the sum in order.
func (s *softmaxRows) logSumExp(r, c int) float64 {
	sum := 0.0
	for _, e := range s.exp[r*c : (r+1)*c] {
		sum += e
	}
	return s.max[r] + math.Log(sum)
}

func (op logLikOp) DiffWRT(int) []bool { return []bool{true, false} }

// SymDiff returns the logits' gradient and none for the labels.
func (op logLikOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dl, err := G.ApplyOp(newLogLikGradOp(op.scale), inputs[0], inputs[1], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dl, nil}, nil
}

// logLikGradOp is logLikOp's derivative with respect to the logits, from
// the logits L, the labels Y and the upstream gradient g (K):
//
//	scale · g[k] · (Y[m, c] − (Σ_c' Y[m, c']) · softmax(L[k, m, :])[c]).
type logLikGradOp struct {
	graph.OpBase
	scale float64
}

func newLogLikGradOp(scale float64) logLikGradOp {
	return logLikGradOp{OpBase: graph.NewOpBase(opNamespace, fmt.Sprintf("LogLikGrad(scale=%v)", scale), 3), scale: scale}
}

func (op logLikGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: 3, Of: a}, G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: a}, G.TensorType{Dims: 3, Of: a})
}

func (op logLikGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 3 {
		return nil, fmt.Errorf("%v: %d inputs, want 3", op, len(in))
	}
	l, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%v: logits' shape %v", op, in[0])
	}
	return l.Clone(), nil
}

func (op logLikGradOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo computes the gradient into prealloc where graph.Output
// allows.
func (op logLikGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != 3 {
		return nil, fmt.Errorf("%v: %d inputs, want 3", op, len(vals))
	}
	l, y, err := twoValues(op, vals[:2])
	if err != nil {
		return nil, err
	}
	g, ok := vals[2].(tensor.Tensor)
	if !ok {
		return nil, fmt.Errorf("%v: gradient %T is not a tensor", op, vals[2])
	}
	k, m, c, err := logLikShapes(op, l.Shape(), y.Shape())
	if err != nil {
		return nil, err
	}
	if g.Dtype() != l.Dtype() {
		return nil, fmt.Errorf("%v: mixed dtypes", op)
	}
	if g.Shape().TotalSize() != k {
		return nil, fmt.Errorf("%v: gradient of shape %v for %d chains", op, g.Shape(), k)
	}
	switch gd := g.Data().(type) {
	case []float64:
		return typed(op, prealloc, vals, l, y, []int{k, m, c},
			func(d, l, y []float64) { logLikGrad(d, l, y, gd, m, c, op.scale) }, nil)
	case []float32:
		return typed(op, prealloc, vals, l, y, []int{k, m, c}, nil,
			func(d, l, y []float32) { logLikGrad(d, l, y, gd, m, c, op.scale) })
	}
	return nil, fmt.Errorf("%v: unsupported gradient %T", op, g.Data())
}

// logLikGrad writes the logits' gradient into d, chains shared out among
// the cores.
func logLikGrad[T float32 | float64](d, l, y, g []T, m, c int, scale float64) {
	byChainWith(len(g), func(sm *softmaxRows, lo, hi int) {
		for k := lo; k < hi; k++ {
			s := scale * float64(g[k])
			rowExps(sm, l[k*m*c:(k+1)*m*c], m, c)
			for r := 0; r < m; r++ {
				at := (k*m + r) * c
				yr, dr := y[r*c:(r+1)*c], d[at:at+c]
				w := 0.0
				for _, v := range yr {
					w += float64(v)
				}
				if w == 0 {
					clear(dr)
					continue
				}
				z := 0.0
				for j, e := range sm.exp[r*c : (r+1)*c] {
					dr[j] = T(e)
					z += e
				}
				for j, e := range dr {
					dr[j] = T(s * (float64(yr[j]) - w*float64(e)/z))
				}
			}
		}
	})
}

func (op logLikGradOp) DiffWRT(int) []bool { return []bool{false, false, false} }

func (op logLikGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v: the energy's gradient is not differentiated again", op)
}

// logLikelihood returns scale · Σ_m Σ_c Y[m, c] · log softmax(logits)[c]
// per chain; see logLikOp.
func logLikelihood(logits, y *G.Node, scale float64) (*G.Node, error) {
	return G.ApplyOp(newLogLikOp(scale), logits, y)
}
