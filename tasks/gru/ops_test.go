package gru

import (
	"fmt"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/graph/graphtest"
)

// weightedCost is Σ w⊙tanh(y) with fixed weights w, so that every entry of y
// matters differently.
func weightedCost(y *G.Node) *G.Node {
	w := make([]float64, y.Shape().TotalSize())
	for i := range w {
		w[i] = 1 + 0.37*float64(i%5)
	}
	c := graph.Constant(y.Graph(), y.Dtype(), "weights", w, y.Shape()...)
	return G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(G.Tanh(y)), c))))
}

// inputs returns input nodes of the given shapes filled with values in
// (−1, 1).
func inputs(g *G.ExprGraph, shapes ...[]int) G.Nodes {
	var ns G.Nodes
	for i, s := range shapes {
		n := graph.Input(g, graph.Float64, fmt.Sprintf("in%d", i), s...)
		d := graphtest.Data(n)
		for j := range d {
			d[j] = math.Sin(float64(7*j + 3*i + 1))
		}
		ns = append(ns, n)
	}
	return ns
}

// checkFirstAndSecond checks the first derivatives of cost and those of
// Σ (∂cost/∂x)² with respect to the inputs against central differences.
func checkFirstAndSecond(t *testing.T, name string, cost *G.Node, in G.Nodes) {
	t.Helper()
	d1, err := graph.Grad(cost, in...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sq := G.Nodes{}
	for _, d := range d1 {
		sq = append(sq, G.Must(G.Sum(G.Must(G.Square(d)))))
	}
	cost2 := sq[0]
	for _, s := range sq[1:] {
		cost2 = G.Must(G.Add(cost2, s))
	}
	d2, err := graph.Grad(cost2, in...)
	if err != nil {
		t.Fatalf("%s: second derivatives: %v", name, err)
	}
	p, err := graph.Compile(append(append(G.Nodes{cost, cost2}, d1...), d2...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for order, c := range []struct {
		cost  *G.Node
		grads G.Nodes
	}{{cost, d1}, {cost2, d2}} {
		eval := func() (float64, error) {
			if err := p.Run(); err != nil {
				return 0, err
			}
			v, err := graph.Value(c.cost, nil)
			return v[0], err
		}
		if _, err := eval(); err != nil {
			t.Fatal(err)
		}
		var params, grads [][]float64
		for i, n := range in {
			params = append(params, graphtest.Data(n))
			v, err := graph.Value(c.grads[i], nil)
			if err != nil {
				t.Fatal(err)
			}
			grads = append(grads, v)
		}
		res, err := graphtest.CheckGradient(eval, params, grads, 1e-6, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Worst > 1e-6 {
			t.Errorf("%s, derivative %d: %v", name, order+1, res)
		}
	}
}

func TestChainMatMulDerivatives(t *testing.T) {
	for _, m := range []int{1, 3, gemvRows + 3} {
		for _, trans := range []bool{false, true} {
			g := G.NewGraph()
			bShape := []int{2, 3, 4}
			if trans {
				bShape = []int{2, 4, 3}
			}
			in := inputs(g, []int{2, m, 3}, bShape)
			y, err := chainMatMul(in[0], in[1], trans)
			if err != nil {
				t.Fatal(err)
			}
			checkFirstAndSecond(t, fmt.Sprintf("chainMatMul rows %d trans %v", m, trans), weightedCost(y), in)
		}
	}
}

func TestActivationDerivatives(t *testing.T) {
	for name, f := range map[string]func(*G.Node) (*G.Node, error){"sigmoid": sigmoidNode, "tanh": tanhNode} {
		g := G.NewGraph()
		in := inputs(g, []int{2, 5})
		d := graphtest.Data(in[0])
		for j := range d {
			d[j] *= 3
		}
		y, err := f(in[0])
		if err != nil {
			t.Fatal(err)
		}
		checkFirstAndSecond(t, name, weightedCost(y), in)
	}
}

func TestGateDerivatives(t *testing.T) {
	for _, c := range []struct{ t, b, s int }{{0, 1, 3}, {1, 2, 3}, {2, 2, 3}, {0, 1, 1}, {1, gemvRows + 1, 2}} {
		g := G.NewGraph()
		in := inputs(g, []int{2, c.s * c.b, 4}, []int{2, c.b, 3}, []int{2, 3, 4})
		y, err := gate(in[0], in[1], in[2], c.t, c.b)
		if err != nil {
			t.Fatal(err)
		}
		checkFirstAndSecond(t, fmt.Sprintf("gate t=%d b=%d", c.t, c.b), weightedCost(y), in)
	}
}

// The blend h + z⊙(ĥ − h) has the first and second derivatives of central
// differences.
func TestBlendDerivatives(t *testing.T) {
	g := G.NewGraph()
	in := inputs(g, []int{2, 1, 3}, []int{2, 1, 3}, []int{2, 1, 3})
	y, err := blend(in[0], in[1], in[2])
	if err != nil {
		t.Fatal(err)
	}
	checkFirstAndSecond(t, "blend", weightedCost(y), in)
}

// The Bernoulli log-likelihood op agrees with its formula and its
// derivative with respect to the logits with central differences, for
// logits large enough that softplus's two branches both occur.
func TestBernoulliLogLik(t *testing.T) {
	g := G.NewGraph()
	in := inputs(g, []int{2, 3, 5}, []int{2, 3, 5})
	l, x := graphtest.Data(in[0]), graphtest.Data(in[1])
	for j := range l {
		l[j] *= 40 // softplus past its large-|l| branch points
		x[j] = math.Round(0.5 + 0.5*x[j])
	}
	ll := G.Must(G.ApplyOp(newBernoulliOp(false), in[0], in[1]))
	cost := weightedCost(G.Must(G.Mul(ll, graph.Scalar(g, graph.Float64, 0.01))))
	d, err := graph.Grad(cost, in[0])
	if err != nil {
		t.Fatal(err)
	}
	p, err := graph.Compile(cost, ll, d[0])
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	eval := func() (float64, error) {
		if err := p.Run(); err != nil {
			return 0, err
		}
		v, err := graph.Value(cost, nil)
		return v[0], err
	}
	if _, err := eval(); err != nil {
		t.Fatal(err)
	}
	got, _ := graph.Value(ll, nil)
	for r := range got {
		want := 0.0
		for o := range 5 {
			v := l[r*5+o]
			want += x[r*5+o]*v - math.Log(1+math.Exp(v))
		}
		if math.Abs(got[r]-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("row %d: log-likelihood %v, want %v", r, got[r], want)
		}
	}
	grad, _ := graph.Value(d[0], nil)
	res, err := graphtest.CheckGradient(eval, [][]float64{l}, [][]float64{grad}, 1e-6, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Worst > 1e-6 {
		t.Errorf("derivative: %v", res)
	}
}
