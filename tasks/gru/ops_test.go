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
