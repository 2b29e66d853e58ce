package graph

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// stopGradOp is the identity in the forward pass with no gradient, first- or
// higher-order. Each node also remembers the value it last passed on, so that
// a finite-difference check can hold it fixed (FreezeStopGradients): the
// analytic gradient of a graph with stop-gradients treats their values as
// constants, and a finite-difference check must do the same.
type stopGradOp struct{ slot *frozenValue }

type frozenValue struct {
	frozen bool
	v      G.Value
}

func (op stopGradOp) Arity() int { return 1 }

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
	id := func(x float64) float64 { return x }
	id32 := func(x float32) float32 { return x }
	src := v[0]
	if op.slot.frozen && op.slot.v != nil {
		src = op.slot.v
	}
	out, err := mapValue(prealloc, src, id, id32, op)
	if err != nil {
		return nil, err
	}
	if !op.slot.frozen {
		op.slot.v, err = mapValue(op.slot.v, out, id, id32, op)
	}
	return out, err
}

func (op stopGradOp) ReturnsPtr() bool      { return false }
func (op stopGradOp) CallsExtern() bool     { return false }
func (op stopGradOp) OverwritesInput() int  { return -1 }
func (op stopGradOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "metasgmcmc.StopGradient") }
func (op stopGradOp) Hashcode() uint32      { return HashOf(op) }
func (op stopGradOp) String() string        { return "StopGradient" }
func (op stopGradOp) DiffWRT(int) []bool    { return []bool{false} }
func (op stopGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return G.Nodes{nil}, nil
}
func (op stopGradOp) DoDiff(G.ExecutionContext, G.Nodes, *G.Node) error {
	return fmt.Errorf("StopGradient: automatic (LispMachine) differentiation is not supported")
}

// StopGradient returns x unchanged in the forward pass and blocks every
// gradient through it, first- and higher-order (Gorgonia has no such op).
func StopGradient(x *G.Node) *G.Node {
	return G.Must(G.ApplyOp(stopGradOp{slot: &frozenValue{}}, x))
}

// FreezeStopGradients makes every StopGradient node of g output, from now
// on, the value it passed on in the last run (on = true), or its input again
// (on = false). A finite-difference check of a graph with stop-gradients
// runs the graph once, freezes, and then perturbs the parameters: the
// numeric derivative then has the meaning of the analytic one.
func FreezeStopGradients(g *G.ExprGraph, on bool) {
	for _, n := range g.AllNodes() {
		if op, ok := n.Op().(stopGradOp); ok {
			op.slot.frozen = on
		}
	}
}
