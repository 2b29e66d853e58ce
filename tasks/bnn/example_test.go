package bnn_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/bnn"
)

// A Bayesian 4-8-3 ReLU classifier on a small synthetic data set: the
// energy of K = 5 chains compiled with its gradient, evaluated on shuffled
// minibatches of 10, and the ensemble predictive of the chains. With MNIST,
// the data set is bnn.MNIST(train) and the network, for example, bnn.NTTest.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, inputs, classes = 40, 4, 3
	x := make([]float64, n*inputs)
	y := make([]int, n)
	for i := range y {
		y[i] = i % classes
		for j := 0; j < inputs; j++ {
			x[i*inputs+j] = rng.NormFloat64()
		}
		x[i*inputs+y[i]] += 3 // separable enough to learn
	}
	data, err := bnn.NewMatrix(x, y, inputs, classes)
	if err != nil {
		log.Fatal(err)
	}
	net := bnn.MLP{Sizes: []int{inputs, 8, classes}, Activation: bnn.ReLU}
	energy, err := bnn.New(net, data, 10)
	if err != nil {
		log.Fatal(err)
	}
	const k = 5
	target, err := tasks.Compile(energy, k, graph.Float64)
	if err != nil {
		log.Fatal(err)
	}
	defer target.Close()

	theta := net.Init(rng, k, 0.1) // coordinate-major: coordinate i of chain c at i*k + c
	eval := samplers.NewEval(net.Dim(), k)
	for step := 0; step < 300; step++ { // plain gradient descent on Ũ/N
		if err := target.Evaluate(rng, theta, eval); err != nil {
			log.Fatal(err)
		}
		for i := range theta {
			theta[i] -= 0.05 * eval.Grad[i] / n
		}
	}
	pred, err := bnn.Predict(net, theta, k, data)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("D = %d, %d chains, %d batches per epoch\n", net.Dim(), k, target.Batches().PerEpoch())
	fmt.Println("training error below 10%:", pred.Error < 0.1)
	// Output:
	// D = 67, 5 chains, 4 batches per epoch
	// training error below 10%: true
}
