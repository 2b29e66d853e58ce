package diag_test

import (
	"fmt"
	"log"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/samplers/diag"
)

// The paper's toy bias measure: stream every sample of every chain from steps
// [0, t) into one fit and compare it with the target Gaussian.
func ExampleGaussianFit() {
	// samples[c][s] is the state of chain c after step s.
	samples := [][][]float64{
		{{1, 2}, {3, 6}},
		{{2, 1}, {2, 3}},
	}
	var fit diag.GaussianFit
	for _, chain := range samples {
		for _, x := range chain {
			if err := fit.Add(x); err != nil {
				log.Fatal(err)
			}
		}
	}
	fmt.Println("n:", fit.N())
	fmt.Println("mean:", fit.Mean())
	fmt.Printf("cov:\n%.4f\n", mat.Formatted(fit.Cov()))

	targetMean := []float64{0, 0}
	targetCov := mat.NewSymDense(2, []float64{1, 0, 0, 1})
	kl, err := fit.KL(targetMean, targetCov)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("KL: %.4f\n", kl)
	// Output:
	// n: 4
	// mean: [2 3]
	// cov:
	// ⎡0.6667  1.3333⎤
	// ⎣1.3333  4.6667⎦
	// KL: 8.0228
}

func ExampleKLGaussian() {
	meanHat := []float64{1, 1}
	covHat := mat.NewSymDense(2, []float64{1, 0, 0, 1})
	mean := []float64{0, 0}
	cov := mat.NewSymDense(2, []float64{2, 1, 1, 2})
	kl, err := diag.KLGaussian(meanHat, covHat, mean, cov)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("KL = %.6f (½ log 3 = %.6f)\n", kl, 0.5*math.Log(3))

	// A covariance that is not positive definite is reported as an error.
	_, err = diag.KLGaussian(meanHat, mat.NewSymDense(2, []float64{1, 2, 2, 1}), mean, cov)
	fmt.Println(err)
	// Output:
	// KL = 0.549306 (½ log 3 = 0.549306)
	// diag: KLGaussian: covHat: covariance is not positive definite
}

func ExampleESSPooled() {
	// One chain of T = 9 steps in d = 2 dimensions (rows are steps).
	chain := mat.NewDense(9, 2, []float64{
		1, 2,
		2, 0,
		3, 2,
		4, 0,
		5, 2,
		6, 0,
		7, 2,
		8, 0,
		9, 1,
	})
	fmt.Printf("ESS = %.4f\n", diag.ESSPooled(chain))
	// Output:
	// ESS = 2.8912
}

func ExampleMeanESSPooled() {
	chains := []*mat.Dense{
		mat.NewDense(9, 1, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}), // ESS 45/17
		mat.NewDense(9, 1, []float64{2, 0, 2, 0, 2, 0, 2, 0, 1}), // ESS 9
	}
	fmt.Printf("mean ESS = %.4f\n", diag.MeanESSPooled(chains))
	// Output:
	// mean ESS = 5.8235
}

func ExampleESS() {
	// chains[c] is the trajectory of one coordinate in chain c.
	chains := [][]float64{
		{0, 0, 3, 3, 2, 4, 3, 1},
		{3, 4, 4, 2, 3, 3, 3, 2},
	}
	ess, err := diag.ESS(chains)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ESS = %.4f of %d draws\n", ess, 16)
	// Output:
	// ESS = 7.3443 of 16 draws
}

func ExampleSplitRhat() {
	chains := [][]float64{
		{1, 2, 3, 4},
		{2, 4, 0, 2},
	}
	rhat, err := diag.SplitRhat(chains)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("split R̂ = %.4f\n", rhat)
	// Output:
	// split R̂ = 1.2780
}

// A sampler test in the style of BlackJAX: the posterior-mean estimate must
// lie within 2.33 Monte Carlo standard errors of the truth.
func ExampleMCSE() {
	chains := [][]float64{
		{0, 0, 3, 3, 2, 4, 3, 1},
		{3, 4, 4, 2, 3, 3, 3, 2},
	}
	const truth = 2.4
	mcse, err := diag.MCSE(chains)
	if err != nil {
		log.Fatal(err)
	}
	var sum float64
	for _, c := range chains {
		for _, v := range c {
			sum += v
		}
	}
	estimate := sum / 16
	z := math.Abs(estimate-truth) / mcse
	fmt.Printf("estimate %.2f, MCSE %.4f, z %.2f, pass %t\n", estimate, mcse, z, z < 2.33)
	// Output:
	// estimate 2.50, MCSE 0.4668, z 0.21, pass true
}
