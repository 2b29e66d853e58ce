package train_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/diag"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/train"
)

// linReg is a user's Bayesian linear regression, y = X·w + ε with
// ε ~ N(0, 1) and w ~ N(0, 10·I), on n synthetic data in d dimensions: a
// model of the user's own, whose posterior N(μ, Σ) is known exactly.
type linReg struct {
	x    *mat.Dense
	y    []float64
	mean []float64 // the exact posterior mean μ
	sd   []float64 // and the posterior sd of each weight
}

func newLinReg(d, n int, seed uint64) *linReg {
	rng := rand.New(rand.NewPCG(seed, 7))
	m := &linReg{x: mat.NewDense(n, d, nil), y: make([]float64, n)}
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			m.x.Set(i, j, rng.NormFloat64())
			m.y[i] += m.x.At(i, j) * float64(j%3-1)
		}
		m.y[i] += rng.NormFloat64()
	}
	var prec mat.SymDense // XᵀX + I/10
	prec.SymOuterK(1, m.x.T())
	for j := 0; j < d; j++ {
		prec.SetSym(j, j, prec.At(j, j)+0.1)
	}
	var ch mat.Cholesky
	ch.Factorize(&prec)
	var cov mat.SymDense
	ch.InverseTo(&cov)
	var xty, mu mat.VecDense
	xty.MulVec(m.x.T(), mat.NewVecDense(n, m.y))
	mu.MulVec(&cov, &xty)
	for j := 0; j < d; j++ {
		m.mean, m.sd = append(m.mean, mu.AtVec(j)), append(m.sd, math.Sqrt(cov.At(j, j)))
	}
	return m
}

func (m *linReg) posterior() samplers.Posterior {
	_, d := m.x.Dims()
	return samplers.Posterior{
		Dim: d, Data: len(m.y),
		LogPrior: func(w, grad []float64) (lp float64) {
			for j, v := range w {
				lp, grad[j] = lp-v*v/20, grad[j]-v/10
			}
			return lp
		},
		LogLik: func(w []float64, batch []int, grad []float64) (ll float64) {
			for _, i := range batch {
				r := m.y[i] - mat.Dot(m.x.RowView(i), mat.NewVecDense(len(w), w))
				ll -= r * r / 2
				for j := range w {
					grad[j] += r * m.x.At(i, j)
				}
			}
			return ll
		},
	}
}

// Meta-training NNSGHMC on a small model of one's own, a 3-D Bayesian
// linear regression on 200 data in minibatches of 20, and running the
// trained sampler on a larger one, 10-D on 1,000 data: the paper's idea,
// that a sampler learned on a small problem carries over to a larger one,
// on a model that is not the paper's. The exact posterior of the larger
// model is known: the run's posterior means are compared with it, in
// posterior standard deviations.
func Example_ownModel() {
	small := newLinReg(3, 200, 1)
	target, err := samplers.NewTarget(small.posterior(), samplers.TargetSettings{Chains: 20, Batch: 20})
	if err != nil {
		panic(err)
	}
	prob := train.Problem{Target: target, Init: func(rng *rand.Rand, k int) []float64 {
		x := make([]float64, 3*k)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}}
	adam := train.AdamConfig{LR: 3e-3, Beta1: 0.5, Beta2: 0.9, Eps: 1e-8}
	cfg := train.Config{Chains: 20, Epochs: 10, SubEpochs: 3, Steps: 50, Window: 10,
		Cross: &train.CrossChain{Every: 5, Lambda: 0.05, Weight: 1}, QAdam: adam, DAdam: adam}
	// u = Ũ/N, p and ∇Ũ/N as the networks' inputs, as the paper's data tasks
	start := nnsghmc.RandomTrained([]int{10}, []int{10}, nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 1}, 1, rand.New(rand.NewPCG(1, 2)))
	settings := nnsghmc.Settings{StepSize: samplers.Constant(0.02), C: 1, ClampQ: 2, DMax: 50, Gamma: nnsghmc.GammaExact}
	tr, err := train.New(cfg, prob, start, settings, 3)
	if err != nil {
		panic(err)
	}
	if err := tr.Run(context.Background(), nil, nil); err != nil {
		panic(err)
	}
	trained := tr.Trained() // trained.Encode writes it as a trained-sampler file

	large := newLinReg(10, 1000, 2)
	big, err := samplers.NewTarget(large.posterior(), samplers.TargetSettings{Chains: 4, Batch: 20})
	if err != nil {
		panic(err)
	}
	// its step size for the larger model: the KSD of pilot runs (quietly:
	// the pilots at large η stray outside what it was trained on)
	settings.Warn = func(string) {}
	nn := func(eta float64) (samplers.Kernel, error) {
		s := settings
		s.StepSize = samplers.Constant(eta)
		return nnsghmc.New(big, trained, s)
	}
	post, theta0 := large.posterior(), make([]float64, 10*4)
	tuned, err := samplers.TuneStepSize(context.Background(), big, nn, theta0, func(w, g []float64) { post.LogDensity(w, g) }, samplers.DefaultTuneSettings(0.01))
	if err != nil {
		panic(err)
	}
	kernel, err := nn(tuned.StepSize)
	if err != nil {
		panic(err)
	}
	draws, err := samplers.Sample(context.Background(), kernel, theta0, 10000, 2000, 1)
	if err != nil {
		panic(err)
	}
	rows, err := diag.Summary(draws)
	if err != nil {
		panic(err)
	}
	worst := 0.0
	for j, r := range rows {
		worst = math.Max(worst, math.Abs(r.Mean-large.mean[j])/large.sd[j])
	}
	fmt.Printf("trained %d epochs on the 3-D model; on the 10-D one, at η = %.3g, the posterior means are within %.1f posterior sd of the exact ones\n", tr.Epochs(), tuned.StepSize, worst)
	// Output:
	// trained 10 epochs on the 3-D model; on the 10-D one, at η = 0.01, the posterior means are within 0.1 posterior sd of the exact ones
}
