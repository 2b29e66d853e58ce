// Command logreg is the "own model" check of the sampler library: a user's
// Bayesian logistic regression (synthetic, N = 400 data, D = 3 weights,
// minibatches of 40) sampled with SGHMC and with the committed toy
// NNSGHMC (experiments/gaussian/sampler.json), their step sizes tuned by
// the kernel Stein discrepancy of pilot runs (samplers.TuneStepSize), each
// compared with a long full-batch, Metropolis-adjusted reference (MALA);
// and the same NNSGHMC at the step size of its file, which runs outside
// its training domain.
//
//	go run ./experiments/logreg [-meta experiments/gaussian/sampler.json] [-seed 1]
//
// It prints a Markdown table (experiments/logreg/README.md holds one).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/diag"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// The model and the runs.
const (
	n, dim = 400, 3 // data, weights
	batch  = 40
	chains = 8
	prior  = 10.0 // the prior sd of each weight
)

// logReg is a Bayesian logistic regression: y_i ~ Bernoulli(σ(x_i·w)),
// w ~ N(0, prior²·I).
type logReg struct {
	x [][]float64
	y []float64
}

// synthetic draws N data with correlated features (the posterior has a
// long direction) from seed.
func synthetic(seed uint64) logReg {
	rng := rand.New(rand.NewPCG(seed, 0x6c72))
	w := []float64{1, -2, 0.5}
	var m logReg
	for i := 0; i < n; i++ {
		z := rng.NormFloat64()
		x := []float64{1, z, 0.9*z + math.Sqrt(1-0.81)*rng.NormFloat64()}
		p := 1 / (1 + math.Exp(-dot(w, x)))
		y := 0.0
		if rng.Float64() < p {
			y = 1
		}
		m.x, m.y = append(m.x, x), append(m.y, y)
	}
	return m
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func (m logReg) logPrior(w, grad []float64) float64 {
	lp := 0.0
	for i, v := range w {
		lp -= v * v / (2 * prior * prior)
		grad[i] -= v / (prior * prior)
	}
	return lp
}

func (m logReg) logLik(w []float64, idx []int, grad []float64) float64 {
	ll := 0.0
	for _, i := range idx {
		a := dot(w, m.x[i])
		// log σ(a) = −log(1 + e^{−a}), log(1 − σ(a)) = −log(1 + e^{a})
		ll += m.y[i]*-math.Log1p(math.Exp(-a)) + (1-m.y[i])*-math.Log1p(math.Exp(a))
		r := m.y[i] - 1/(1+math.Exp(-a))
		for j, xj := range m.x[i] {
			grad[j] += r * xj
		}
	}
	return ll
}

func main() {
	meta := flag.String("meta", "experiments/gaussian/sampler.json", "the trained NNSGHMC")
	seed := flag.Uint64("seed", 1, "seed of the data and of the runs")
	steps := flag.Int("steps", 20000, "steps of each run")
	flag.Parse()
	if err := run(*meta, *seed, *steps); err != nil {
		fmt.Fprintln(os.Stderr, "logreg:", err)
		os.Exit(1)
	}
}

// result is a run's posterior mean, its Monte-Carlo standard error and
// KSD.
type result struct {
	name     string
	eta      float64
	mean, se []float64
	ksd      float64
	warnings []string
}

func run(meta string, seed uint64, steps int) error {
	ctx := context.Background()
	m := synthetic(seed)
	post := samplers.Posterior{Dim: dim, Data: n, LogPrior: m.logPrior, LogLik: m.logLik}
	score := func(w, g []float64) { post.LogDensity(w, g) }
	ref, err := mala(post, seed, 10*steps)
	if err != nil {
		return err
	}
	target, err := samplers.NewTarget(post, samplers.TargetSettings{Chains: chains, Batch: batch, NoiseEstimate: true})
	if err != nil {
		return err
	}
	trained, err := nnsghmc.Load(meta)
	if err != nil {
		return err
	}
	theta0 := make([]float64, dim*chains)
	var warnings []string
	warn := func(msg string) { warnings = append(warnings, msg) }
	sghmc := func(eta float64) (samplers.Kernel, error) {
		s := samplers.DefaultSGHMCSettings()
		s.StepSize, s.Warn = samplers.Constant(eta), warn
		return samplers.NewSGHMC(target, s)
	}
	nn := func(eta float64) (samplers.Kernel, error) {
		s := nnsghmc.ToySettings()
		s.StepSize, s.Warn = samplers.Constant(eta), warn
		return nnsghmc.New(target, trained, s)
	}
	fileEta := trained.Domain.StepSize.Max
	var results []result
	for _, r := range []struct {
		name    string
		kernel  func(float64) (samplers.Kernel, error)
		eta     float64
		tune    bool
		trained bool
	}{
		{"SGHMC, tuned", sghmc, 0.01, true, false},
		{"NNSGHMC, tuned", nn, fileEta, true, true},
		{"NNSGHMC at its file's η", nn, fileEta, false, true},
	} {
		eta := r.eta
		warnings = nil
		if r.tune {
			t, err := samplers.TuneStepSize(ctx, target, r.kernel, theta0, score, samplers.DefaultTuneSettings(r.eta))
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "%s: candidates %.3g, KSD %.3g: η = %.3g\n", r.name, t.StepSizes, t.KSD, t.StepSize)
			eta = t.StepSize
		}
		warnings = nil
		res, err := long(ctx, r.kernel, eta, theta0, steps, score, seed)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		res.name, res.warnings = r.name, warnings
		for _, w := range warnings {
			fmt.Fprintf(os.Stderr, "%s warned: %s\n", r.name, w)
		}
		results = append(results, res)
	}
	report(ref, results)
	return nil
}

