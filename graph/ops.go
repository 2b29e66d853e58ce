package graph

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// elemKind names an element-wise operation implemented by this package.
type elemKind int

const (
	kindCopy      elemKind = iota // identity that allocates, gradient passes
	kindClamp                     // min(max(x, lo), hi)
	kindClampGate                 // 1[lo < x < hi]    (not differentiable)
	kindNeg                       // −x
	kindAbs                       // |x|
	kindSign                      // sign(x), 0 at 0 (not differentiable)
	kindSqrt                      // √x
	kindExpm1                     // eˣ − 1
)

var kindNames = [...]string{"Copy", "Clamp", "ClampGate", "Neg", "Abs", "Sign", "Sqrt", "Expm1"}

// elemOp is a unary element-wise Gorgonia op whose symbolic derivative is
// built only from ops that can themselves be differentiated again: the
// derivative of the clamp is grad ⊙ gate(x), where gate is a
// constant-gradient (non-differentiable) op.
type elemOp struct {
	OpBase
	kind   elemKind
	lo, hi float64 // clamp bounds
}

// opNamespace is the namespace of this package's ops (see NewOpBase).
const opNamespace = "metasgmcmc"

// newElemOp returns the op of the given kind; lo and hi are the bounds of
// the clamp and its gate, and ignored by the other kinds.
func newElemOp(kind elemKind, lo, hi float64) elemOp {
	name := kindNames[kind]
	if kind == kindClamp || kind == kindClampGate {
		name = fmt.Sprintf("%s(%v,%v)", name, lo, hi)
	} else {
		lo, hi = 0, 0
	}
	return elemOp{OpBase: NewOpBase(opNamespace, name, 1), kind: kind, lo: lo, hi: hi}
}

func (op elemOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}

func (op elemOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("%v: want 1 input, got %d", op, len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%v: input shape is %T", op, in[0])
	}
	return s.Clone(), nil
}

// apply is the scalar function of the op.
func (op elemOp) apply(x float64) float64 {
	switch op.kind {
	case kindClamp:
		return math.Min(math.Max(x, op.lo), op.hi)
	case kindClampGate:
		if x > op.lo && x < op.hi {
			return 1
		}
		return 0
	case kindNeg:
		return -x
	case kindAbs:
		return math.Abs(x)
	case kindSign:
		return absGrad(x)
	case kindSqrt:
		return math.Sqrt(x)
	case kindExpm1:
		return math.Expm1(x)
	}
	return x // Copy
}

// absGrad is the derivative that Abs's gradient uses: sign(x), 0 at 0.
func absGrad(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func (op elemOp) apply32(x float32) float32 {
	switch op.kind {
	case kindCopy:
		return x
	case kindNeg:
		return -x
	case kindClamp:
		lo, hi := float32(op.lo), float32(op.hi)
		if x < lo {
			return lo
		}
		if x > hi {
			return hi
		}
		return x
	}
	return float32(op.apply(float64(x)))
}

// Do computes the op on a fresh value: the output never aliases the input,
// so no later in-place op can write through it into an input's value.
func (op elemOp) Do(v ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, v...) }

// UsePreallocDo computes the op into prealloc where Output allows.
func (op elemOp) UsePreallocDo(prealloc G.Value, v ...G.Value) (G.Value, error) {
	if len(v) != 1 {
		return nil, fmt.Errorf("%v: want 1 input, got %d", op, len(v))
	}
	return mapValue(prealloc, v[0], op.map64, op.map32, op)
}

// map64 applies the op to src into dst, with the common kinds' loops
// written out (a call of apply per element costs several times the work).
func (op elemOp) map64(dst, src []float64) {
	if mapExact(op.kind, dst, src) {
		return
	}
	switch op.kind {
	case kindAbs:
		for i, x := range src {
			dst[i] = math.Abs(x)
		}
	case kindSqrt:
		for i, x := range src {
			dst[i] = math.Sqrt(x)
		}
	case kindClamp:
		lo, hi := op.lo, op.hi
		for i, x := range src {
			dst[i] = math.Min(math.Max(x, lo), hi)
		}
	case kindClampGate:
		lo, hi := op.lo, op.hi
		for i, x := range src {
			g := 0.0
			if x > lo && x < hi {
				g = 1
			}
			dst[i] = g
		}
	case kindSign:
		for i, x := range src {
			dst[i] = absGrad(x)
		}
	default:
		for i, x := range src {
			dst[i] = op.apply(x)
		}
	}
}

