package graph

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Output returns the dense tensor an op writes a result of the given shape
// into, and its backing slice. That is prealloc, the op's result of the
// previous run that Gorgonia hands to UsePreallocDo, when it is a
// contiguous dense tensor of element type T and of that shape that shares
// no memory with the op's inputs; its old contents are left in place, so an
// op that relies on zeros must clear it. Otherwise it is a new tensor of
// zeros. The shape must have at least one dimension.
//
// An op built on Output gives Programs their speed: Program.Run keeps every
// register from one run to the next, so from the second run on the op
// writes into the memory of its last result instead of allocating.
func Output[T float32 | float64](prealloc G.Value, shape tensor.Shape, inputs ...G.Value) (*tensor.Dense, []T) {
	if d, ok := prealloc.(*tensor.Dense); ok && reusable(d, shape, inputs) {
		if data, ok := d.Data().([]T); ok && len(data) == shape.TotalSize() {
			return d, data
		}
	}
	data := make([]T, shape.TotalSize())
	return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(data)), data
}

// reusable reports whether d can take a result of the given shape without
// touching any input's memory.
func reusable(d *tensor.Dense, shape tensor.Shape, inputs []G.Value) bool {
	if len(shape) == 0 || !d.Shape().Eq(shape) || d.IsView() || !d.IsNativelyAccessible() || d.RequiresIterator() {
		return false
	}
	lo := d.Uintptr()
	hi := lo + uintptr(d.MemSize())
	for _, in := range inputs {
		if in == nil {
			continue
		}
		a := in.Uintptr()
		if b := a + uintptr(in.MemSize()); a < hi && lo < b {
			return false
		}
	}
	return true
}
