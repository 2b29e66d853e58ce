package gru

import (
	"fmt"
	"math"
	"slices"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph"
)

// chainMatOp is a matrix product batched over the leading (chain) axis,
// C_k = A_k·B_k or, with trans, C_k = A_k·B_kᵀ, for A (K, M, N₁), B (K, N₁,
// N₂) or (K, N₂, N₁), C (K, M, N₂). It is G.BatchedMatMul for the
// recurrence's single-row products: gonum's Dgemm splits a 1×N product
// into column blocks of 64 run by goroutines, which measured 2–3× slower than
// one Dgemv per chain on the per-step products of this GRU (H = 100 to 200,
// 20 chains), the bulk of its time. Up to gemvRows rows are done as one
// Dgemv each, chain by chain, so that B_k is read from memory once for all
// rows (gonum's Dgemm with few rows is slower still); more rows use Gemm.
//
// Its derivatives are dA = chainMatOp{!trans}(g, B) and, for B,
// G.BatchedMatMul(A, g, ᵀ) (or (g, A, ᵀ) with trans), so it can be
// differentiated to any order.
type chainMatOp struct {
	graph.OpBase
	trans bool
}

// opNamespace is the namespace of this package's ops (see graph.NewOpBase).
const opNamespace = "metasgmcmc.gru"

func newChainMatOp(trans bool) chainMatOp {
	name := "ChainMatMul"
	if trans {
		name = "ChainMatMulᵀ"
	}
	return chainMatOp{OpBase: graph.NewOpBase(opNamespace, name, 2), trans: trans}
}

// gemvRows is the largest number of rows chainMatOp multiplies row by row.
const gemvRows = 32

func (op chainMatOp) Type() hm.Type {
	t := G.TensorType{Dims: 3, Of: hm.TypeVariable('a')}
	return hm.NewFnType(t, t, t)
}

func (op chainMatOp) dims(a, b tensor.Shape) (k, m, n1, n2 int, err error) {
	if len(a) != 3 || len(b) != 3 || a[0] != b[0] {
		return 0, 0, 0, 0, fmt.Errorf("%v: shapes %v and %v", op, a, b)
	}
	k, m, n1 = a[0], a[1], a[2]
	if op.trans {
		n2 = b[1]
		if b[2] != n1 {
			err = fmt.Errorf("%v: shapes %v and %v", op, a, b)
		}
	} else {
		n2 = b[2]
		if b[1] != n1 {
			err = fmt.Errorf("%v: shapes %v and %v", op, a, b)
		}
	}
	return
}

func (op chainMatOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("%v: %d inputs, want 2", op, len(in))
	}
	a, ok1 := in[0].(tensor.Shape)
	b, ok2 := in[1].(tensor.Shape)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%v: input shapes %v and %v", op, in[0], in[1])
	}
	k, m, _, n2, err := op.dims(a, b)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{k, m, n2}, nil
}

// dense returns the contiguous data of v.
func dense(v G.Value) (tensor.Tensor, error) {
	t, ok := v.(tensor.Tensor)
	if !ok {
		return nil, fmt.Errorf("gru: value %T is not a tensor", v)
	}
	if !t.IsNativelyAccessible() || t.RequiresIterator() {
		return tensor.Materialize(t), nil
	}
	return t, nil
}

