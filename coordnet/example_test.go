package coordnet_test

import (
	"encoding/json"
	"fmt"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
)

// A network 2 → 2 → 1 read from its JSON, as trained-sampler files hold
// it, evaluated with its input gradients on three rows. (Package
// coordnet/netgraph's example evaluates it in a graph.)
func Example() {
	var w coordnet.Weights
	check(json.Unmarshal([]byte(`{"inputs": 2, "hidden": [2], "activation": "relu",
		"w": [[1, -1, 0.5, 2], [1, -3]], "b": [[0, 0.5], [0.25]]}`), &w))
	x := []float64{1, 0, -1, 1, 0.5, 0.5} // rows (1, 0), (−1, 1), (0.5, 0.5)
	f, dx := make([]float64, 3), make([]float64, 6)
	w.InputGrad(x, []float64{1, 1, 1}, f, dx)
	fmt.Println("f =", f, "∇f =", dx)
	// Output:
	// f = [1.25 -10.25 -2] ∇f = [1 0.5 3 -6 4 -5.5]
}

// The same network's directional derivatives ∇ₓf(x_i)·H_i along
// H_i = (1, 1) on each row: the sums of the input gradients above.
func ExampleSpec_Compute() {
	var w coordnet.Weights
	check(json.Unmarshal([]byte(`{"inputs": 2, "hidden": [2], "activation": "relu",
		"w": [[1, -1, 0.5, 2], [1, -3]], "b": [[0, 0.5], [0.25]]}`), &w))
	x := []float64{1, 0, -1, 1, 0.5, 0.5}
	h := []float64{1, 1, 1, 1, 1, 1}
	jvp := make([]float64, 3)
	data := append([][]float64{x}, w.Params()...) // X, W0, B0, W1, B1
	w.Spec(coordnet.JVP).Compute(append(data, h), jvp)
	fmt.Println(jvp)
	// Output:
	// [1.5 -3 -1.5]
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
