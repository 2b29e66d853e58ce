package tasks

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
