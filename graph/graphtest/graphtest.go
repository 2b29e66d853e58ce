// Package graphtest holds helpers for testing code built on the graph
// package: a finite-difference gradient checker, access to the values that
// such a check perturbs in place, and a check that hand-written ops hash
// apart (CheckOpHashes).
//
// A typical check compiles a graph and its gradients once (graph.Compile),
// runs it, calls FreezeStopGradients if the graph has stop-gradients, and
// then compares the gradients read back with graph.Value against
// CheckGradient's central differences of a function that reruns the
// program, moving the entries of each parameter's Data in place.
package graphtest

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Data returns the float64 slice backing the value of a float64 input node,
// for in-place edits (as finite-difference checks do). It panics if the
// node holds no float64 tensor.
func Data(n *G.Node) []float64 {
	t, ok := n.Value().(tensor.Tensor)
	if !ok {
		panic(fmt.Sprintf("graphtest.Data %v: not a tensor value", n))
	}
	d, ok := t.Data().([]float64)
	if !ok {
		panic(fmt.Sprintf("graphtest.Data %v: dtype %v, want float64", n, t.Dtype()))
	}
	return d
}

// freezer is implemented by the op of graph.StopGradient.
type freezer interface{ FreezeStopGradient(on bool) }

// FreezeStopGradients makes every graph.StopGradient node of g output, from
// now on, the value it passed on in the last run (on = true), or its input
// again (on = false). A finite-difference check of a graph with
// stop-gradients runs the graph once, freezes, and then perturbs the
// parameters: the numeric derivative then has the meaning of the analytic
// one, which treats the stop-gradients' values as constants.
func FreezeStopGradients(g *G.ExprGraph, on bool) {
	for _, n := range g.AllNodes() {
		if op, ok := n.Op().(freezer); ok {
			op.FreezeStopGradient(on)
		}
	}
}
