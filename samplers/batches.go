package samplers

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
)

// Batches is the order in which an energy visits its training data, in
// minibatches of a fixed size: every data epoch visits the data in a fresh
// random permutation, drawn at the epoch's start from the random source of
// the evaluation that starts it, and drops the remainder of N/size (or,
// made by NewBatchesKeepLast with keepLast, ends with it as a short batch). So the order
// is determined by the seed, and a checkpoint that saves a Batches (it
// marshals to JSON) continues it exactly.
type Batches struct {
	perm     []int
	pos      int // index in perm of the next batch's first item
	size     int
	epoch    int  // epochs started so far
	keepLast bool // end each epoch with the N mod size items left over
}

// NewBatches returns the order of n items in batches of size; the first
// permutation is drawn by the first call of Next.
func NewBatches(n, size int) (*Batches, error) {
	if size < 1 || size > n {
		return nil, fmt.Errorf("samplers: batches of %d from %d items", size, n)
	}
	return &Batches{perm: make([]int, n), pos: n, size: size}, nil
}

// NewBatchesKeepLast is NewBatches, or with keepLast an order that, like
// PyTorch's DataLoader with drop_last=False (the authors' loaders), ends
// every epoch with the N mod size items left over as a short last batch
// instead of dropping them.
func NewBatchesKeepLast(n, size int, keepLast bool) (*Batches, error) {
	b, err := NewBatches(n, size)
	if b != nil {
		b.keepLast = keepLast
	}
	return b, err
}

// Next returns the indices of the next batch (valid until the next call),
// starting a new epoch with a permutation drawn from rng when the current one
// has fewer than a batch left (none left, with NewBatchesKeepLast: then the
// last batch of an epoch may be short).
func (b *Batches) Next(rng *rand.Rand) []int {
	if b.pos+b.size > len(b.perm) && (!b.keepLast || b.pos >= len(b.perm)) {
		for i := range b.perm {
			b.perm[i] = i
		}
		rng.Shuffle(len(b.perm), func(i, j int) { b.perm[i], b.perm[j] = b.perm[j], b.perm[i] })
		b.pos = 0
		b.epoch++
	}
	end := min(b.pos+b.size, len(b.perm))
	idx := b.perm[b.pos:end]
	b.pos = end
	return idx
}

// Size returns the number of items in a batch.
func (b *Batches) Size() int { return b.size }

// Epoch returns the number of data epochs started (1 during the first).
func (b *Batches) Epoch() int { return b.epoch }

// PerEpoch returns the number of batches in an epoch (the short last one
// included, with NewBatchesKeepLast).
func (b *Batches) PerEpoch() int { return BatchCount(len(b.perm), b.size, b.keepLast) }

// BatchCount returns the number of batches of size items in an epoch of n
// items: n/size rounded down (the remainder dropped), or up when keepLast
// (the short last batch kept).
func BatchCount(n, size int, keepLast bool) int {
	if keepLast {
		return (n + size - 1) / size
	}
	return n / size
}

// KeepsLast reports whether each epoch ends with the short batch of the
// items left over (NewBatchesKeepLast).
func (b *Batches) KeepsLast() bool { return b.keepLast }

// Reset ends the current epoch: the next call of Next starts a new one.
func (b *Batches) Reset() { b.pos = len(b.perm) }

type batchesJSON struct {
	Perm     []int `json:"perm"`
	Pos      int   `json:"pos"`
	Size     int   `json:"size"`
	Epoch    int   `json:"epoch"`
	KeepLast bool  `json:"keep_last,omitempty"`
}

// MarshalJSON saves the position in the order.
func (b *Batches) MarshalJSON() ([]byte, error) {
	return json.Marshal(batchesJSON{Perm: b.perm, Pos: b.pos, Size: b.size, Epoch: b.epoch, KeepLast: b.keepLast})
}

// UnmarshalJSON restores a position saved by MarshalJSON into b, which must
// have the same number of items, batch size and treatment of the items left
// over.
func (b *Batches) UnmarshalJSON(data []byte) error {
	var s batchesJSON
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	if len(s.Perm) != len(b.perm) || s.Size != b.size || s.Pos < 0 || s.Pos > len(s.Perm) || s.Epoch < 0 {
		return fmt.Errorf("samplers: saved batches of %d from %d items at %d in epoch %d, want batches of %d from %d at 0 to %d in epoch ≥ 0",
			s.Size, len(s.Perm), s.Pos, s.Epoch, b.size, len(b.perm), len(b.perm))
	}
	if s.KeepLast != b.keepLast {
		return fmt.Errorf("samplers: saved batches that keep the short last batch: %v, want %v", s.KeepLast, b.keepLast)
	}
	if s.Epoch == 0 { // no permutation drawn yet
		b.pos, b.epoch = len(b.perm), 0
		return nil
	}
	seen := make([]bool, len(s.Perm))
	for _, i := range s.Perm {
		if i < 0 || i >= len(seen) || seen[i] {
			return fmt.Errorf("samplers: saved batch order is not a permutation of %d items", len(seen))
		}
		seen[i] = true
	}
	copy(b.perm, s.Perm)
	b.pos, b.epoch = s.Pos, s.Epoch
	return nil
}
