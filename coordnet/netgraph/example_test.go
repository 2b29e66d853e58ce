package netgraph_test

import (
	"encoding/json"
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
	"github.com/metasgmcmc/metasgmcmc/coordnet/netgraph"
	"github.com/metasgmcmc/metasgmcmc/graph"
)

// The network 2 → 2 → 1 of package coordnet's example, read from its
// JSON as trained-sampler files hold it, as a fused op in a graph,
// differentiated with respect to its three input rows: the values and
// input gradients that coordnet.Weights.InputGrad gives without a graph
// (package coordnet's example prints the same).
func Example() {
	var w coordnet.Weights
	check(json.Unmarshal([]byte(`{"inputs": 2, "hidden": [2], "activation": "relu",
		"w": [[1, -1, 0.5, 2], [1, -3]], "b": [[0, 0.5], [0.25]]}`), &w))
	x := []float64{1, 0, -1, 1, 0.5, 0.5} // rows (1, 0), (−1, 1), (0.5, 0.5)

	g := G.NewGraph()
	net, err := netgraph.NewNet(g, graph.Float64, "f", &w)
	check(err)
	xn := graph.Input(g, graph.Float64, "x", 3, 2)
	check(graph.SetValue(xn, x))
	y := G.Must(net.Forward(xn))
	grads, err := graph.Grad(G.Must(G.Sum(y)), xn)
	check(err)
	prog, err := graph.Compile(y, grads[0])
	check(err)
	defer prog.Close()
	check(prog.Run())
	for _, n := range []*G.Node{y, grads[0]} {
		v, err := graph.Value(n, nil)
		check(err)
		fmt.Print(v, " ")
	}
	fmt.Println()
	// Output:
	// [1.25 -10.25 -2] [1 0.5 3 -6 4 -5.5]
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
