package bnn

import (
	"fmt"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks/mnist"
)

// Dataset is a labelled classification data set: Len examples of Inputs
// features, each with a class label in 0..Classes−1.
type Dataset interface {
	// Len is the number of examples.
	Len() int
	// Inputs is the number of features of an example.
	Inputs() int
	// Classes is the number of classes.
	Classes() int
	// Example writes the features of example i into x (length Inputs) and
	// returns its label.
	Example(i int, x []float64) int
}

// MNIST returns an MNIST split (or digit subset) as a Dataset: normalised
// images of mnist.Dim pixels (mnist.Set.Image) and the set's labels.
func MNIST(s *mnist.Set) Dataset { return mnistData{s} }

type mnistData struct{ s *mnist.Set }

func (d mnistData) Len() int     { return d.s.N }
func (d mnistData) Inputs() int  { return mnist.Dim }
func (d mnistData) Classes() int { return d.s.Classes }
func (d mnistData) Example(i int, x []float64) int {
	d.s.Image(i, x)
	return d.s.Labels[i]
}

// Matrix is a Dataset held as a design matrix and a label vector.
type Matrix struct {
	x       []float64
	y       []int
	inputs  int
	classes int
}

// NewMatrix returns the data set of the rows of x (len(y) rows of inputs
// values, row-major) with labels y in 0..classes−1. The slices are used, not
// copied.
func NewMatrix(x []float64, y []int, inputs, classes int) (*Matrix, error) {
	if inputs < 1 || classes < 2 || len(y) == 0 {
		return nil, fmt.Errorf("bnn: data set of %d examples, %d inputs and %d classes", len(y), inputs, classes)
	}
	if len(x) != len(y)*inputs {
		return nil, fmt.Errorf("bnn: %d features for %d examples of %d inputs", len(x), len(y), inputs)
	}
	for i, l := range y {
		if l < 0 || l >= classes {
			return nil, fmt.Errorf("bnn: label %d of example %d outside 0..%d", l, i, classes-1)
		}
	}
	return &Matrix{x: x, y: y, inputs: inputs, classes: classes}, nil
}

// Len implements Dataset.
func (m *Matrix) Len() int { return len(m.y) }

// Inputs implements Dataset.
func (m *Matrix) Inputs() int { return m.inputs }

// Classes implements Dataset.
func (m *Matrix) Classes() int { return m.classes }

// Example implements Dataset.
func (m *Matrix) Example(i int, x []float64) int {
	copy(x[:m.inputs], m.x[i*m.inputs:(i+1)*m.inputs])
	return m.y[i]
}

// batcher loads the minibatches of a data set in the order of a
// samplers.Batches, which draws each epoch's permutation from the source passed
// to next, so that all randomness comes from the caller.
type batcher struct {
	data  Dataset
	order *samplers.Batches
}

func newBatcher(data Dataset, batch int, keepLast bool) (*batcher, error) {
	order, err := samplers.NewBatchesKeepLast(data.Len(), batch, keepLast)
	if err != nil {
		return nil, err
	}
	return &batcher{data: data, order: order}, nil
}

// next fills the first rows of x (batch × Inputs) and y (batch) with the
// next minibatch and returns their number: batch, or fewer for the short
// last batch of an order that keeps it.
func (b *batcher) next(rng *rand.Rand, x []float64, y []int) (rows int, err error) {
	if rng == nil {
		return 0, fmt.Errorf("bnn: minibatches need a random source")
	}
	in := b.data.Inputs()
	idx := b.order.Next(rng)
	for r, i := range idx {
		y[r] = b.data.Example(i, x[r*in:(r+1)*in])
	}
	return len(idx), nil
}
