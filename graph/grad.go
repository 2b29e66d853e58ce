package graph

import (
	"fmt"
	"reflect"
	"sort"
	"unsafe"

	G "gorgonia.org/gorgonia"
)

// Gorgonia internals. This file reads and writes two unexported fields of
// gorgonia.Node through reflect and unsafe; the offsets are looked up by
// name and type when the package loads, which panics if the pinned
// Gorgonia changes them, and TestGorgoniaInternalsCanary checks that they
// still mean what this code assumes.

// derivOffset is the offset of Gorgonia's unexported Node.deriv field, which
// caches the gradient node of the last symbolic differentiation.
//
// Written by ResetDerivs. Backpropagate reuses a node's deriv as its
// gradient instead of differentiating it again ("previously
// differentiated", differentiation.go in v0.9.18,
// https://github.com/gorgonia/gorgonia/blob/v0.9.18/differentiation.go#L219-L223),
// and Gorgonia has no way to clear it: Node.Deriv only reads it
// (https://github.com/gorgonia/gorgonia/blob/v0.9.18/node.go#L319). We
// found no upstream issue or pull request about it (the tracker search to
// recheck: https://github.com/gorgonia/gorgonia/issues?q=deriv); v0.9.18
// is the newest commit of Gorgonia's master that we checked (d7a3ce2).
// The regression test is TestBugSecondGradReusesStaleDerivatives.
var derivOffset = func() uintptr {
	f, ok := reflect.TypeOf(G.Node{}).FieldByName("deriv")
	if !ok || f.Type != reflect.TypeOf((*G.Node)(nil)) {
		panic("graph: gorgonia.Node has no field deriv *Node; the pinned Gorgonia version changed")
	}
	return f.Offset
}()

// childrenOffset is the offset of Gorgonia's unexported Node.children field.
//
// Only read, by children: Gorgonia v0.9.18 has no accessor of a node's
// operands (https://github.com/gorgonia/gorgonia/blob/v0.9.18/node.go#L30)
// but ExprGraph.From, which finds the node by a linear scan of the graph
// the first time it is asked for it
// (https://github.com/gorgonia/gorgonia/blob/v0.9.18/graph.go#L529-L541):
// reachable, which visits every node, would be quadratic in the size of
// the graph. We found no upstream issue or pull request about either (the
// tracker search to recheck:
// https://github.com/gorgonia/gorgonia/issues?q=children).
var childrenOffset = func() uintptr {
	f, ok := reflect.TypeOf(G.Node{}).FieldByName("children")
	if !ok || f.Type != reflect.TypeOf(G.Nodes(nil)) {
		panic("graph: gorgonia.Node has no field children Nodes; the pinned Gorgonia version changed")
	}
	return f.Offset
}()

// children returns n's operands in order (Gorgonia does not export them).
func children(n *G.Node) G.Nodes {
	return *(*G.Nodes)(unsafe.Add(unsafe.Pointer(n), childrenOffset))
}

// ResetDerivs clears the cached gradient of every node of g.
//
// Gorgonia's Backpropagate treats any node whose deriv is set as "previously
// differentiated" and reuses that stale gradient, so a second Grad on the
// same graph (second-order gradients, several costs) is silently wrong.
// Every differentiation in this package calls ResetDerivs first.
func ResetDerivs(g *G.ExprGraph) {
	for _, n := range g.AllNodes() {
		*(**G.Node)(unsafe.Add(unsafe.Pointer(n), derivOffset)) = nil
	}
}

// Grad returns ∂cost/∂w for every node w of wrt. Unlike G.Grad:
//   - wrt may hold intermediate nodes, not only inputs;
//   - it is right on repeated and second-order use (derivative caches are
//     cleared first);
//   - each w is differentiated in a backward pass of its own, because one
//     Backpropagate over several WRT nodes was measured to drop gradient
//     contributions in early prototypes (the package documentation tells
//     the story; TestSeveralWRTNodesAgree);
//   - a w that cost does not depend on gets an all-zero gradient instead of
//     an error.
//
// cost must be a scalar.
func Grad(cost *G.Node, wrt ...*G.Node) (G.Nodes, error) {
	if !cost.IsScalar() {
		return nil, fmt.Errorf("graph.Grad: cost %v has shape %v, want a scalar", cost, cost.Shape())
	}
	one := Scalar(cost.Graph(), cost.Dtype(), 1)
	return VJP(G.Nodes{cost}, G.Nodes{one}, wrt...)
}

