package graph

import (
	"fmt"

	"github.com/chewxy/hm"
	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Gorgonia's slice op writes its start, end and step into its hash as single
// bytes, so Slice(x, i) and Slice(x, i+256) hash alike and the graph merges
// them into one node (hash-consing compares op hashes). Every graph with more
// than 256 slices of one node — a recurrence over a sequence, or the gradient
// of a Concat of more than 256 operands, which slices its gradient — then
// silently computes wrong values and gradients. The ops below hash their full
// ranges.

// rangeOp is a tensor op that selects, pads or joins ranges along one axis.
type rangeOp struct {
	OpBase
	kind  rangeKind
	axis  int
	start int   // slice and pad: first index along axis
	size  int   // slice: length of the range; pad: length of the padded axis
	sizes []int // concat: lengths of the operands along axis
	dims  int   // number of dimensions of every operand and result
}

type rangeKind int

const (
	rangeSlice  rangeKind = iota // x[start:start+size] along axis
	rangePad                     // zeros of length size along axis with x at start
	rangeConcat                  // operands joined along axis
)

// newRangeOp returns a slice or pad (of the range start, size along axis)
// or a concat (of operands of the given sizes along axis) of tensors of
// dims dimensions.
func newRangeOp(kind rangeKind, axis, start, size int, sizes []int, dims int) rangeOp {
	var name string
	arity := 1
	switch kind {
	case rangeSlice:
		name = fmt.Sprintf("Slice(axis=%d, %d:%d, dims=%d)", axis, start, start+size, dims)
	case rangePad:
		name = fmt.Sprintf("Pad(axis=%d, at=%d, size=%d, dims=%d)", axis, start, size, dims)
	default:
		name = fmt.Sprintf("Concat(axis=%d, sizes=%v, dims=%d)", axis, sizes, dims)
		arity = len(sizes)
	}
	return rangeOp{OpBase: NewOpBase(opNamespace, name, arity), kind: kind, axis: axis, start: start, size: size, sizes: sizes, dims: dims}
}

func (op rangeOp) Type() hm.Type {
	tt := G.TensorType{Dims: op.dims, Of: hm.TypeVariable('a')}
	ts := make([]hm.Type, op.Arity()+1)
	for i := range ts {
		ts[i] = tt
	}
	return hm.NewFnType(ts...)
}

func (op rangeOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(in), op.Arity())
	}
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%v: input shape is %T", op, in[0])
	}
	out := s.Clone()
	switch op.kind {
	case rangeSlice, rangePad:
		out[op.axis] = op.size
	case rangeConcat:
		total := 0
		for _, n := range op.sizes {
			total += n
		}
		out[op.axis] = total
	}
	return out, nil
}

// layout returns the number of blocks before the axis and the block size
// after it, for a tensor of this op's dimensionality with the given shape.
func (op rangeOp) layout(shape tensor.Shape) (outer, inner int) {
	outer, inner = 1, 1
	for i, s := range shape {
		switch {
		case i < op.axis:
			outer *= s
		case i > op.axis:
			inner *= s
		}
	}
	return outer, inner
}

func (op rangeOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

// UsePreallocDo computes the op into prealloc where Output allows.
func (op rangeOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(vals), op.Arity())
	}
	ts := make([]tensor.Tensor, len(vals))
	shapes := make([]G.DimSizer, len(vals))
	for i, v := range vals {
		t, ok := v.(tensor.Tensor)
		if !ok || t.Dims() != op.dims {
			return nil, fmt.Errorf("%v: operand %d is %T of shape %v, want a %d-d tensor", op, i, v, v.Shape(), op.dims)
		}
		ts[i] = t
		shapes[i] = t.Shape()
	}
	outShape, err := op.InferShape(shapes...)
	if err != nil {
		return nil, err
	}
	switch ts[0].Dtype() {
	case tensor.Float64:
		out, data := Output[float64](prealloc, outShape, vals...)
		return out, rangeDo(op, ts, outShape, data)
	case tensor.Float32:
		out, data := Output[float32](prealloc, outShape, vals...)
		return out, rangeDo(op, ts, outShape, data)
	}
	return nil, fmt.Errorf("%v: unsupported dtype %v", op, ts[0].Dtype())
}

// rangeDo writes the op's result, of shape outShape, into out.
func rangeDo[T float32 | float64](op rangeOp, ts []tensor.Tensor, outShape tensor.Shape, out []T) error {
	if op.kind == rangePad {
		spans.For(len(out), func(lo, hi int) { clear(out[lo:hi]) })
	}
	outer, inner := op.layout(outShape)
	outAxis := outShape[op.axis]
	offset := 0 // position along the output axis where the next operand goes
	for _, t := range ts {
		src, ok := t.Data().([]T)
		if !ok {
			return fmt.Errorf("%v: mixed dtypes", op)
		}
		if !t.IsNativelyAccessible() || t.RequiresIterator() {
			return fmt.Errorf("%v: operand is a non-contiguous view", op)
		}
		inAxis := t.Shape()[op.axis]
		switch op.kind {
		case rangeSlice:
			if op.start+op.size > inAxis {
				return fmt.Errorf("%v: range out of bounds for shape %v", op, t.Shape())
			}
			n := op.size * inner
			copyBlocksShared(out, src, outer, n, n, inAxis*inner, 0, op.start*inner)
		case rangePad:
			n := inAxis * inner
			copyBlocksShared(out, src, outer, n, outAxis*inner, n, op.start*inner, 0)
		case rangeConcat:
			n := inAxis * inner
			copyBlocksShared(out, src, outer, n, outAxis*inner, n, offset*inner, 0)
			offset += inAxis
		}
	}
	return nil
}

