package samplers

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// A saved order continues exactly where it stopped, and every epoch visits
// each batch-sized part of a permutation once.
func TestBatchesSaveAndContinue(t *testing.T) {
	a, err := NewBatches(10, 3)
	if err != nil {
		t.Fatal(err)
	}
	src := rand.NewPCG(1, 2)
	rng := rand.New(src)
	seen := map[int]bool{}
	for range a.PerEpoch() {
		for _, i := range a.Next(rng) {
			if seen[i] {
				t.Fatalf("item %d twice in an epoch", i)
			}
			seen[i] = true
		}
	}
	a.Next(rng) // starts epoch 2
	saved, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewBatches(10, 3)
	if err := b.UnmarshalJSON(saved); err != nil {
		t.Fatal(err)
	}
	twinSrc := *src // the random source where the original stopped
	twin := rand.New(&twinSrc)
	for range 7 {
		x, y := a.Next(rng), b.Next(twin)
		if !slices.Equal(x, y) {
			t.Fatalf("restored order gives %v, the original %v", y, x)
		}
	}
	if a.Epoch() != b.Epoch() || a.Epoch() != 4 {
		t.Errorf("epochs %d and %d, want 4", a.Epoch(), b.Epoch())
	}
}

func TestBatchesRejectsAForeignOrder(t *testing.T) {
	for _, tc := range []struct{ saved, want string }{
		{`{"perm":[0,1,2],"pos":0,"size":1,"epoch":1}`, "want batches of 1 from 4"},
		{`{"perm":[0,1,1,3],"pos":0,"size":1,"epoch":1}`, "not a permutation"},
		{`{"perm":[0,1,2,3],"pos":5,"size":1,"epoch":1}`, "at 5"},
		{`{"perm":[0,1,2,3],"pos":-1,"size":1,"epoch":1}`, "at -1"},
		{`{"perm":[0,1,2,3],"pos":1,"size":1,"epoch":-2}`, "in epoch -2"},
	} {
		b, _ := NewBatches(4, 1)
		if err := b.UnmarshalJSON([]byte(tc.saved)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one with %q", tc.saved, err, tc.want)
		}
	}
	if _, err := NewBatches(3, 4); err == nil {
		t.Error("batches larger than the data: no error")
	}
}

// An order that keeps the last batch ends every epoch with the items left
// over, visits every item once an epoch, and saves and restores as such; an
// order that drops them refuses its saved state, and the other way round.
func TestBatchesKeepLast(t *testing.T) {
	a, err := NewBatchesKeepLast(10, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	if a.PerEpoch() != 4 || !a.KeepsLast() {
		t.Fatalf("%d batches an epoch (keeps the last: %v), want 4", a.PerEpoch(), a.KeepsLast())
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for epoch := 1; epoch <= 2; epoch++ {
		seen := map[int]bool{}
		for j, want := range []int{3, 3, 3, 1} {
			idx := a.Next(rng)
			if len(idx) != want || a.Epoch() != epoch {
				t.Fatalf("epoch %d, batch %d: %d items in epoch %d, want %d", epoch, j, len(idx), a.Epoch(), want)
			}
			for _, i := range idx {
				if seen[i] {
					t.Fatalf("item %d twice in an epoch", i)
				}
				seen[i] = true
			}
		}
	}
	saved, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewBatchesKeepLast(10, 3, true)
	if err := b.UnmarshalJSON(saved); err != nil {
		t.Fatal(err)
	}
	if drop, _ := NewBatches(10, 3); drop.UnmarshalJSON(saved) == nil {
		t.Error("an order that drops the last batch accepted one that keeps it")
	}
	dropped, _ := json.Marshal(func() *Batches { d, _ := NewBatches(10, 3); d.Next(rng); return d }())
	if b.UnmarshalJSON(dropped) == nil {
		t.Error("an order that keeps the last batch accepted one that drops it")
	}
	// an order of a multiple of the batch size has no short batch
	c, _ := NewBatchesKeepLast(9, 3, true)
	for range 4 {
		if n := len(c.Next(rng)); n != 3 {
			t.Fatalf("a batch of %d from 9 items in batches of 3", n)
		}
	}
	if c.Epoch() != 2 {
		t.Errorf("epoch %d after 4 batches of 3 from 9 items, want 2", c.Epoch())
	}
}

func TestBatchCount(t *testing.T) {
	for _, tc := range []struct {
		n, size  int
		keepLast bool
		want     int
	}{
		{10, 5, false, 2}, {10, 5, true, 2},
		{11, 5, false, 2}, {11, 5, true, 3},
		{30596, 500, false, 61}, {30596, 500, true, 62},
		{4, 5, false, 0}, {4, 5, true, 1},
	} {
		if got := BatchCount(tc.n, tc.size, tc.keepLast); got != tc.want {
			t.Errorf("BatchCount(%d, %d, %v) = %d, want %d", tc.n, tc.size, tc.keepLast, got, tc.want)
		}
	}
}
