package coordnet

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
)

// Weights holds a small fully connected network in → hidden… → 1 in plain
// Go: W[l] is the fan_in × fan_out matrix of layer l (row-major) and B[l] its
// bias. It is the savable form of a network, evaluated without a graph
// (Eval, InputGrad, ChainNet, GradNet) or bound into one by package
// coordnet/netgraph.
type Weights struct {
	Inputs     int         `json:"inputs"`
	Hidden     []int       `json:"hidden"`
	Activation Activation  `json:"activation"`
	W          [][]float64 `json:"w"`
	B          [][]float64 `json:"b"`
}

// Activation is the non-linearity of the network's hidden layers.
type Activation string

// Supported activations.
const (
	ReLU Activation = "relu"
	Tanh Activation = "tanh"
)

// New returns randomly initialised weights with PyTorch's default
// nn.Linear initialisation: every weight and bias of a layer with fan-in f
// drawn from U(−1/√f, 1/√f).
func New(inputs int, hidden []int, act Activation, rng *rand.Rand) *Weights {
	w := &Weights{Inputs: inputs, Hidden: append([]int(nil), hidden...), Activation: act}
	sizes := w.sizes()
	for l := 0; l+1 < len(sizes); l++ {
		fin, fout := sizes[l], sizes[l+1]
		bound := 1 / math.Sqrt(float64(fin))
		W := make([]float64, fin*fout)
		B := make([]float64, fout)
		for i := range W {
			W[i] = bound * (2*rng.Float64() - 1)
		}
		for i := range B {
			B[i] = bound * (2*rng.Float64() - 1)
		}
		w.W = append(w.W, W)
		w.B = append(w.B, B)
	}
	return w
}

// sizes returns the layer widths in, hidden…, 1.
func (w *Weights) sizes() []int {
	s := append([]int{w.Inputs}, w.Hidden...)
	return append(s, 1)
}

// Validate reports whether the weights have the shapes their sizes imply.
func (w *Weights) Validate() error {
	if w.Inputs < 1 {
		return fmt.Errorf("mlp: %d inputs", w.Inputs)
	}
	if w.Activation != ReLU && w.Activation != Tanh {
		return fmt.Errorf("mlp: unknown activation %q (want %q or %q)", w.Activation, ReLU, Tanh)
	}
	s := w.sizes()
	if len(w.W) != len(s)-1 || len(w.B) != len(s)-1 {
		return fmt.Errorf("mlp: %d weight and %d bias layers for %d layers", len(w.W), len(w.B), len(s)-1)
	}
	for l := 0; l+1 < len(s); l++ {
		if s[l+1] < 1 {
			return fmt.Errorf("mlp: layer %d has width %d", l, s[l+1])
		}
		if len(w.W[l]) != s[l]*s[l+1] || len(w.B[l]) != s[l+1] {
			return fmt.Errorf("mlp: layer %d has %d weights and %d biases, want %d and %d", l, len(w.W[l]), len(w.B[l]), s[l]*s[l+1], s[l+1])
		}
		for _, v := range append(append([]float64(nil), w.W[l]...), w.B[l]...) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("mlp: layer %d has a non-finite parameter", l)
			}
		}
	}
	return nil
}

// NumParams is the number of weights and biases.
func (w *Weights) NumParams() int {
	n := 0
	for l := range w.W {
		n += len(w.W[l]) + len(w.B[l])
	}
	return n
}

// Params returns the parameter slices in the order W0, B0, W1, B1, …; they
// alias the weights.
func (w *Weights) Params() [][]float64 {
	var ps [][]float64
	for l := range w.W {
		ps = append(ps, w.W[l], w.B[l])
	}
	return ps
}

// Clone returns a deep copy.
func (w *Weights) Clone() *Weights {
	c := &Weights{Inputs: w.Inputs, Hidden: append([]int(nil), w.Hidden...), Activation: w.Activation}
	for l := range w.W {
		c.W = append(c.W, append([]float64(nil), w.W[l]...))
		c.B = append(c.B, append([]float64(nil), w.B[l]...))
	}
	return c
}

// UnmarshalJSON decodes the JSON of the field tags and validates the
// weights.
func (w *Weights) UnmarshalJSON(b []byte) error {
	type plain Weights
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*w = Weights(p)
	return w.Validate()
}

// ShallowReLU reports whether w has the trained networks' shape: ReLU, one
// hidden layer of more than one unit (in → h → 1) and a first layer small
// enough that Eval and InputGrad evaluate it row by row without BLAS, each
// hidden unit in registers. ChainNet and GradNet take such networks of 2
// and 3 inputs.
func (w *Weights) ShallowReLU() bool {
	return w.Activation == ReLU && len(w.Hidden) == 1 && w.Hidden[0] > 1 && w.Inputs*w.Hidden[0] <= smallLayer
}

// Eval computes the network on the n rows of x (n × Inputs, row-major) into
// out (length n) without a graph, with the kernel of Spec.Compute of kind
// Value (which the fused op of package coordnet/netgraph runs): blocks of
// rows, in parallel.
func (w *Weights) Eval(x, out []float64) {
	n := len(out)
	if len(x) != n*w.Inputs {
		panic(fmt.Sprintf("mlp.Eval: %d inputs for %d rows of %d", len(x), n, w.Inputs))
	}
	if n == 0 {
		return
	}
	w.Spec(Value).compute(append([][]float64{x}, w.Params()...), out, nil)
}

// InputGrad computes g_i·∇ₓf(x_i) for the n rows of x (n × Inputs,
// row-major) into dx (n × Inputs), and when out is not nil the outputs
// f(x_i) into out (length n), in one pass with the kernel of Spec.Compute
// of kind InputGrad. g weights each row: all ones gives the plain input
// gradient.
func (w *Weights) InputGrad(x, g, out, dx []float64) {
	n := len(g)
	if len(x) != n*w.Inputs || len(dx) != n*w.Inputs || (out != nil && len(out) != n) {
		panic(fmt.Sprintf("mlp.InputGrad: %d inputs, %d gradients and %d outputs for %d rows of %d", len(x), len(dx), len(out), n, w.Inputs))
	}
	if n == 0 {
		return
	}
	data := append([][]float64{x}, w.Params()...)
	w.Spec(InputGrad).compute(append(data, g), dx, out)
}
