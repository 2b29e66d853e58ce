package mnist

import (
	"fmt"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// Batches cuts a Set into shuffled minibatches of a fixed size, as the
// authors' PyTorch loaders do (batch 500, shuffle=True): each epoch visits
// the images in a new random order drawn from the seeded source.
//
// Unlike those loaders (drop_last=False), which end an epoch with a short
// batch, Batches drops the remainder of N/batch: the energies are compiled
// for a fixed batch size, so every batch has exactly the requested size.
// An epoch therefore has N/batch (rounded down) batches, and N mod batch
// images, different ones each epoch, are left out of it (none for the 60000
// training images in batches of 500; 96 of the 30596 images of digits 0–4).
//
// Everything depends only on the source: the same seed gives the same
// batches.
type Batches struct {
	set   *Set
	rng   *rand.Rand
	order *samplers.Batches
}

// NewBatches returns minibatches of batch images of s, shuffled by rng. The
// first permutation is drawn at the first call of Next. NewBatches panics if
// batch is not in 1..s.N or rng is nil.
func NewBatches(s *Set, batch int, rng *rand.Rand) *Batches {
	if batch < 1 || batch > s.N {
		panic(fmt.Sprintf("mnist: batch size %d not in 1..%d (the set's size)", batch, s.N))
	}
	if rng == nil {
		panic("mnist: NewBatches needs a random source")
	}
	order, err := samplers.NewBatches(s.N, batch)
	if err != nil {
		panic(err) // excluded above
	}
	return &Batches{set: s, rng: rng, order: order}
}

// Size returns the number of images in a batch.
func (b *Batches) Size() int { return b.order.Size() }

// PerEpoch returns the number of batches in an epoch: N/batch, rounded down.
func (b *Batches) PerEpoch() int { return b.order.PerEpoch() }

// Epoch returns the number of epochs started so far (1 during the first).
func (b *Batches) Epoch() int { return b.order.Epoch() }

// Reset ends the current epoch: the next call of Next draws a new
// permutation and starts a fresh epoch (the authors restart their loader for
// every meta-training unroll).
func (b *Batches) Reset() { b.order.Reset() }

// Next fills x (batch×Dim, row-major) with the next batch's normalised images
// and y (batch) with their labels. At the start of each epoch it draws a new
// permutation of the images from the source. It returns an error, and fills
// nothing, if x or y has the wrong length.
func (b *Batches) Next(x []float64, y []int) error {
	n := b.order.Size()
	if len(x) != n*Dim || len(y) != n {
		return fmt.Errorf("mnist: batch buffers of %d inputs and %d labels, want %d×%d = %d and %d",
			len(x), len(y), n, Dim, n*Dim, n)
	}
	s := b.set
	for k, i := range b.order.Next(b.rng) {
		row := x[k*Dim : (k+1)*Dim]
		for j, p := range s.Pixels[i*Dim : (i+1)*Dim] {
			row[j] = normTable[p]
		}
		y[k] = s.Labels[i]
	}
	return nil
}