// long runs kernel(eta) for steps steps, keeps the second half and
// returns its summary and KSD.
func long(ctx context.Context, kernel func(float64) (samplers.Kernel, error), eta float64, theta0 []float64, steps int,
	score func(w, g []float64), seed uint64) (result, error) {
	k, err := kernel(eta)
	if err != nil {
		return result{}, err
	}
	st, err := k.Init(theta0, nil)
	if err != nil {
		return result{}, err
	}
	c := &samplers.Collector{Burn: steps / 2}
	if err := samplers.Run(ctx, k, rand.New(rand.NewPCG(seed, 0x72756e)), st, steps, c.Hook); err != nil {
		return result{}, err
	}
	r := result{eta: eta}
	rows, err := diag.Summary(c.Draws())
	if err != nil {
		return r, err
	}
	for _, row := range rows {
		r.mean, r.se = append(r.mean, row.Mean), append(r.se, row.MCSEMean)
	}
	r.ksd, err = drawsKSD(c.Draws(), score)
	return r, err
}

// drawsKSD is the KSD of 500 draws thinned evenly from d.
func drawsKSD(d *diag.Draws, score func(w, g []float64)) (float64, error) {
	k, t, _ := d.Dims()
	thin := max(1, k*t/500)
	var x, s [][]float64
	for j := 0; j < k*t; j += thin {
		w := append([]float64(nil), d.Draw(j%k, j/k)...)
		g := make([]float64, len(w))
		score(w, g)
		x, s = append(x, w), append(s, g)
	}
	return diag.KSD(x, s)
}

