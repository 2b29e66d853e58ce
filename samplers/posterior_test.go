package samplers

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// linearData is a Posterior with per-datum log-likelihoods a_i·θ − ½|θ|²
// and the prior −½·|θ|²/4, whose gradients are easy to write by hand.
func linearData(d, n int) Posterior {
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, d)
		for j := range a[i] {
			a[i][j] = float64((i*7+j*3)%11) - 5
		}
	}
	return Posterior{
		Dim: d, Data: n,
		LogPrior: func(w, grad []float64) float64 {
			lp := 0.0
			for j, v := range w {
				lp -= v * v / 8
				grad[j] -= v / 4
			}
			return lp
		},
		LogLik: func(w []float64, batch []int, grad []float64) float64 {
			ll := 0.0
			for _, i := range batch {
				for j, v := range w {
					ll += a[i][j]*v - v*v/2
					grad[j] += a[i][j] - v
				}
			}
			return ll
		},
	}
}

// TestPosteriorTargetScalesTheMinibatch: Evaluate gives every chain
// Ũ = −log p(θ) − (N/n)·Σ_{i∈batch} log p(y_i|θ) and its gradient, with
// the prior's parts apart, on the minibatches of a Batches order drawn from
// the same random source; on all the data the scale is 1.
func TestPosteriorTargetScalesTheMinibatch(t *testing.T) {
	const d, n, k = 3, 10, 2
	p := linearData(d, n)
	theta := []float64{0.5, -1, 1.5, 2, -0.25, 0} // coordinate-major, 2 chains
	for _, batch := range []int{0, 4, n} {
		target, err := NewTarget(p, TargetSettings{Chains: k, Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		rng, ref := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
		var order *Batches
		if batch > 0 && batch < n {
			order, _ = NewBatches(n, batch)
		}
		e := NewEval(d, k)
		for step := 0; step < 4; step++ {
			if err := target.Evaluate(rng, theta, e); err != nil {
				t.Fatal(err)
			}
			idx := allIndices(n)
			if order != nil {
				idx = order.Next(ref)
			}
			scale := float64(n) / float64(len(idx))
			for c := 0; c < k; c++ {
				w := []float64{theta[c], theta[k+c], theta[2*k+c]}
				gp, gl := make([]float64, d), make([]float64, d)
				prior, lik := p.LogPrior(w, gp), p.LogLik(w, idx, gl)
				if want := -(prior + scale*lik); math.Abs(e.U[c]-want) > 1e-12 || e.Prior[c] != -prior {
					t.Errorf("batch %d, step %d, chain %d: U %v, prior %v; want %v, %v", batch, step, c, e.U[c], e.Prior[c], want, -prior)
				}
				for j := 0; j < d; j++ {
					if want := -(gp[j] + scale*gl[j]); math.Abs(e.Grad[j*k+c]-want) > 1e-12 || e.PriorGrad[j*k+c] != -gp[j] {
						t.Errorf("batch %d, chain %d, coordinate %d: gradient %v, prior's %v; want %v, %v", batch, c, j, e.Grad[j*k+c], e.PriorGrad[j*k+c], want, -gp[j])
					}
				}
			}
		}
		if got := target.Batches() != nil; got != (order != nil) {
			t.Errorf("batch %d: a minibatch order: %v, want %v", batch, got, order != nil)
		}
	}
}

// TestPosteriorTargetEstimatesTheNoise: NoiseVar is (N/n)²·n times the
// sample variance of the minibatch's per-datum gradients, coordinate by
// coordinate, and 0 on all the data.
func TestPosteriorTargetEstimatesTheNoise(t *testing.T) {
	const d, n, k, batch = 3, 12, 2, 5
	p := linearData(d, n)
	theta := []float64{0.5, -1, 1.5, 2, -0.25, 0}
	target, err := NewTarget(p, TargetSettings{Chains: k, Batch: batch, NoiseEstimate: true})
	if err != nil {
		t.Fatal(err)
	}
	rng, ref := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
	order, _ := NewBatches(n, batch)
	e := NewEval(d, k)
	if err := target.Evaluate(rng, theta, e); err != nil {
		t.Fatal(err)
	}
	idx := order.Next(ref)
	scale := float64(n) / batch
	for c := 0; c < k; c++ {
		w := []float64{theta[c], theta[k+c], theta[2*k+c]}
		for j := 0; j < d; j++ {
			var g []float64
			for _, i := range idx {
				one := make([]float64, d)
				p.LogLik(w, []int{i}, one)
				g = append(g, one[j])
			}
			mean, ss := 0.0, 0.0
			for _, v := range g {
				mean += v / batch
			}
			for _, v := range g {
				ss += (v - mean) * (v - mean)
			}
			want := scale * scale * batch * ss / (batch - 1)
			if got := e.NoiseVar[j*k+c]; math.Abs(got-want) > 1e-9*want {
				t.Errorf("chain %d, coordinate %d: V̂ = %v, want %v", c, j, got, want)
			}
		}
	}
	full, _ := NewTarget(p, TargetSettings{Chains: k, NoiseEstimate: true})
	if err := full.Evaluate(rng, theta, e); err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(e.NoiseVar, func(v float64) bool { return v != 0 }) {
		t.Errorf("on all the data V̂ = %v, want 0", e.NoiseVar)
	}
}

// TestPosteriorWithoutData: a density without data is all data term (no
// prior part in Eval), as pSGLD's preconditioner reads it, and LogDensity
// gives its value and score.
func TestPosteriorWithoutData(t *testing.T) {
	p := Posterior{Dim: 2, LogPrior: func(w, g []float64) float64 {
		g[0] -= w[0]
		g[1] -= 2 * w[1]
		return -w[0]*w[0]/2 - w[1]*w[1]
	}}
	target, err := NewTarget(p, TargetSettings{Chains: 1})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEval(2, 1)
	if err := target.Evaluate(nil, []float64{1, 2}, e); err != nil {
		t.Fatal(err)
	}
	if e.U[0] != 4.5 || e.Prior[0] != 0 || !slices.Equal(e.Grad, []float64{1, 4}) || !slices.Equal(e.PriorGrad, []float64{0, 0}) || target.DataSize() != 1 {
		t.Errorf("eval %+v, data size %v", e, target.DataSize())
	}
	score := make([]float64, 2)
	if lp := p.LogDensity([]float64{1, 2}, score); lp != -4.5 || !slices.Equal(score, []float64{-1, -4}) {
		t.Errorf("LogDensity = %v, score %v", lp, score)
	}
}

// TestNewTargetRefusesBadPosteriors names what is missing.
func TestNewTargetRefusesBadPosteriors(t *testing.T) {
	prior := func(_, _ []float64) float64 { return 0 }
	lik := func(_ []float64, _ []int, _ []float64) float64 { return 0 }
	for _, tc := range []struct {
		p    Posterior
		s    TargetSettings
		want string
	}{
		{Posterior{Dim: 0, LogPrior: prior}, TargetSettings{Chains: 1}, "Dim is 0"},
		{Posterior{Dim: 1}, TargetSettings{Chains: 1}, "LogPrior is nil"},
		{Posterior{Dim: 1, Data: 3, LogPrior: prior}, TargetSettings{Chains: 1}, "LogLik is nil with 3 data"},
		{Posterior{Dim: 1, LogPrior: prior, LogLik: lik}, TargetSettings{Chains: 1}, "Data is 0"},
		{Posterior{Dim: 1, LogPrior: prior}, TargetSettings{Chains: 0}, "Chains is 0"},
		{Posterior{Dim: 1, Data: 3, LogPrior: prior, LogLik: lik}, TargetSettings{Chains: 1, Batch: -1}, "Batch is -1"},
	} {
		if _, err := NewTarget(tc.p, tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.s, err, tc.want)
		}
	}
}

// constNoise is a 1-D target with gradient 0 and a fixed gradient-noise
// estimate v, for one chain.
type constNoise struct{ v float64 }

func (c constNoise) Dim() int          { return 1 }
func (c constNoise) Chains() int       { return 1 }
func (c constNoise) DataSize() float64 { return 1 }
func (c constNoise) Evaluate(_ *rand.Rand, _ []float64, e *Eval) error {
	e.U[0], e.Grad[0] = 0, 0
	e.NoiseVar = []float64{c.v}
	return nil
}

// TestSGHMCNoiseCorrection: with NoiseCorrection SGHMC injects noise of
// variance 2η(C − B̂), B̂ = ½ηV̂, and none where B̂ ≥ C, where it warns once
// whether or not it corrects; one step from p = 1 checked by hand with the
// same normal draw.
func TestSGHMCNoiseCorrection(t *testing.T) {
	const eta, c = 0.1, 2.0
	xi := rand.New(rand.NewPCG(5, 5)).NormFloat64()
	for _, tc := range []struct {
		v       float64
		correct bool
		sd      float64 // of the injected noise
		warns   bool
	}{
		{10, true, math.Sqrt(2 * eta * (c - 0.5*eta*10)), false},
		{10, false, math.Sqrt(2 * eta * c), false},
		{100, true, 0, true},
		{100, false, math.Sqrt(2 * eta * c), true},
	} {
		var warned []string
		k, err := NewSGHMC(constNoise{tc.v}, SGHMCSettings{StepSize: Constant(eta), Friction: c, NoiseCorrection: tc.correct,
			Warn: func(msg string) { warned = append(warned, msg) }})
		if err != nil {
			t.Fatal(err)
		}
		st, _ := k.Init([]float64{0}, []float64{1})
		rng := rand.New(rand.NewPCG(5, 5))
		for i := 0; i < 3; i++ {
			if err := k.Step(rng, st); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				if want := 1 - eta*c + tc.sd*xi; math.Abs(st.P[0]-want) > 1e-15 {
					t.Errorf("V̂ %v, correction %v: p = %v, want %v", tc.v, tc.correct, st.P[0], want)
				}
			}
		}
		if got := len(warned); got != map[bool]int{true: 1, false: 0}[tc.warns] {
			t.Errorf("V̂ %v, correction %v: %d warnings %q, want %v", tc.v, tc.correct, got, warned, tc.warns)
		} else if tc.warns && !strings.Contains(warned[0], "above the friction C = 2") {
			t.Errorf("warning %q", warned[0])
		}
	}
}
