// Package bnn provides Bayesian multi-layer perceptron classifiers as
// energies for K chains at once, as in the MNIST experiments of "Meta-Learning
// for Stochastic Gradient MCMC" (Gong, Li, Hernández-Lobato, ICLR 2019), and
// the authors' evaluation protocol: the ensemble predictive of the K chains
// at one time, its test error and its summed test negative log-likelihood.
//
// The energy of chain k on a minibatch B of M of the N training examples is
//
//	Ũ(θ_k) = −(N/M)·Σ_{m∈B} log softmax(f(x_m; θ_k))[y_m]
//	         + Σ_i [θ_ki²/(2σ²) + ½·log(2πσ²)]
//
// with f the network described by MLP and the Gaussian prior N(0, σ²I)
// (σ = 1 by default). The positions of the K chains are held together,
// coordinate-major, as everywhere in this project: coordinate i of chain k is
// at i·K + k. The graph shares the work of all chains: the first layer of
// every chain is one matrix product X·W1all, where W1all is the (fan_in,
// H·K) row block of θ that holds W1 (column j·K + k is unit j of chain k),
// and the later layers are batched matrix products over the chains.
package bnn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Activation is the non-linearity of an MLP's hidden layers.
type Activation string

// The hidden-layer activations of the authors' experiments: ReLU for the
// network-topology (NT) and data (Data) generalisation tasks, the logistic
// sigmoid for the activation-function (AF) generalisation task.
const (
	ReLU    Activation = "relu"
	Sigmoid Activation = "sigmoid"
)

// MLP describes a fully connected classifier and the layout of its
// parameters in θ, which is that of the authors' code: for each layer l in
// order, the fan_in × fan_out weight matrix W_l (row-major, x·W_l + b_l)
// followed by the bias b_l (fan_out values). Hidden layers apply Activation;
// the last layer gives the logits of a softmax.
type MLP struct {
	// Sizes holds the layer widths, input first and number of classes
	// last, for example {784, 40, 40, 10}. At least two.
	Sizes []int
	// Activation is applied to every hidden layer (ReLU when empty).
	Activation Activation
	// PriorStd is the standard deviation σ of the Gaussian prior
	// N(0, σ²I) on every weight and bias (1 when zero).
	PriorStd float64
}

// The networks of the paper's MNIST experiments.
var (
	// NTTrain is the 784-20-10 ReLU network the sampler is meta-trained on
	// (D = 15,910).
	NTTrain = MLP{Sizes: []int{784, 20, 10}, Activation: ReLU}
	// NTTest is the 784-40-40-10 ReLU network of the network-topology
	// generalisation test (D = 33,450).
	NTTest = MLP{Sizes: []int{784, 40, 40, 10}, Activation: ReLU}
	// AFTest is the 784-40-40-10 sigmoid network of the activation-function
	// generalisation test (D = 33,450).
	AFTest = MLP{Sizes: []int{784, 40, 40, 10}, Activation: Sigmoid}
	// DataTrain is the 784-20-5 ReLU network of the data generalisation
	// meta-training (digits 0–4, D = 15,805).
	DataTrain = MLP{Sizes: []int{784, 20, 5}, Activation: ReLU}
	// DataTest is the 784-40-40-5 ReLU network of the data generalisation
	// test (digits 5–9, D = 33,245).
	DataTest = MLP{Sizes: []int{784, 40, 40, 5}, Activation: ReLU}
)

// Validate reports whether the description is usable.
func (m MLP) Validate() error {
	if len(m.Sizes) < 2 {
		return fmt.Errorf("bnn: %d layer widths %v, want at least input and output", len(m.Sizes), m.Sizes)
	}
	for i, s := range m.Sizes {
		if s < 1 {
			return fmt.Errorf("bnn: layer width %d of %v is %d", i, m.Sizes, s)
		}
	}
	if m.Sizes[len(m.Sizes)-1] < 2 {
		return fmt.Errorf("bnn: %d classes, want at least 2", m.Sizes[len(m.Sizes)-1])
	}
	if m.act() != ReLU && m.act() != Sigmoid {
		return fmt.Errorf("bnn: unknown activation %q (want %q or %q)", m.Activation, ReLU, Sigmoid)
	}
	if m.PriorStd < 0 || math.IsNaN(m.PriorStd) || math.IsInf(m.PriorStd, 0) {
		return fmt.Errorf("bnn: prior standard deviation %v, want positive (or 0 for 1)", m.PriorStd)
	}
	return nil
}

func (m MLP) act() Activation {
	if m.Activation == "" {
		return ReLU
	}
	return m.Activation
}

// layerAct is the activation that layer l applies: the logits' identity
// for the last layer, Activation for the hidden ones.
func (m MLP) layerAct(l int) layerAct {
	switch {
	case l == m.Layers()-1:
		return actIdentity
	case m.act() == Sigmoid:
		return actSigmoid
	}
	return actReLU
}

// Sigma returns the prior standard deviation σ (PriorStd, or 1 when zero).
func (m MLP) Sigma() float64 {
	if m.PriorStd == 0 {
		return 1
	}
	return m.PriorStd
}

// Inputs returns the input width (Sizes[0]).
func (m MLP) Inputs() int { return m.Sizes[0] }

// Classes returns the number of classes (the last width).
func (m MLP) Classes() int { return m.Sizes[len(m.Sizes)-1] }

// Layers returns the number of weight layers (len(Sizes) − 1).
func (m MLP) Layers() int { return len(m.Sizes) - 1 }

// Dim returns the number D of parameters: Σ_l (fan_in_l + 1)·fan_out_l.
func (m MLP) Dim() int {
	d := 0
	for l := 0; l < m.Layers(); l++ {
		d += (m.Sizes[l] + 1) * m.Sizes[l+1]
	}
	return d
}

// Offsets returns where layer l's parameters start in θ: W_l occupies
// coordinates [w, w + fan_in·fan_out) (entry (i, j) at w + i·fan_out + j)
// and b_l occupies [b, b + fan_out).
func (m MLP) Offsets(l int) (w, b int) {
	if l < 0 || l >= m.Layers() {
		panic(fmt.Sprintf("bnn: layer %d of a %d-layer network", l, m.Layers()))
	}
	for i := 0; i < l; i++ {
		w += (m.Sizes[i] + 1) * m.Sizes[i+1]
	}
	return w, w + m.Sizes[l]*m.Sizes[l+1]
}

// Init returns positions of k chains (coordinate-major, length Dim·k) with
// every coordinate drawn from N(0, std²): the authors start evaluation
// chains at std 0.01 and meta-training chains at std 0.2.
func (m MLP) Init(rng *rand.Rand, k int, std float64) []float64 {
	x := make([]float64, m.Dim()*k)
	for i := range x {
		x[i] = std * rng.NormFloat64()
	}
	return x
}
