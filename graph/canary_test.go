package graph

import (
	"testing"
	"unsafe"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestGorgoniaInternalsCanary checks what this package assumes of the
// unexported Gorgonia fields it reads and writes (grad.go, program.go):
// it fails, naming the field, when a Gorgonia upgrade changes them.
func TestGorgoniaInternalsCanary(t *testing.T) {
	g := G.NewGraph()
	x := Input(g, Float64, "x", 3)
	y := Input(g, Float64, "y", 3)
	SetValue(x, []float64{1, 2, 3})
	sum := G.Must(G.Add(x, y))
	sq := G.Must(G.HadamardProd(x, x))
	cost := G.Must(G.Sum(G.Must(G.Add(sum, sq))))

	// Node.children: the operands in order, duplicates kept, as the
	// exported (but slow) ExprGraph.From lists them.
	for _, c := range []struct {
		n    *G.Node
		want G.Nodes
	}{{sum, G.Nodes{x, y}}, {sq, G.Nodes{x, x}}} {
		if got := children(c.n); len(got) != len(c.want) || got[0] != c.want[0] || got[1] != c.want[1] {
			t.Errorf("Node.children of %v = %v, want %v", c.n, got, c.want)
		}
	}
	for _, n := range g.AllNodes() {
		var from G.Nodes
		for it := g.From(n.ID()); it.Next(); {
			from = append(from, it.Node().(*G.Node))
		}
		cs := children(n)
		if len(cs) != len(from) {
			t.Fatalf("Node.children of %v = %v, ExprGraph.From %v", n, cs, from)
		}
		for i := range cs {
			if cs[i] != from[i] {
				t.Fatalf("Node.children of %v = %v, ExprGraph.From %v", n, cs, from)
			}
		}
	}

	// Node.deriv: what Node.Deriv reads, set by a differentiation, cleared
	// by ResetDerivs.
	if _, err := G.Grad(cost, x); err != nil {
		t.Fatal(err)
	}
	set := 0
	for _, n := range g.AllNodes() {
		if *(**G.Node)(unsafe.Add(unsafe.Pointer(n), derivOffset)) != n.Deriv() {
			t.Fatalf("Node.deriv of %v is not what Node.Deriv returns", n)
		}
		if n.Deriv() != nil {
			set++
		}
	}
	if set == 0 {
		t.Fatal("G.Grad no longer caches gradients in Node.deriv: ResetDerivs may be obsolete")
	}
	ResetDerivs(g)
	for _, n := range g.AllNodes() {
		if n.Deriv() != nil {
			t.Fatalf("ResetDerivs left Node.deriv of %v set", n)
		}
	}

	// tapeMachine.pc: Run rewinds it and reruns the whole program with the
	// new inputs, each op writing into its register of the last run.
	neg := Neg(x)
	p, err := Compile(neg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	if *p.pc == 0 {
		t.Fatal("tapeMachine.pc did not move in a run")
	}
	first := neg.Value().(tensor.Tensor).Uintptr()
	SetValue(x, []float64{4, 5, 6})
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	if got := values(t, neg); !close(got, []float64{-4, -5, -6}, 0) {
		t.Errorf("after rewinding tapeMachine.pc, -x = %v, want [-4 -5 -6]", got)
	}
	if neg.Value().(tensor.Tensor).Uintptr() != first {
		t.Error("the second run allocated -x anew: the machine dropped its registers")
	}
}
