package mnist

import (
	"math/rand/v2"
	"testing"
)

// collect returns the image indices (the pixel value of tinySet's images) and
// labels of k batches.
func collect(t *testing.T, b *Batches, k int) (idx [][]int, labels [][]int) {
	t.Helper()
	x := make([]float64, b.Size()*Dim)
	y := make([]int, b.Size())
	for range k {
		if err := b.Next(x, y); err != nil {
			t.Fatal(err)
		}
		ii := make([]int, b.Size())
		for r := range ii {
			// tinySet's image i has every pixel equal to i.
			for j := range Dim {
				if x[r*Dim+j] != x[r*Dim] {
					t.Fatalf("row %d of a batch mixes images", r)
				}
			}
			ii[r] = pixelOf(t, x[r*Dim])
		}
		idx = append(idx, ii)
		labels = append(labels, append([]int(nil), y...))
	}
	return idx, labels
}

// pixelOf inverts the normalisation (normTable).
func pixelOf(t *testing.T, v float64) int {
	for p := range 256 {
		if normTable[byte(p)] == v {
			return p
		}
	}
	t.Fatalf("%v is no normalised pixel", v)
	return -1
}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

func TestBatchesEpochs(t *testing.T) {
	labels := make([]int, 23)
	for i := range labels {
		labels[i] = (i * 3) % 10
	}
	s := tinySet(labels...)
	for _, tc := range []struct {
		batch, perEpoch int
	}{
		{1, 23}, {5, 4}, {7, 3}, {23, 1}, {12, 1},
	} {
		b := NewBatches(s, tc.batch, newRNG(1))
		if b.PerEpoch() != tc.perEpoch || b.Size() != tc.batch {
			t.Errorf("batch %d: PerEpoch %d, Size %d; want %d, %d", tc.batch, b.PerEpoch(), b.Size(), tc.perEpoch, tc.batch)
		}
		for epoch := 1; epoch <= 3; epoch++ {
			idx, lab := collect(t, b, tc.perEpoch)
			if b.Epoch() != epoch {
				t.Errorf("batch %d: Epoch() = %d, want %d", tc.batch, b.Epoch(), epoch)
			}
			seen := map[int]bool{}
			for k := range idx {
				for r, i := range idx[k] {
					if seen[i] {
						t.Errorf("batch %d, epoch %d: image %d twice", tc.batch, epoch, i)
					}
					seen[i] = true
					if lab[k][r] != labels[i] {
						t.Errorf("image %d has label %d, want %d", i, lab[k][r], labels[i])
					}
				}
			}
			// Exactly the remainder is dropped.
			if want := tc.perEpoch * tc.batch; len(seen) != want {
				t.Errorf("batch %d, epoch %d: %d distinct images, want %d", tc.batch, epoch, len(seen), want)
			}
		}
	}
}

func TestBatchesShuffleEachEpoch(t *testing.T) {
	s := tinySet(make([]int, 40)...)
	b := NewBatches(s, 10, newRNG(7))
	e1, _ := collect(t, b, 4)
	e2, _ := collect(t, b, 4)
	if sameOrder(e1, e2) {
		t.Error("two epochs in the same order")
	}
	ident := true
	for k := range e1 {
		for r, i := range e1[k] {
			ident = ident && i == 10*k+r
		}
	}
	if ident {
		t.Error("first epoch not shuffled")
	}
}

func sameOrder(a, b [][]int) bool {
	for k := range a {
		if !equalInts(a[k], b[k]) {
			return false
		}
	}
	return true
}

func TestBatchesDeterministic(t *testing.T) {
	labels := make([]int, 30)
	for i := range labels {
		labels[i] = i % 10
	}
	s := tinySet(labels...)
	run := func(seed uint64) [][]int {
		b := NewBatches(s, 4, newRNG(seed))
		idx, _ := collect(t, b, 20) // 7 per epoch: crosses two epoch boundaries
		return idx
	}
	a, b := run(3), run(3)
	if !sameOrder(a, b) {
		t.Error("the same seed gave different batches")
	}
	if sameOrder(a, run(4)) {
		t.Error("seeds 3 and 4 gave the same batches")
	}
}

func TestBatchesReset(t *testing.T) {
	s := tinySet(make([]int, 20)...)
	// Reset mid-epoch starts a new epoch from the source's state: the same
	// as a fresh Batches whose source has drawn the same permutations.
	b := NewBatches(s, 5, newRNG(9))
	collect(t, b, 2)
	b.Reset()
	got, _ := collect(t, b, 4)
	if b.Epoch() != 2 {
		t.Errorf("Epoch() = %d after Reset and a full epoch, want 2", b.Epoch())
	}
	ref := NewBatches(s, 5, newRNG(9))
	collect(t, ref, 4)
	want, _ := collect(t, ref, 4)
	if !sameOrder(got, want) {
		t.Errorf("after Reset: %v, want the second epoch %v", got, want)
	}
	seen := map[int]bool{}
	for _, bt := range got {
		for _, i := range bt {
			seen[i] = true
		}
	}
	if len(seen) != 20 {
		t.Errorf("the epoch after Reset covers %d images, want 20", len(seen))
	}
	// Reset on a fresh Batches changes nothing.
	c := NewBatches(s, 5, newRNG(9))
	c.Reset()
	first, _ := collect(t, c, 4)
	ref = NewBatches(s, 5, newRNG(9))
	refFirst, _ := collect(t, ref, 4)
	if !sameOrder(first, refFirst) {
		t.Error("Reset before the first batch changed the batches")
	}
}

func TestBatchesErrors(t *testing.T) {
	s := tinySet(1, 2, 3, 4)
	b := NewBatches(s, 2, newRNG(1))
	for _, tc := range []struct {
		x []float64
		y []int
	}{
		{make([]float64, 2*Dim-1), make([]int, 2)},
		{make([]float64, 2*Dim), make([]int, 3)},
		{nil, nil},
	} {
		if err := b.Next(tc.x, tc.y); err == nil {
			t.Errorf("Next with %d inputs and %d labels: no error", len(tc.x), len(tc.y))
		}
	}
	for _, batch := range []int{0, -1, 5} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewBatches(batch %d) of 4 images did not panic", batch)
				}
			}()
			NewBatches(s, batch, newRNG(1))
		}()
	}
}

func TestRealBatches(t *testing.T) {
	train, _ := realData(t)
	sub := train.Subset(0, 1, 2, 3, 4)
	b := NewBatches(sub, 500, newRNG(1))
	if b.PerEpoch() != 61 { // 30596 = 61×500 + 96
		t.Errorf("PerEpoch = %d, want 61", b.PerEpoch())
	}
	x := make([]float64, 500*Dim)
	y := make([]int, 500)
	if err := b.Next(x, y); err != nil {
		t.Fatal(err)
	}
	for _, l := range y {
		if l < 0 || l > 4 {
			t.Fatalf("label %d outside 0..4", l)
		}
	}
	if NewBatches(train, 500, newRNG(1)).PerEpoch() != 120 {
		t.Error("60000 training images do not make 120 batches of 500")
	}
}
