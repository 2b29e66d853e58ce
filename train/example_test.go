package train_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/gaussian"
	"github.com/metasgmcmc/metasgmcmc/train"
)

// Meta-training NNSGHMC on a 2-D Gaussian: 50 chains start far from the
// target, the sampler sees noisy gradients, and the cross-chain loss
// (KL(q_t‖π) up to a constant, its entropy from the Stein estimator) is
// back-propagated through the unrolled steps into the weights of f_Q and f_D.
// The trained sampler is Trained(); cmd/train does the same for the
// catalogue's tasks and writes it to sampler.json.
func Example() {
	const chains = 50
	target, err := gaussian.New([]float64{0, 0}, mat.NewSymDense(2, []float64{1, 0.5, 0.5, 2}))
	if err != nil {
		panic(err)
	}
	exact, err := tasks.Compile(target, chains, graph.Float64)
	if err != nil {
		panic(err)
	}
	prob := train.Problem{
		Target:     tasks.GradientNoise{Target: exact, Sigma: 0.5},
		LossTarget: exact,
		Init: func(rng *rand.Rand, k int) []float64 {
			x := make([]float64, 2*k)
			for i := range x {
				x[i] = 3 + 0.1*rng.NormFloat64()
			}
			return x
		},
	}
	adam := train.AdamConfig{LR: 1e-2, Beta1: 0.5, Beta2: 0.9, Eps: 1e-8}
	cfg := train.Config{
		Chains: chains, Epochs: 20, SubEpochs: 1, Steps: 30, Window: 10,
		Cross: &train.CrossChain{Every: 3, Lambda: 0.05, Weight: 1},
		QAdam: adam, DAdam: adam, MomentumSD: 1,
	}
	start := nnsghmc.RandomTrained([]int{10}, []int{10}, nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 1}, 1, rand.New(rand.NewPCG(1, 2)))
	settings := nnsghmc.Settings{StepSize: samplers.Constant(0.1), Alpha: 1, C: 1, ClampQ: 5, DMax: 10, Gamma: nnsghmc.GammaExact}

	tr, err := train.New(cfg, prob, start, settings, 42)
	if err != nil {
		panic(err)
	}
	if err := tr.Run(context.Background(), nil, nil); err != nil {
		panic(err)
	}
	rows := tr.Rows()
	fmt.Printf("%d epochs, %d Adam steps of the %s loss\n", tr.Epochs(), len(rows), rows[0].Loss)
	// The chains' mean energy at the loss's times in the second unroll of
	// the first and the last epoch (at the target it is
	// 1 + ½·log(2π·det Σ) ≈ 2.20).
	fmt.Printf("first epoch: %.2f\n", rows[1].Energy)
	fmt.Printf("last epoch:  %.2f\n", rows[len(rows)-1].Energy)
	// Output:
	// 20 epochs, 40 Adam steps of the cross-chain loss
	// first epoch: 2.77
	// last epoch:  2.05
}
