package mnist_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
	"github.com/metasgmcmc/metasgmcmc/tasks/mnist"
)

// Loading the data for the Data-generalisation experiment: the sampler is
// meta-trained on digits 0–4 and tested on digits 5–9, both relabelled 0..4,
// in shuffled batches of 500.
func Example() {
	train, test, err := mnist.Load(datadir.Dir("")) // $METASGMCMC_DATA/mnist/*.gz
	if err != nil {
		log.Fatal(err) // names a missing file and where to get it
	}
	metaTrain := train.Subset(0, 1, 2, 3, 4) // 30596 images
	target := train.Subset(5, 6, 7, 8, 9)    // 29404 images, 5 → 0 … 9 → 4
	eval := test.Subset(5, 6, 7, 8, 9)       // 4861 images

	batches := mnist.NewBatches(target, 500, rand.New(rand.NewPCG(1, 2)))
	x := make([]float64, 500*mnist.Dim)
	y := make([]int, 500)
	for range batches.PerEpoch() {
		if err := batches.Next(x, y); err != nil {
			log.Fatal(err)
		}
		// ... one SG-MCMC step on the minibatch (x, y) ...
	}
	fmt.Println(metaTrain.N, target.N, eval.N, len(eval.Features()))
}

// Batches of a small set: every image once per epoch, in a new order each
// epoch, the remainder (here 1 image) dropped.
func ExampleNewBatches() {
	set := &mnist.Set{N: 7, Classes: 10, Labels: []int{0, 1, 2, 3, 4, 5, 6}, Pixels: make([]byte, 7*mnist.Dim)}
	b := mnist.NewBatches(set, 3, rand.New(rand.NewPCG(1, 2)))
	x := make([]float64, 3*mnist.Dim)
	y := make([]int, 3)
	for range 2 {
		seen := map[int]bool{}
		for range b.PerEpoch() {
			if err := b.Next(x, y); err != nil {
				log.Fatal(err)
			}
			for _, l := range y {
				seen[l] = true
			}
		}
		fmt.Printf("epoch %d: %d batches of %d, %d distinct images\n", b.Epoch(), b.PerEpoch(), b.Size(), len(seen))
	}
	// Output:
	// epoch 1: 2 batches of 3, 6 distinct images
	// epoch 2: 2 batches of 3, 6 distinct images
}

// Relabelling a subset: the digits keep the order given.
func ExampleSet_Subset() {
	set := &mnist.Set{N: 6, Classes: 10, Labels: []int{5, 0, 9, 4, 7, 5}, Pixels: make([]byte, 6*mnist.Dim)}
	sub := set.Subset(5, 6, 7, 8, 9)
	fmt.Println(sub.N, sub.Labels, sub.Classes, sub.Digits)
	// Output: 4 [0 4 2 0] 5 [5 6 7 8 9]
}