// map32 is map64 in float32.
func (op elemOp) map32(dst, src []float32) {
	if mapExact(op.kind, dst, src) {
		return
	}
	for i, x := range src {
		dst[i] = op.apply32(x)
	}
}

// mapExact applies Copy and Neg, the kinds that are exact in any dtype, and
// reports whether kind was one of them.
func mapExact[T float32 | float64](kind elemKind, dst, src []T) bool {
	switch kind {
	case kindCopy:
		copy(dst, src)
	case kindNeg:
		for i, x := range src {
			dst[i] = -x
		}
	default:
		return false
	}
	return true
}

// mapValue applies f (or f32), a kernel over whole slices, element-wise
// to v, into prealloc where Output allows, else into a fresh value.
func mapValue(prealloc, v G.Value, f func(dst, src []float64), f32 func(dst, src []float32), op fmt.Stringer) (G.Value, error) {
	switch x := v.(type) {
	case tensor.Tensor:
		switch src := x.Data().(type) {
		case []float64:
			out, dst := Output[float64](prealloc, x.Shape(), v)
			f(dst, src[:len(dst)])
			return out, nil
		case []float32:
			out, dst := Output[float32](prealloc, x.Shape(), v)
			f32(dst, src[:len(dst)])
			return out, nil
		case float64: // a 0-d tensor
			var y [1]float64
			f(y[:], []float64{src})
			return tensor.New(tensor.FromScalar(y[0])), nil
		case float32:
			var y [1]float32
			f32(y[:], []float32{src})
			return tensor.New(tensor.FromScalar(y[0])), nil
		}
		return nil, fmt.Errorf("%v: unsupported dtype %v", op, x.Dtype())
	case *G.F64:
		var y [1]float64
		f(y[:], []float64{float64(*x)})
		r := G.F64(y[0])
		return &r, nil
	case *G.F32:
		var y [1]float32
		f32(y[:], []float32{float32(*x)})
		r := G.F32(y[0])
		return &r, nil
	}
	return nil, fmt.Errorf("%v: unsupported value %T", op, v)
}

// copyInto is mapValue's kernel of the identity.
func copyInto[T float32 | float64](dst, src []T) { copy(dst, src) }

// DiffWRT reports whether gradients flow to the input.
func (op elemOp) DiffWRT(int) []bool {
	switch op.kind {
	case kindClampGate, kindSign:
		return []bool{false}
	}
	return []bool{true}
}

// SymDiff builds the derivative expression: grad for Copy, −grad for Neg,
// grad ⊙ gate(x) for Clamp, grad ⊙ sign(x) for Abs, grad / (2·√x) for
// Sqrt, grad ⊙ (Expm1(x) + 1) for Expm1, nothing for the gates.
func (op elemOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	var gate elemOp
	switch op.kind {
	case kindCopy:
		return G.Nodes{grad}, nil
	case kindNeg:
		return G.Nodes{Neg(grad)}, nil
	case kindClamp:
		gate = newElemOp(kindClampGate, op.lo, op.hi)
	case kindAbs:
		gate = newElemOp(kindSign, 0, 0)
	case kindSqrt:
		// Gorgonia's own derivative of its Sqrt, term for term
		two := Scalar(output.Graph(), output.Dtype(), 2)
		d, err := G.HadamardDiv(grad, G.Must(G.HadamardProd(two, output)))
		return G.Nodes{d}, err
	case kindExpm1:
		one := Scalar(output.Graph(), output.Dtype(), 1)
		d, err := G.HadamardProd(grad, G.Must(G.Add(output, one)))
		return G.Nodes{d}, err
	default:
		return G.Nodes{nil}, nil
	}
	mask, err := G.ApplyOp(gate, inputs[0])
	if err != nil {
		return nil, err
	}
	d, err := G.HadamardProd(grad, mask)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}

