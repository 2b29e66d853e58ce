package gru_test

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/gru"
	"github.com/metasgmcmc/metasgmcmc/tasks/music"
)

// The energy of a Bayesian GRU for K chains on a training split, evaluated
// on the next training sequence, and the predictive of the chains on a test
// split. Real data come from music.Load(dir, "piano").
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	seq := func(T int) music.Sequence {
		roll := make([]uint8, T*music.Keys)
		for i := range roll {
			if rng.IntN(10) == 0 {
				roll[i] = 1
			}
		}
		return music.Sequence{T: T, Roll: roll}
	}
	train := music.Split{seq(30), seq(50)}
	test := music.Split{seq(20)}

	cfg := gru.Config{Hidden: 4, Chains: 2, Segment: 8}
	e, err := gru.NewEnergy(train, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	theta := make([]float64, e.Dim()*e.Chains()) // coordinate-major: θ_ik at i·K + k
	for i := range theta {
		theta[i] = 0.1 * rng.NormFloat64()
	}
	ev := samplers.NewEval(e.Dim(), e.Chains())
	if err := e.Evaluate(rng, theta, ev); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("D = %d, N = %v frames, energy finite: %v\n", e.Dim(), e.DataSize(), tasks.Finite(ev.U) && tasks.Finite(ev.Grad))

	m, err := gru.NewMonitor(cfg, test, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	m.Observe(1, theta)
	metrics, err := m.Metrics()
	if err != nil {
		log.Fatal(err)
	}
	for _, mt := range metrics {
		// near log 2 ≈ 0.69 nats per key, 88 keys, for near-zero weights
		fmt.Printf("%s ≈ 88·log 2: %v\n", mt.Name, math.Abs(mt.Value-88*math.Ln2) < 10)
	}
	// Output:
	// D = 1556, N = 80 frames, energy finite: true
	// test_nll ≈ 88·log 2: true
	// test_nll_chain ≈ 88·log 2: true
}