func (op chainMatOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo computes the op into prealloc where graph.Output allows.
func (op chainMatOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != 2 {
		return nil, fmt.Errorf("%v: %d inputs, want 2", op, len(vals))
	}
	a, err := dense(vals[0])
	if err != nil {
		return nil, err
	}
	b, err := dense(vals[1])
	if err != nil {
		return nil, err
	}
	k, m, n1, n2, err := op.dims(a.Shape(), b.Shape())
	if err != nil {
		return nil, err
	}
	shape := []int{k, m, n2}
	tB := blas.NoTrans
	if op.trans {
		tB = blas.Trans
	}
	switch ad := a.Data().(type) {
	case []float64:
		bd, ok := b.Data().([]float64)
		if !ok {
			return nil, fmt.Errorf("%v: mixed dtypes", op)
		}
		t, c := graph.Output[float64](prealloc, shape, vals...)
		chainProducts(tB, k, m, n1, n2, ad, bd, 0, c)
		return t, nil
	case []float32:
		bd, ok := b.Data().([]float32)
		if !ok {
			return nil, fmt.Errorf("%v: mixed dtypes", op)
		}
		t, c := graph.Output[float32](prealloc, shape, vals...)
		chainProducts(tB, k, m, n1, n2, ad, bd, 0, c)
		return t, nil
	}
	return nil, fmt.Errorf("%v: unsupported dtype %v", op, a.Dtype())
}

// flip turns the transposition of B in c = a·op(B) into that of the
// matrix-vector product c = op'(B)·a.
func flip(t blas.Transpose) blas.Transpose {
	if t == blas.NoTrans {
		return blas.Trans
	}
	return blas.NoTrans
}

// chainProducts computes c_i = a_i·op(B_i) + β·c_i for each of the k chains,
// a_i (m, n1), op(B_i) (n1, n2) and c_i (m, n2) stored one chain after the
// other, B_i as (n1, n2), or as (n2, n1) when tB is blas.Trans: row by row
// (GEMV, while B_i is in cache) when m ≤ gemvRows, else one GEMM a chain.
func chainProducts[T float32 | float64](tB blas.Transpose, k, m, n1, n2 int, a, b []T, beta T, c []T) {
	sa, sb, sc := m*n1, n1*n2, m*n2
	rb, cb := n1, n2
	if tB == blas.Trans {
		rb, cb = n2, n1
	}
	for i := 0; i < k; i++ {
		B := b[i*sb : (i+1)*sb]
		if m <= gemvRows {
			for r := 0; r < m; r++ {
				gemv(flip(tB), rb, cb, B, a[i*sa+r*n1:i*sa+(r+1)*n1], beta, c[i*sc+r*n2:i*sc+(r+1)*n2])
			}
			continue
		}
		gemm(tB, m, n2, n1, a[i*sa:(i+1)*sa], rb, cb, B, beta, c[i*sc:(i+1)*sc])
	}
}

// gemv computes y = op(A)·x + β·y for the r × c row-major matrix A.
func gemv[T float32 | float64](tA blas.Transpose, r, c int, A, x []T, beta T, y []T) {
	switch A := any(A).(type) {
	case []float64:
		blas64.Gemv(tA, 1, blas64.General{Rows: r, Cols: c, Stride: c, Data: A}, blas64.Vector{N: len(x), Inc: 1, Data: any(x).([]float64)}, float64(beta), blas64.Vector{N: len(y), Inc: 1, Data: any(y).([]float64)})
	case []float32:
		blas32.Gemv(tA, 1, blas32.General{Rows: r, Cols: c, Stride: c, Data: A}, blas32.Vector{N: len(x), Inc: 1, Data: any(x).([]float32)}, float32(beta), blas32.Vector{N: len(y), Inc: 1, Data: any(y).([]float32)})
	}
}

// gemm computes C = A·op(B) + β·C for A (m, inner) and C (m, n) row-major
// and B stored as the rb × cb row-major matrix.
func gemm[T float32 | float64](tB blas.Transpose, m, n, inner int, A []T, rb, cb int, B []T, beta T, C []T) {
	switch A := any(A).(type) {
	case []float64:
		blas64.Gemm(blas.NoTrans, tB, 1, blas64.General{Rows: m, Cols: inner, Stride: inner, Data: A}, blas64.General{Rows: rb, Cols: cb, Stride: cb, Data: any(B).([]float64)}, float64(beta), blas64.General{Rows: m, Cols: n, Stride: n, Data: any(C).([]float64)})
	case []float32:
		blas32.Gemm(blas.NoTrans, tB, 1, blas32.General{Rows: m, Cols: inner, Stride: inner, Data: A}, blas32.General{Rows: rb, Cols: cb, Stride: cb, Data: any(B).([]float32)}, float32(beta), blas32.General{Rows: m, Cols: n, Stride: n, Data: any(C).([]float32)})
	}
}

func (op chainMatOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	a, b := inputs[0], inputs[1]
	da, err := G.ApplyOp(newChainMatOp(!op.trans), grad, b)
	if err != nil {
		return nil, err
	}
	var db *G.Node
	if op.trans { // C = A·Bᵀ: dB = gᵀ·A
		db, err = G.BatchedMatMul(grad, a, true, false)
	} else { // C = A·B: dB = Aᵀ·g
		db, err = G.BatchedMatMul(a, grad, true, false)
	}
	if err != nil {
		return nil, err
	}
	return G.Nodes{da, db}, nil
}

// chainMatMul returns the chain-batched product a·b (a·bᵀ with trans).
func chainMatMul(a, b *G.Node, trans bool) (*G.Node, error) {
	return G.ApplyOp(newChainMatOp(trans), a, b)
}

// actOp is an element-wise activation whose derivative is one fused op of
// its output: Gorgonia's G.Sigmoid differentiates as σ(x)⊙σ(−x)⊙g (three
// more ops and an exp per element) and G.Tanh as (1 − y⊙y)⊙g (three ops);
// in this GRU, whose per-step tensors are small, the number of ops per
// step sets the speed. The derivatives of the fused derivatives are built
// from Gorgonia's primitives. The kind actBlend is the GRU's state update
// h + z⊙(ĥ − h) = (1−z)⊙h + z⊙ĥ of (z, ĥ, h), one op instead of four, whose
// derivatives dz = g⊙(ĥ − h), dĥ = g⊙z and dh = g − g⊙z are Gorgonia's
// primitives.
type actOp struct {
	graph.OpBase
	kind actKind
}

func newActOp(kind actKind) actOp {
	arity := 2
	switch kind {
	case actSigmoid, actTanh:
		arity = 1
	case actBlend:
		arity = 3
	}
	return actOp{OpBase: graph.NewOpBase(opNamespace, actNames[kind], arity), kind: kind}
}

type actKind int

const (
	actSigmoid     actKind = iota // σ(x)
	actTanh                       // tanh(x)
	actSigmoidGrad                // (y, g) ↦ g⊙y⊙(1−y), the derivative of σ by its output y
	actTanhGrad                   // (y, g) ↦ g⊙(1−y²), the derivative of tanh by its output y
	actBlend                      // (z, ĥ, h) ↦ h + z⊙(ĥ − h)
)

var actNames = [...]string{"Sigmoid", "Tanh", "SigmoidGrad", "TanhGrad", "Blend"}

func (op actOp) Type() hm.Type {
	ts := make([]hm.Type, op.Arity()+1)
	for i := range ts {
		ts[i] = hm.TypeVariable('a')
	}
	return hm.NewFnType(ts...)
}

func (op actOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(in), op.Arity())
	}
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%v: input shape %v", op, in[0])
	}
	for _, o := range in[1:] {
		if s2, ok := o.(tensor.Shape); !ok || !s2.Eq(s) {
			return nil, fmt.Errorf("%v: shapes %v and %v", op, in[0], o)
		}
	}
	return s.Clone(), nil
}