// VJP returns the vector-Jacobian products Σ_j ⟨adjoints_j, ∂outputs_j/∂w⟩
// for every node w of wrt: the reverse-mode derivative of the outputs seeded
// with the given adjoints (for example input nodes fed with upstream
// gradients). It has the guarantees listed for Grad.
func VJP(outputs, adjoints G.Nodes, wrt ...*G.Node) (G.Nodes, error) {
	if len(outputs) == 0 || len(outputs) != len(adjoints) {
		return nil, fmt.Errorf("graph.VJP: %d outputs but %d adjoints", len(outputs), len(adjoints))
	}
	for i, o := range outputs {
		if !o.Shape().Eq(adjoints[i].Shape()) {
			return nil, fmt.Errorf("graph.VJP: output %v has shape %v but its adjoint has shape %v", o, o.Shape(), adjoints[i].Shape())
		}
	}
	g := outputs[0].Graph()
	reach := reachable(outputs)
	res := make(G.Nodes, len(wrt))
	for i, w := range wrt {
		var live G.Nodes
		var liveAdj G.Nodes
		if reach[w] {
			for j, o := range outputs {
				if reachable(G.Nodes{o})[w] {
					live = append(live, o)
					liveAdj = append(liveAdj, adjoints[j])
				}
			}
		}
		if len(live) == 0 {
			res[i] = Zeros(g, w.Dtype(), w.Shape()...)
			continue
		}
		ResetDerivs(g)
		d, err := G.Backpropagate(live, liveAdj, G.Nodes{w})
		ResetDerivs(g)
		if err != nil {
			return nil, fmt.Errorf("graph.VJP: differentiating w.r.t. %v: %w", w, err)
		}
		res[i] = d[0]
	}
	return res, nil
}

// reachable returns the nodes that the outputs depend on differentiably:
// Gorgonia's own forward analysis, stopping at non-differentiable inputs.
func reachable(outputs G.Nodes) map[*G.Node]bool {
	set := make(map[*G.Node]bool)
	stack := append(G.Nodes(nil), outputs...)
	for _, o := range outputs {
		set[o] = true
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.IsVar() || n.Op() == nil {
			continue
		}
		op, ok := n.Op().(G.SDOp)
		if !ok {
			continue
		}
		cs := children(n)
		diffs := op.DiffWRT(len(cs))
		for j, c := range cs {
			if j < len(diffs) && diffs[j] && !set[c] {
				set[c] = true
				stack = append(stack, c)
			}
		}
	}
	return set
}

// RowBlock is the gradient with respect to rows [Lo, Hi) of a matrix.
type RowBlock struct {
	Lo, Hi int
	Grad   *G.Node // shape (Hi − Lo, columns)
}

// GradRows returns ∂cost/∂x for a matrix x as row blocks, in order of Lo,
// with zero gradient in the rows that no block holds. Where cost uses x
// only through row slices (Slice along axis 0) that do not overlap, the
// blocks are the gradients of those slices themselves: Grad(cost, x) would
// pad each to x's size and add them up, a zeroed copy per slice and a sum
// of x's size, on one core, on every evaluation. Otherwise it is one block,
// Grad(cost, x).
func GradRows(cost, x *G.Node) ([]RowBlock, error) {
	rows := x.Shape()[0]
	var blocks []RowBlock
	var slices G.Nodes
	for n := range reachable(G.Nodes{cost}) {
		uses := false
		for _, c := range children(n) {
			uses = uses || c == x
		}
		if !uses {
			continue
		}
		op, ok := n.Op().(rangeOp)
		if !ok || op.kind != rangeSlice || op.axis != 0 {
			blocks = nil
			break
		}
		blocks = append(blocks, RowBlock{Lo: op.start, Hi: op.start + op.size, Grad: n})
	}
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].Lo < blocks[j].Lo })
	for i := 1; i < len(blocks); i++ {
		if blocks[i].Lo < blocks[i-1].Hi {
			blocks = nil
		}
	}
	if len(blocks) == 0 { // a use other than a row slice, or overlapping ones
		d, err := Grad(cost, x)
		if err != nil {
			return nil, err
		}
		return []RowBlock{{Lo: 0, Hi: rows, Grad: d[0]}}, nil
	}
	for _, b := range blocks {
		slices = append(slices, b.Grad)
	}
	d, err := Grad(cost, slices...)
	if err != nil {
		return nil, err
	}
	for i := range blocks {
		blocks[i].Grad = d[i]
	}
	return blocks, nil
}