func applyElem(op elemOp, x *G.Node) *G.Node {
	return G.Must(G.ApplyOp(op, x))
}

// Copy is a differentiable identity that materialises its input into fresh
// memory. Use it on Reshape or Slice views of input nodes before they feed
// element-wise ops: Gorgonia's tape machine otherwise writes through the view
// into the input's own value on every run.
func Copy(x *G.Node) *G.Node { return applyElem(newElemOp(kindCopy, 0, 0), x) }

// Neg is −x. Unlike Gorgonia's negation, which copies its input on every
// run, it writes into its last result (Program.Run); its derivative is Neg
// again. Gorgonia's subtraction differentiates into its negation, so
// x + Neg(y) is the way to write x − y (the same value, bit for bit) in
// graphs that are differentiated and run many times.
func Neg(x *G.Node) *G.Node { return applyElem(newElemOp(kindNeg, 0, 0), x) }

// Abs is |x|, which writes into its last result like Neg. Its derivative
// is grad ⊙ sign(x) (0 at 0, as Gorgonia's), differentiable again (to 0).
func Abs(x *G.Node) *G.Node { return applyElem(newElemOp(kindAbs, 0, 0), x) }

// Sqrt is √x, which writes into its last result like Neg, with Gorgonia's
// derivative grad / (2·√x), differentiable again.
func Sqrt(x *G.Node) *G.Node { return applyElem(newElemOp(kindSqrt, 0, 0), x) }

// Expm1 is eˣ − 1, accurate where x is near 0 (math.Expm1), which writes
// into its last result like Neg. Its derivative is grad ⊙ (Expm1(x) + 1),
// differentiable again.
func Expm1(x *G.Node) *G.Node { return applyElem(newElemOp(kindExpm1, 0, 0), x) }

// ClampGate is 1 where lo < x < hi and 0 elsewhere: the derivative of
// Clamp(x, lo, hi), as a value. It is not differentiable (no gradient passes
// through it).
func ClampGate(x *G.Node, lo, hi float64) *G.Node {
	if lo > hi {
		panic(fmt.Sprintf("graph.ClampGate: lo %v > hi %v", lo, hi))
	}
	return applyElem(newElemOp(kindClampGate, lo, hi), x)
}

// Clamp is min(max(x, lo), hi). Its derivative is 1 strictly inside (lo, hi)
// and 0 where the clamp is active; the derivative is itself differentiable.
func Clamp(x *G.Node, lo, hi float64) *G.Node {
	if lo > hi {
		panic(fmt.Sprintf("graph.Clamp: lo %v > hi %v", lo, hi))
	}
	return applyElem(newElemOp(kindClamp, lo, hi), x)
}

// keepAliveOp consumes every value of a program as its final instruction.
// Gorgonia's register allocator reuses the register of a value after its last
// use, and ops then write into the reused memory — in place, or into a value
// allocated earlier. Values that alias it (Reshape and other views, or any
// node read back after the run) are silently overwritten. With one final
// consumer of every node no register is reused, so no op writes in place.
type keepAliveOp struct {
	OpBase
	n int
}

func newKeepAliveOp(n int) keepAliveOp {
	return keepAliveOp{OpBase: NewOpBase(opNamespace, fmt.Sprintf("KeepAlive(%d)", n), n), n: n}
}

func (op keepAliveOp) Type() hm.Type {
	ts := make([]hm.Type, op.n+1)
	for i := 0; i < op.n; i++ {
		ts[i] = hm.TypeVariable(rune(0x4e00 + i))
	}
	ts[op.n] = tensor.Float64
	return hm.NewFnType(ts...)
}

func (op keepAliveOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

func (op keepAliveOp) Do(...G.Value) (G.Value, error) {
	v := G.F64(0)
	return &v, nil
}
