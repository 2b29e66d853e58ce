package graph

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// stopGradOp is the identity in the forward pass with no gradient, first- or
// higher-order. Each node also remembers the value it last passed on, so that
// a finite-difference check can hold it fixed (FreezeStopGradients): the
// analytic gradient of a graph with stop-gradients treats their values as
// constants, and a finite-difference check must do the same (see
// graphtest.FreezeStopGradients).
type stopGradOp struct {
	OpBase
	slot *frozenValue
}

type frozenValue struct {
	frozen bool
	v      G.Value
}

func (op stopGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}

func (op stopGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("StopGradient: input shape is %T", in[0])
	}
	return s.Clone(), nil
}

func (op stopGradOp) Do(v ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, v...) }

// UsePreallocDo passes its input (or the frozen value) on into prealloc
// where Output allows, and remembers it in the slot's own memory.
func (op stopGradOp) UsePreallocDo(prealloc G.Value, v ...G.Value) (G.Value, error) {
	if len(v) != 1 {
		return nil, fmt.Errorf("StopGradient: want 1 input, got %d", len(v))
	}
	src := v[0]
	if op.slot.frozen && op.slot.v != nil {
		src = op.slot.v
	}
	out, err := mapValue(prealloc, src, copyInto[float64], copyInto[float32], op)
	if err != nil {
		return nil, err
	}
	if !op.slot.frozen {
		op.slot.v, err = mapValue(op.slot.v, out, copyInto[float64], copyInto[float32], op)
	}
	return out, err
}

func (op stopGradOp) DiffWRT(int) []bool { return []bool{false} }

func (op stopGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return G.Nodes{nil}, nil
}

// FreezeStopGradient makes the node output, from now on, the value it
// passed on in the last run (on = true), or its input again (on = false).
// It is graphtest.FreezeStopGradients's way in; the op type is not
// exported.
func (op stopGradOp) FreezeStopGradient(on bool) { op.slot.frozen = on }

// StopGradient returns x unchanged in the forward pass and blocks every
// gradient through it, first- and higher-order (Gorgonia has no such op).
func StopGradient(x *G.Node) *G.Node {
	op := stopGradOp{OpBase: NewOpBase(opNamespace, "StopGradient", 1), slot: &frozenValue{}}
	return G.Must(G.ApplyOp(op, x))
}