// copyBlocksShared is copyBlocks with large copies shared out among the
// cores: by blocks where there are many, within the blocks where there are
// few (a slice of rows of θ is one block of all its elements).
func copyBlocksShared[T float32 | float64](dst, src []T, outer, n, dstStride, srcStride, dstOff, srcOff int) {
	switch {
	case outer*n < 2*spans.ElementSpan:
		copyBlocks(dst, src, outer, n, dstStride, srcStride, dstOff, srcOff)
	case n >= spans.ElementSpan:
		for o := 0; o < outer; o++ {
			d, s := dst[o*dstStride+dstOff:][:n], src[o*srcStride+srcOff:][:n]
			spans.For(n, func(lo, hi int) { copy(d[lo:hi], s[lo:hi]) })
		}
	default:
		spans.Share(outer, spans.ElementSpan/n, func() (func(lo, hi int), func()) {
			return func(lo, hi int) {
				copyBlocks(dst, src, hi-lo, n, dstStride, srcStride, dstOff+lo*dstStride, srcOff+lo*srcStride)
			}, nil
		})
	}
}

// copyBlocks copies outer blocks of n elements from src (block o at
// o·srcStride + srcOff) to dst (at o·dstStride + dstOff). Blocks of a few
// elements, such as the columns of a matrix of per-coordinate features,
// are copied element by element: a call of copy per element costs many
// times the copy.
func copyBlocks[T float32 | float64](dst, src []T, outer, n, dstStride, srcStride, dstOff, srcOff int) {
	switch {
	case n == 1:
		for o := 0; o < outer; o++ {
			dst[o*dstStride+dstOff] = src[o*srcStride+srcOff]
		}
	case n <= 8:
		for o := 0; o < outer; o++ {
			d, s := dst[o*dstStride+dstOff:][:n], src[o*srcStride+srcOff:][:n]
			for j := range d {
				d[j] = s[j]
			}
		}
	default:
		for o := 0; o < outer; o++ {
			copy(dst[o*dstStride+dstOff:][:n], src[o*srcStride+srcOff:][:n])
		}
	}
}

// SymDiff: the derivative of a slice is a pad of the gradient and vice
// versa; the derivative of a concat is one slice of the gradient per operand.
func (op rangeOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	switch op.kind {
	case rangeSlice:
		in := inputs[0].Shape()
		d, err := G.ApplyOp(newRangeOp(rangePad, op.axis, op.start, in[op.axis], nil, op.dims), grad)
		return G.Nodes{d}, err
	case rangePad:
		d, err := G.ApplyOp(newRangeOp(rangeSlice, op.axis, op.start, inputs[0].Shape()[op.axis], nil, op.dims), grad)
		return G.Nodes{d}, err
	}
	ds := make(G.Nodes, len(inputs))
	start := 0
	for i, n := range op.sizes {
		d, err := G.ApplyOp(newRangeOp(rangeSlice, op.axis, start, n, nil, op.dims), grad)
		if err != nil {
			return nil, err
		}
		ds[i] = d
		start += n
	}
	return ds, nil
}

// Slice returns x[start:end] along axis, keeping the axis (of length
// end−start). It replaces G.Slice, whose nodes for ranges 256 apart are
// merged by Gorgonia; the result is a fresh copy, never a view.
func Slice(x *G.Node, axis, start, end int) (*G.Node, error) {
	s := x.Shape()
	if axis < 0 || axis >= len(s) {
		return nil, fmt.Errorf("graph.Slice: axis %d out of range for shape %v", axis, s)
	}
	if start < 0 || end > s[axis] || start >= end {
		return nil, fmt.Errorf("graph.Slice: range %d:%d out of bounds for axis %d of shape %v", start, end, axis, s)
	}
	return G.ApplyOp(newRangeOp(rangeSlice, axis, start, end-start, nil, len(s)), x)
}

// Concat joins xs along axis. It replaces G.Concat, whose gradient slices are
// merged by Gorgonia past 256 operands. All operands must have the same
// shape except along axis.
func Concat(axis int, xs ...*G.Node) (*G.Node, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("graph.Concat: no operands")
	}
	s0 := xs[0].Shape()
	if axis < 0 || axis >= len(s0) {
		return nil, fmt.Errorf("graph.Concat: axis %d out of range for shape %v", axis, s0)
	}
	sizes := make([]int, len(xs))
	for i, x := range xs {
		s := x.Shape()
		if len(s) != len(s0) {
			return nil, fmt.Errorf("graph.Concat: operand %d has shape %v, operand 0 %v", i, s, s0)
		}
		for d := range s {
			if d != axis && s[d] != s0[d] {
				return nil, fmt.Errorf("graph.Concat: operand %d has shape %v, operand 0 %v", i, s, s0)
			}
		}
		sizes[i] = s[axis]
	}
	return G.ApplyOp(newRangeOp(rangeConcat, axis, 0, 0, sizes, len(s0)), xs...)
}

// Reshape returns x with a new shape, as a fresh copy. Gorgonia's Reshape
// returns a view of its operand; when the operand is an input node and an
// element-wise op consumes the view, the tape machine writes the result into
// the input's own value on every run.
func Reshape(x *G.Node, shape ...int) (*G.Node, error) {
	r, err := G.Reshape(x, tensor.Shape(shape))
	if err != nil {
		return nil, err
	}
	return Copy(r), nil
}
