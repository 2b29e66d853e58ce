package main

import (
	"math"
	"strings"
	"testing"
)

// A two-layer PyTorch MLP 2-2-1 with ReLU, written out by hand:
// h = relu(W0·x + b0), y = W2·h + b2.
const torchState = `{"net": {
 "features.0.weight": {"shape": [2, 2], "values": [[1, -2], [0.5, 3]]},
 "features.0.bias": {"shape": [2], "values": [0.1, -0.2]},
 "features.2.weight": {"shape": [1, 2], "values": [[2, -1]]},
 "features.2.bias": {"shape": [1], "values": [0.3]},
 "out_func.weight": {"shape": [1, 40], "values": [[0]]}
}}`

func TestTorchMLPEvaluatesAsPyTorch(t *testing.T) {
	states, err := ReadTorchStates(strings.NewReader(torchState))
	if err != nil {
		t.Fatal(err)
	}
	w, err := TorchMLP(states["net"])
	if err != nil {
		t.Fatal(err)
	}
	relu := func(x float64) float64 { return math.Max(x, 0) }
	for _, x := range [][2]float64{{0, 0}, {1, 2}, {-1, 0.5}, {3, -1}} {
		h0 := relu(1*x[0] - 2*x[1] + 0.1)
		h1 := relu(0.5*x[0] + 3*x[1] - 0.2)
		want := 2*h0 - h1 + 0.3
		out := make([]float64, 1)
		w.Eval(x[:], out)
		if math.Abs(out[0]-want) > 1e-12 {
			t.Errorf("f(%v) = %v, want %v", x, out[0], want)
		}
	}
}

func TestTorchMLPRejectsBadStates(t *testing.T) {
	for name, state := range map[string]string{
		"empty":         `{}`,
		"not json":      `{"net": [}`,
		"no layers":     `{"net": {"out_func.weight": {"shape": [1, 1], "values": [[0]]}}}`,
		"missing bias":  `{"net": {"features.0.weight": {"shape": [1, 2], "values": [[1, 2]]}}}`,
		"shape":         `{"net": {"features.0.weight": {"shape": [1, 2], "values": [[1, 2, 3]]}, "features.0.bias": {"shape": [1], "values": [0]}}}`,
		"two outputs":   `{"net": {"features.0.weight": {"shape": [2, 1], "values": [[1], [2]]}, "features.0.bias": {"shape": [2], "values": [0, 0]}}}`,
		"unknown field": `{"net": {"features.0.scale": {"shape": [1], "values": [1]}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			states, err := ReadTorchStates(strings.NewReader(state))
			if err == nil {
				_, err = TorchMLP(states["net"])
			}
			if err == nil {
				t.Fatal("accepted")
			}
		})
	}
}