func sigm(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func (op actOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo computes the op into prealloc where graph.Output allows.
func (op actOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(vals), op.Arity())
	}
	ts, err := denses(vals)
	if err != nil {
		return nil, err
	}
	shape := ts[0].Shape().Clone()
	switch x := ts[0].Data().(type) {
	case []float64:
		t, out := graph.Output[float64](prealloc, shape, vals...)
		return t, actInto(op, x, ts, out)
	case []float32:
		t, out := graph.Output[float32](prealloc, shape, vals...)
		return t, actInto(op, x, ts, out)
	}
	return nil, fmt.Errorf("%v: unsupported dtype %v", op, ts[0].Dtype())
}

// actInto computes op's activation of x, or for a gradient kind the
// gradient g = ts[1] times the activation's derivative at the output x, or
// for actBlend h + x⊙(ĥ − h) with ĥ = ts[1] and h = ts[2], into out.
func actInto[T float32 | float64](op actOp, x []T, ts []tensor.Tensor, out []T) error {
	var in [3][]T // at most three operands, without allocating
	for i, t := range ts {
		d, ok := t.Data().([]T)
		if !ok || len(d) != len(x) {
			return fmt.Errorf("%v: mismatched operands", op)
		}
		in[i] = d
	}
	switch op.kind {
	case actSigmoid:
		for i, v := range x {
			out[i] = T(sigm(float64(v)))
		}
	case actTanh:
		for i, v := range x {
			out[i] = T(math.Tanh(float64(v)))
		}
	case actSigmoidGrad:
		g := in[1]
		for i, y := range x {
			out[i] = g[i] * y * (1 - y)
		}
	case actTanhGrad:
		g := in[1]
		for i, y := range x {
			out[i] = g[i] * (1 - y*y)
		}
	case actBlend:
		hh, h := in[1], in[2]
		for i, z := range x {
			out[i] = h[i] + z*(hh[i]-h[i])
		}
	}
	return nil
}

