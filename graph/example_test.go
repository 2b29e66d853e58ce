package graph_test

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
)

// An energy and its gradient as one compiled program: U(θ) = ½|θ|² + Σθ for
// a 3-vector θ, built once and run for two positions. graph.Grad, Compile
// and Value avoid Gorgonia's known gradient and register-reuse bugs; the
// package documentation lists them.
func Example() {
	g := G.NewGraph()
	theta := graph.Input(g, graph.Float64, "theta", 3)
	sq, err := G.Square(theta)
	if err != nil {
		panic(err)
	}
	half, err := G.Mul(graph.Scalar(g, graph.Float64, 0.5), sq)
	if err != nil {
		panic(err)
	}
	terms, err := G.Add(half, theta)
	if err != nil {
		panic(err)
	}
	u, err := G.Sum(terms)
	if err != nil {
		panic(err)
	}
	grads, err := graph.Grad(u, theta)
	if err != nil {
		panic(err)
	}
	prog, err := graph.Compile(u, grads[0])
	if err != nil {
		panic(err)
	}
	defer prog.Close()

	for _, x := range [][]float64{{0, 0, 0}, {1, -1, 2}} {
		if err := graph.SetValue(theta, x); err != nil {
			panic(err)
		}
		if err := prog.Run(); err != nil {
			panic(err)
		}
		uv, err := graph.Value(u, nil)
		if err != nil {
			panic(err)
		}
		du, err := graph.Value(grads[0], nil)
		if err != nil {
			panic(err)
		}
		fmt.Printf("U(%v) = %g, ∇U = %v\n", x, uv[0], du)
	}
	// Output:
	// U([0 0 0]) = 0, ∇U = [1 1 1]
	// U([1 -1 2]) = 5, ∇U = [2 0 3]
}
