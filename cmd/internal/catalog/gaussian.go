package catalog

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/gaussian"
	"github.com/metasgmcmc/metasgmcmc/train"
)

func init() {
	register("gaussian10", "the paper's 10-D training Gaussian: mean 3, diagonal covariance with variances U[0,1) (or --target-cov FILE)", true,
		gaussianTask(true, toyTarget(10, func(o Options) (*gaussian.Gaussian, error) { return gaussian.Train10(o.TargetSeed), nil })))
	register("gaussian20", "the paper's 20-D test Gaussian: mean 3, Σ = LLᵀ with L = s·N(0,1) (or --target-cov FILE)", false,
		gaussianTask(false, toyTarget(20, func(o Options) (*gaussian.Gaussian, error) { return gaussian.NewTest20(o.TargetSeed, o.TargetScale) })))
	register("gaussian2d", "a correlated 2-D Gaussian (mean 0, unit variances, correlation 0.9) for trajectory pictures", false,
		gaussianTask(false, func(Options) (*gaussian.Gaussian, error) {
			return gaussian.New([]float64{0, 0}, mat.NewSymDense(2, []float64{1, 0.9, 0.9, 1}))
		}))
}

// toyTarget is a toy Gaussian of dimension d: the seeded one, or mean 3
// with the covariance in o.TargetCov.
func toyTarget(d int, seeded func(Options) (*gaussian.Gaussian, error)) func(Options) (*gaussian.Gaussian, error) {
	return func(o Options) (*gaussian.Gaussian, error) {
		if o.TargetCov == "" {
			g, err := seeded(o)
			if err != nil {
				return nil, fmt.Errorf("--target-scale %v: %w", o.TargetScale, err)
			}
			return g, nil
		}
		cov, err := gaussian.ReadCov(o.TargetCov)
		if err != nil {
			return nil, err
		}
		if n := cov.SymmetricDim(); n != d {
			return nil, fmt.Errorf("--target-cov %s is %d×%d; this task's target is %d-D", o.TargetCov, n, n, d)
		}
		return gaussian.Toy(cov)
	}
}

// toyNN are the authors' settings for the toy: raw energy and gradient
// inputs, no α·Q² term, no offset, f_Q clamped to ±5 and D_f to [0, 5],
// networks with two hidden layers of 40 units (the paper says one; the code
// has two).
var toyNN = nnkernel.Settings{ClampQ: 5, DMax: 5, DScale: 1, EnergyScale: 1, GradScale: 1, MomentumScale: 1}

// toySettings are nnsghmc.ToySettings but the step size, which the
// command sets.
func toySettings() nnsghmc.Settings {
	s := nnsghmc.ToySettings()
	s.StepSize = nil
	return s
}

// toyInputs are the toy networks' input scalings: the raw energy,
// momentum and gradient.
var toyInputs = nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 1}

// gaussianTask is a Gaussian task; only the paper's training target has the
// toy's meta-training set-up.
func gaussianTask(trainable bool, target func(Options) (*gaussian.Gaussian, error)) func(Options) (*Task, error) {
	return func(o Options) (*Task, error) {
		if !(o.TargetScale > 0) || math.IsInf(o.TargetScale, 0) {
			return nil, fmt.Errorf("--target-scale must be a positive number, got %v", o.TargetScale)
		}
		g, err := target(o)
		if err != nil {
			return nil, err
		}
		d := g.Dim()
		var tr *Training
		if trainable {
			tr = toyTraining()
		}
		return &Task{
			Dim:       d,
			Energy:    g,
			NewTarget: compiled(g, o.Dtype, true),
			NewLossTarget: func(k int) (samplers.Target, error) {
				return tasks.Compile(g, k, o.Dtype)
			},
			// the authors start toy chains uniformly in [0, 6]^D
			Init: func(rng *rand.Rand, k int) []float64 {
				x := make([]float64, d*k)
				for i := range x {
					x[i] = 6 * rng.Float64()
				}
				if d == 2 {
					for i := range x {
						x[i] -= 3
					}
				}
				return x
			},
			NewMonitor: func(k int) (tasks.Monitor, error) { return g.NewMonitor(k), nil },
			Score:      g.Score,
			Defaults: Defaults{
				Chains: 50, Steps: 12000, EvalEvery: 100,
				StepSize: sameStep(0.025), Friction: 1, Noise: 1, DataSize: 1,
				NN: toySettings(), NNInputs: toyInputs, NNDScale: 1, QHidden: []int{40, 40}, DHidden: []int{40, 40},
			},
			Training:       tr,
			keepsPositions: true,
		}, nil
	}
}