func (op actOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	switch op.kind {
	case actSigmoid:
		d, err := G.ApplyOp(newActOp(actSigmoidGrad), output, grad)
		return G.Nodes{d}, err
	case actTanh:
		d, err := G.ApplyOp(newActOp(actTanhGrad), output, grad)
		return G.Nodes{d}, err
	case actBlend:
		return blendDiff(inputs, grad)
	}
	// Second derivatives, from primitives: for f(y, g) = g⊙φ(y),
	// d/dg = φ(y)⊙u and d/dy = g⊙φ'(y)⊙u, with φ(y) = y(1−y), φ' = 1−2y
	// (sigmoid) or φ(y) = 1−y², φ' = −2y (tanh).
	y, g := inputs[0], inputs[1]
	one := graph.Scalar(y.Graph(), y.Dtype(), 1)
	two := graph.Scalar(y.Graph(), y.Dtype(), 2)
	var phi, dphi *G.Node
	var err error
	if op.kind == actSigmoidGrad {
		if phi, err = G.HadamardProd(y, G.Must(G.Sub(one, y))); err != nil {
			return nil, err
		}
		dphi, err = G.Sub(one, G.Must(G.Mul(two, y)))
	} else {
		if phi, err = G.Sub(one, G.Must(G.HadamardProd(y, y))); err != nil {
			return nil, err
		}
		dphi, err = G.Neg(G.Must(G.Mul(two, y)))
	}
	if err != nil {
		return nil, err
	}
	dy, err := G.HadamardProd(G.Must(G.HadamardProd(g, dphi)), grad)
	if err != nil {
		return nil, err
	}
	dg, err := G.HadamardProd(phi, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dy, dg}, nil
}

// sigmoidNode returns σ(x) element-wise.
func sigmoidNode(x *G.Node) (*G.Node, error) { return G.ApplyOp(newActOp(actSigmoid), x) }

// tanhNode returns tanh(x) element-wise.
func tanhNode(x *G.Node) (*G.Node, error) { return G.ApplyOp(newActOp(actTanh), x) }

// gateOp is the pre-activation of a gate at step t of a segment, for B
// sequences and K chains: rows t·B … t·B+B−1 of the input projections P
// (K, S·B, H) plus the recurrent product x·U (x (K, B, N), U (K, N, H)),
// computed with P's rows as the initial value of the product (Dgemv with
// β = 1), in one op instead of a slice, a product and a sum.
//
// Its derivatives are dP = the adjoint in rows t·B…, zeros elsewhere (a
// concatenation), dx = chainMatOp{trans}(g, U) and dU = G.BatchedMatMul(x, g, ᵀ).
type gateOp struct{ rowBlockOp }

func newGateOp(t, b int) gateOp {
	return gateOp{rowBlockOp{OpBase: graph.NewOpBase(opNamespace, fmt.Sprintf("Gate(t=%d, b=%d)", t, b), 3), t: t, b: b, block: 0, what: "projections"}}
}

// rowBlockOp is gateOp's type and shape checks: three rank-3 inputs, of which
// the one at index block is a stack (K, S·B, H) of row blocks and the other
// two, in order, are the factors x (K, B, N) and U (K, N, H) of a product;
// the result is row block t, of B rows, of shape (K, B, H).
type rowBlockOp struct {
	graph.OpBase
	t, b  int
	block int    // index of the stacked input
	what  string // what the stacked input holds, for errors
}

func (op rowBlockOp) Type() hm.Type {
	t := G.TensorType{Dims: 3, Of: hm.TypeVariable('a')}
	return hm.NewFnType(t, t, t, t)
}

func (op rowBlockOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 3 {
		return nil, fmt.Errorf("%v: %d inputs, want 3", op, len(in))
	}
	factors := slices.Delete(slices.Clone(in), op.block, op.block+1)
	want, err := newChainMatOp(false).InferShape(factors...)
	if err != nil {
		return nil, err
	}
	if err := checkRowBlock(in[op.block], want, op.t, op.b); err != nil {
		return nil, fmt.Errorf("%v: %s %v", op, op.what, err)
	}
	return want, nil
}