// mala is the full-data reference: Metropolis-adjusted Langevin on the
// posterior, chains chains of steps steps from 0, the second half kept,
// its step size adapted in the first half toward an acceptance of 0.57.
func mala(post samplers.Posterior, seed uint64, steps int) (result, error) {
	d := diag.NewDraws(chains, 0, dim)
	draws := make([][]float64, chains)
	for c := range draws {
		rng := rand.New(rand.NewPCG(seed, uint64(c)))
		w, g := make([]float64, dim), make([]float64, dim)
		lp := post.LogDensity(w, g)
		h := 0.01
		prop, pg := make([]float64, dim), make([]float64, dim)
		for s := 0; s < steps; s++ {
			for i := range w {
				prop[i] = w[i] + h*g[i] + math.Sqrt(2*h)*rng.NormFloat64()
			}
			plp := post.LogDensity(prop, pg)
			// log q(w | prop) − log q(prop | w)
			q := 0.0
			for i := range w {
				a, b := w[i]-prop[i]-h*pg[i], prop[i]-w[i]-h*g[i]
				q += (b*b - a*a) / (4 * h)
			}
			accept := math.Log(rng.Float64()) < plp-lp+q
			if accept {
				copy(w, prop)
				copy(g, pg)
				lp = plp
			}
			if s < steps/2 { // adapt in the burn-in only
				if accept {
					h *= 1.01
				} else {
					h /= 1.01 * 0.57 / 0.43
					h = math.Max(h, 1e-8)
				}
			} else {
				draws[c] = append(draws[c], w...)
			}
		}
	}
	for t := 0; t < len(draws[0])/dim; t++ {
		row := make([]float64, 0, chains*dim)
		for c := range draws {
			row = append(row, draws[c][t*dim:(t+1)*dim]...)
		}
		if err := d.Append(row); err != nil {
			return result{}, err
		}
	}
	rows, err := diag.Summary(d)
	if err != nil {
		return result{}, err
	}
	r := result{name: "MALA, full data (reference)"}
	for _, row := range rows {
		r.mean, r.se = append(r.mean, row.Mean), append(r.se, row.MCSEMean)
	}
	return r, nil
}

// report prints the table: each run's means beside the reference's, how
// far off in MCSE and in per cent, its KSD and its warnings.
func report(ref result, rs []result) {
	fmt.Println("| run | η | w₀ | w₁ | w₂ | worst gap (MCSE) | worst gap (%) | within 3 MCSE or 5 % | KSD | warned |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	cell := func(m, se float64) string { return fmt.Sprintf("%.3f ± %.3f", m, se) }
	fmt.Printf("| %s | — | %s | %s | %s | — | — | — | — | — |\n", ref.name, cell(ref.mean[0], ref.se[0]), cell(ref.mean[1], ref.se[1]), cell(ref.mean[2], ref.se[2]))
	for _, r := range rs {
		gapSE, gapPct, ok := 0.0, 0.0, true
		for i := range r.mean {
			diff := math.Abs(r.mean[i] - ref.mean[i])
			se := math.Hypot(r.se[i], ref.se[i])
			pct := 100 * diff / math.Abs(ref.mean[i])
			gapSE, gapPct = math.Max(gapSE, diff/se), math.Max(gapPct, pct)
			if diff > 3*se && pct > 5 {
				ok = false
			}
		}
		warned := "no"
		if len(r.warnings) > 0 {
			var keys []string
			for _, w := range r.warnings {
				keys = append(keys, warningKind(w))
			}
			warned = strings.Join(keys, "; ")
		}
		fmt.Printf("| %s | %.3g | %s | %s | %s | %.1f | %.1f | %v | %.3g | %s |\n", r.name, r.eta,
			cell(r.mean[0], r.se[0]), cell(r.mean[1], r.se[1]), cell(r.mean[2], r.se[2]), gapSE, gapPct, ok, r.ksd, warned)
	}
}

// warningKind names a sampler's warning briefly for the table.
func warningKind(msg string) string {
	for _, k := range []struct{ part, name string }{
		{"step size η", "step size far from training"},
		{"noise", "gradient noise above the diffusion"},
		{"momentum input", "momentum input outside training"},
		{"energy input", "energy input outside training"},
		{"gradient input", "gradient input outside training"},
	} {
		if strings.Contains(msg, k.part) {
			return k.name
		}
	}
	return msg
}