// toyTraining is the authors' toy meta-training (Toy Example/
// Sampler_Training.py; appendix D.1): 50 chains, η = 0.01, 100 epochs of
// 1 + 3 unrolls of 100 steps, truncation every 20 steps, one Adam
// (lr 5e-4, betas 0.5, 0.99) stepped on the cross-chain loss (every 2 steps)
// and then on the in-chain loss (burn-in 50, thinning 3, chains s, s+r, …
// with s ∈ 0..9, r ∈ 5..9), Stein λ = 0.03; θ_0 ~ 6·U[0,1)^D, p_0 ~ N(0, I);
// the dynamics see gradient noise σ = 1, the losses the exact gradient.
func toyTraining() *Training {
	adam := train.AdamConfig{LR: 5e-4, Beta1: 0.5, Beta2: 0.99, Eps: 1e-8}
	return &Training{
		Config: train.Config{
			Chains: 50, Epochs: 100, SubEpochs: 3, Steps: 100, Window: 20,
			Cross:   &train.CrossChain{Every: 2, Lambda: 0.03, Weight: 1},
			InChain: &train.InChain{Burn: 50, Thin: 3, FirstChain: [2]int{0, 9}, Stride: [2]int{5, 9}, Lambda: 0.03, Weight: 1},
			QAdam:   adam, DAdam: adam, MomentumSD: 1,
		},
		StepSize: 0.01, NN: toyNN, QHidden: []int{40, 40}, DHidden: []int{40, 40},
		Validation: toyValidation(),
	}
}

// toyValidation is the toy set-up's validation protocol: the test task
// (gaussian20, 50 chains, η = 0.025, gradient noise σ = 1) for 12,000
// steps, the evaluations' length, with run seed 1 on three of our seeded
// 20-D Gaussians at both of the test family's scales, 0.5 and 0.6, every
// 5 epochs. Each run is scored against the toy's bars, KL ≤ 0.03 and
// ESS ≥ 50 after the last step, by the larger of KL/0.03 and 50/ESS, and
// the sampler by its worst run: a score of at most 1 meets every bar on
// every target.
//
// The targets are seeds 11 and 16, of the four from 6 on whose
// covariance's smallest eigenvalue at scale 0.6 lies in the range of the
// authors' four test covariances' (11, 13, 16, 17; it uses none of the
// authors'): on these four at scale 0.5, 11 had the largest KL in most
// validations of three trainings and 16 the largest late in the one that
// overshot, and at scale 0.6 16 had the smallest ESS for every training
// seed. The two bars pull apart: a sampler that mixes faster (larger f_Q)
// carries more discretisation bias. The bias grows with η (measured:
// halving η, over twice the steps, took one sampler's excess KL on target
// 16 from 0.016 to 0.003), so it shows most at scale 0.5, where the same
// η is the larger step relative to the target's widths, and only once the
// Monte-Carlo part of the KL has fallen below it (after 3,000 steps that
// part, about 0.045, hid a sampler whose KL at 12,000 steps was 2.4 times
// another's there); ESS is smallest at scale 0.6.
//
// The bias is largest on the stiffest direction, the ESS smallest on the
// widest, and the training target (covariance eigenvalues 0.177 to 0.903)
// has neither as extreme as the test family (0.0141 to 25.5 on the
// authors' four). Target 23 is the first seeded target from 11 on whose
// smallest eigenvalue at scale 0.5 comes within 10 % of the stiffest of
// the authors' four (0.0155 against 0.0141), and at scale 0.6 its largest,
// 26.8, exceeds the widest's (25.5), where 11's and 16's are 24.1 and
// 24.6: it sees a bias and a slow direction that 11 and 16 miss.
func toyValidation() *Validation {
	v := &Validation{Task: "gaussian20", Seeds: []uint64{1}, Chains: 50, Steps: 12000, Every: 5, Worst: true,
		Bars: []Bar{{Metric: "kl", Bound: 0.03}, {Metric: "ess", Bound: 50, AtLeast: true}}}
	for _, scale := range []float64{0.5, 0.6} {
		for _, seed := range []uint64{11, 16, 23} {
			v.Targets = append(v.Targets, ValidationTarget{Name: fmt.Sprintf("target-seed-%d-scale-%g", seed, scale),
				Options: Options{TargetSeed: seed, TargetScale: scale}})
		}
	}
	return v
}