// copyRowBlock copies row block t, of b rows of h, of each of the k chains'
// stacks in stacked (k, rows, h) into c (k, b, h).
func copyRowBlock[T float32 | float64](c, stacked []T, k, rows, t, b, h int) {
	for i := 0; i < k; i++ {
		copy(c[i*b*h:(i+1)*b*h], stacked[(i*rows+t*b)*h:])
	}
}

// checkRowBlock checks that stacked, of shape (K, ≥(t+1)·b, H), holds the
// rows t·b … t·b+b−1 of a product of shape want = (K, b, H).
func checkRowBlock(stacked G.DimSizer, want tensor.Shape, t, b int) error {
	s, ok := stacked.(tensor.Shape)
	if !ok || len(s) != 3 || s[0] != want[0] || s[2] != want[2] || want[1] != b || s[1] < (t+1)*b {
		return fmt.Errorf("of shape %v for a product of shape %v", stacked, want)
	}
	return nil
}

func (op gateOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo computes the op into prealloc where graph.Output allows.
func (op gateOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != 3 {
		return nil, fmt.Errorf("%v: %d inputs, want 3", op, len(vals))
	}
	ts, err := denses(vals)
	if err != nil {
		return nil, err
	}
	ps, xs, us := ts[0].Shape(), ts[1].Shape(), ts[2].Shape()
	k, rows, n, h := ps[0], ps[1], xs[2], us[2]
	b := op.b
	shape := []int{k, b, h}
	switch pd := ts[0].Data().(type) {
	case []float64:
		xd, ok1 := ts[1].Data().([]float64)
		ud, ok2 := ts[2].Data().([]float64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%v: mixed dtypes", op)
		}
		t, c := graph.Output[float64](prealloc, shape, vals...)
		copyRowBlock(c, pd, k, rows, op.t, b, h)
		chainProducts(blas.NoTrans, k, b, n, h, xd, ud, 1, c)
		return t, nil
	case []float32:
		xd, ok1 := ts[1].Data().([]float32)
		ud, ok2 := ts[2].Data().([]float32)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%v: mixed dtypes", op)
		}
		t, c := graph.Output[float32](prealloc, shape, vals...)
		copyRowBlock(c, pd, k, rows, op.t, b, h)
		chainProducts(blas.NoTrans, k, b, n, h, xd, ud, 1, c)
		return t, nil
	}
	return nil, fmt.Errorf("%v: unsupported dtype %v", op, ts[0].Dtype())
}

func (op gateOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := newChainMatOp(false).SymDiff(inputs[1:], output, grad)
	if err != nil {
		return nil, err
	}
	p := inputs[0]
	k, rows, h := p.Shape()[0], p.Shape()[1], p.Shape()[2]
	parts := G.Nodes{}
	if lo := op.t * op.b; lo > 0 {
		parts = append(parts, graph.Zeros(p.Graph(), p.Dtype(), k, lo, h))
	}
	parts = append(parts, grad)
	if hi := (op.t + 1) * op.b; hi < rows {
		parts = append(parts, graph.Zeros(p.Graph(), p.Dtype(), k, rows-hi, h))
	}
	dp := grad
	if len(parts) > 1 {
		if dp, err = graph.Concat(1, parts...); err != nil {
			return nil, err
		}
	}
	return append(G.Nodes{dp}, d...), nil
}

// gate returns the pre-activation rows t·B… of p plus x·u.
func gate(p, x, u *G.Node, t, b int) (*G.Node, error) { return G.ApplyOp(newGateOp(t, b), p, x, u) }

// blendDiff returns the derivatives of actBlend's h + z⊙(ĥ − h) with
// respect to z, ĥ and h, given the adjoint g: g⊙(ĥ − h), g⊙z and g − g⊙z.
func blendDiff(inputs G.Nodes, g *G.Node) (G.Nodes, error) {
	z, hh, h := inputs[0], inputs[1], inputs[2]
	diff, err := G.Sub(hh, h)
	if err != nil {
		return nil, err
	}
	dz, err := G.HadamardProd(g, diff)
	if err != nil {
		return nil, err
	}
	dhh, err := G.HadamardProd(g, z)
	if err != nil {
		return nil, err
	}
	dh, err := G.Sub(g, dhh)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dz, dhh, dh}, nil
}

// blend returns h + z⊙(ĥ − h).
func blend(z, hh, h *G.Node) (*G.Node, error) { return G.ApplyOp(newActOp(actBlend), z, hh, h) }
