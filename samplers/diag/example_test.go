package diag_test

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"

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
	ess, err := diag.ESSPooled(chain)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ESS = %.4f\n", ess)
	// Output:
	// ESS = 2.8912
}

func ExampleMeanESSPooled() {
	chains := []*mat.Dense{
		mat.NewDense(9, 1, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}), // ESS 45/17
		mat.NewDense(9, 1, []float64{2, 0, 2, 0, 2, 0, 2, 0, 1}), // ESS 9
	}
	ess, err := diag.MeanESSPooled(chains)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("mean ESS = %.4f\n", ess)
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

// Convergence diagnostics as Stan and ArviZ report them, on a run of four
// chains kept in the samplers' coordinate-major layout. Coordinate 0 mixes
// well in every chain; coordinate 1 is as well centred but twice as wide in
// chain 0, which split R̂ misses and the folded, rank-normalised R̂
// catches (R̂ > 1.01 is the warning sign), and whose tails, mostly drawn
// by chain 0, the tail-ESS shows to be poorly estimated.
func ExampleRankRhat() {
	const k, steps = 4, 1000
	rng := rand.New(rand.NewPCG(1, 2))
	// positions[t] is the state after step t: coordinate i of chain c at
	// i*k+c. Each chain is an AR(1) process with ρ = 0.5 in each
	// coordinate, so the ESS of the mean of kn draws is about kn/3.
	positions := make([][]float64, steps)
	x := make([]float64, 2*k)
	for t := range positions {
		for j := range x {
			x[j] = 0.5*x[j] + rng.NormFloat64()
		}
		positions[t] = append([]float64(nil), x...)
		positions[t][k] *= 2 // coordinate 1, chain 0
	}
	coords, err := diag.CoordinateChains(positions, k)
	if err != nil {
		log.Fatal(err)
	}
	for i, chains := range coords {
		split, _ := diag.SplitRhat(chains)
		rank, _ := diag.RankRhat(chains)
		ess, _ := diag.ESS(chains)
		bulk, _ := diag.BulkESS(chains)
		tail, err := diag.TailESS(chains)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("coordinate %d: split R̂ %.3f, rank R̂ %.3f; ESS %.0f, bulk-ESS %.0f, tail-ESS %.0f of %d draws\n",
			i, split, rank, ess, bulk, tail, k*steps)
	}
	// Output:
	// coordinate 0: split R̂ 1.003, rank R̂ 1.003; ESS 1472, bulk-ESS 1479, tail-ESS 2590 of 4000 draws
	// coordinate 1: split R̂ 1.001, rank R̂ 1.062; ESS 1312, bulk-ESS 1338, tail-ESS 97 of 4000 draws
}

// The summary of a run as ArviZ's az.summary prints it. The run loop
// appends the positions of its four chains, kept coordinate-major as the
// samplers keep them, once a step; coordinate 1 of chain 0 is twice as
// wide as the others, which the rank-normalised R̂ flags (above 1.01) and
// the tail-ESS shows.
func ExampleSummary() {
	const k, steps, d = 4, 1000, 2
	rng := rand.New(rand.NewPCG(1, 2))
	draws := diag.NewDraws(k, 0, d)
	draws.Grow(steps)
	theta := make([]float64, d*k) // coordinate i of chain c at i*k+c
	x := make([]float64, d*k)
	for range steps {
		for j := range x {
			x[j] = 0.5*x[j] + rng.NormFloat64() // AR(1), ρ = 0.5
		}
		copy(theta, x)
		theta[1*k+0] *= 2
		if err := draws.AppendCoordinateMajor(theta); err != nil {
			log.Fatal(err)
		}
	}
	rows, err := diag.Summary(draws)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d chains × %d draws:\n", k, steps)
	if err := diag.WriteSummary(os.Stdout, rows, []string{"mu", "tau"}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 4 chains × 1000 draws:
	//          mean     sd  hdi_3%  hdi_97%  eti_3%  eti_97%  mcse_mean  mcse_sd  ess_bulk  ess_tail  r_hat
	// mu    0.02393  1.139  -1.979    2.294  -2.073    2.203       0.03    0.015      1479      2590  1.003
	// tau  -0.03335  1.544  -2.823    2.932   -2.99    2.805      0.043     0.27      1338        97  1.062
}

// The kernel Stein discrepancy needs the target's score ∇ log π at each
// sample only. Exact draws of N(0, I) score low, and lower the more there
// are; draws of a Gaussian shifted by 0.5 in each coordinate, scored
// under N(0, I), do not.
func ExampleKSD() {
	rng := rand.New(rand.NewPCG(3, 4))
	sample := func(n int, shift float64) (x, score [][]float64) {
		for range n {
			xi := []float64{shift + rng.NormFloat64(), shift + rng.NormFloat64(), shift + rng.NormFloat64()}
			x = append(x, xi)
			score = append(score, []float64{-xi[0], -xi[1], -xi[2]}) // ∇ log N(x; 0, I)
		}
		return x, score
	}
	for _, n := range []int{100, 1000} {
		exact, err := diag.KSD(sample(n, 0))
		if err != nil {
			log.Fatal(err)
		}
		shifted, err := diag.KSD(sample(n, 0.5))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("n = %4d: KSD exact %.3f, shifted %.3f\n", n, exact, shifted)
	}
	// Output:
	// n =  100: KSD exact 0.280, shifted 0.702
	// n = 1000: KSD exact 0.075, shifted 0.592
}
