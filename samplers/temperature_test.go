package samplers

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

// TestKineticTemperaturesByHand: two chains of three coordinates,
// coordinate-major, and one chain of one.
func TestKineticTemperaturesByHand(t *testing.T) {
	for _, tc := range []struct {
		p    []float64
		k    int
		want []float64
	}{
		{[]float64{1, 0, 2, 3, 2, 0}, 2, []float64{3, 3}},  // chain 0: 1, 2, 2; chain 1: 0, 3, 0
		{[]float64{1, 0, 2, 0, 2, 6}, 2, []float64{3, 12}}, // chain 1: 0, 0, 6
		{[]float64{-2}, 1, []float64{4}},
	} {
		got, err := KineticTemperatures(tc.p, tc.k)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("KineticTemperatures(%v, %d) = %v, %v; want %v", tc.p, tc.k, got, err, tc.want)
		}
	}
	for _, k := range []int{0, 4} {
		if _, err := KineticTemperatures([]float64{1, 2, 3}, k); err == nil {
			t.Errorf("3 momenta of %d chains: no error", k)
		}
	}
}

// noisyGaussian is the standard normal in d dimensions whose gradient for
// each chain carries independent noise of variance v, reported as its
// estimate when report is set.
type noisyGaussian struct {
	d, k   int
	v      float64
	report bool
}

func (g noisyGaussian) Dim() int          { return g.d }
func (g noisyGaussian) Chains() int       { return g.k }
func (g noisyGaussian) DataSize() float64 { return 1 }
func (g noisyGaussian) Evaluate(rng *rand.Rand, theta []float64, e *Eval) error {
	sd := math.Sqrt(g.v)
	clear(e.U)
	for i, x := range theta {
		e.U[i%g.k] += x * x / 2
		e.Grad[i] = x + sd*rng.NormFloat64()
	}
	if g.report {
		e.NoiseVar = make([]float64, len(theta))
		for i := range e.NoiseVar {
			e.NoiseVar[i] = g.v
		}
	}
	return nil
}

// sghmcStationaryP2 is E[p²] of SGHMC's momentum-first step on the 1-D
// standard normal with gradient noise of variance v and injected noise of
// variance s2 per step, at equilibrium: the fixed point Σ = AΣAᵀ + BBᵀ of
// the linear recursion (θ, p) ← A(θ, p) + B(gradient noise, injected noise).
func sghmcStationaryP2(eta, c, v, s2 float64) float64 {
	// p' = (1 − ηC)p − ηθ − η√v·ε + √s2·ξ,  θ' = θ + ηp'
	a := [2][2]float64{{1 - eta*eta, eta * (1 - eta*c)}, {-eta, 1 - eta*c}}
	b := [2][2]float64{{-eta * eta * math.Sqrt(v), eta * math.Sqrt(s2)}, {-eta * math.Sqrt(v), math.Sqrt(s2)}}
	var q, s [2][2]float64 // q = BBᵀ
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			q[i][j] = b[i][0]*b[j][0] + b[i][1]*b[j][1]
		}
	}
	for it := 0; it < 200000; it++ {
		var n [2][2]float64
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				n[i][j] = q[i][j]
				for l := 0; l < 2; l++ {
					for m := 0; m < 2; m++ {
						n[i][j] += a[i][l] * s[l][m] * a[j][m]
					}
				}
			}
		}
		s = n
	}
	return s[1][1]
}

// TestKineticTemperaturesSeeGradientNoise: SGHMC on a standard normal whose
// gradient carries noise of variance V heats its momenta to the
// equilibrium the step's recursion gives (about 1 + ηV/(2C), 1.5 here)
// unless its noise correction takes the gradient noise off the injected
// noise, when they stay at the target's 1. The chains' time-averaged
// temperature is within five Monte-Carlo standard errors of the recursion's
// fixed point in both cases, and the two differ by far more.
func TestKineticTemperaturesSeeGradientNoise(t *testing.T) {
	const d, k, eta, c, v = 10, 50, 0.1, 1.0, 10.0
	const burn, steps = 500, 4000
	for _, correct := range []bool{false, true} {
		s2 := 2 * eta * c
		if correct {
			s2 = 2 * eta * (c - eta*v/2)
		}
		want := sghmcStationaryP2(eta, c, v, s2)
		target := noisyGaussian{d: d, k: k, v: v, report: correct}
		kernel, err := NewSGHMC(target, SGHMCSettings{StepSize: Constant(eta), Friction: c, NoiseCorrection: correct, Warn: func(string) {}})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 11))
		theta0 := make([]float64, d*k)
		for i := range theta0 {
			theta0[i] = rng.NormFloat64()
		}
		st, err := kernel.Init(theta0, nil)
		if err != nil {
			t.Fatal(err)
		}
		// batch means of 100 steps, about ten times p²'s correlation time 1/(ηC)
		const batch = 100
		var means []float64
		sum := 0.0
		for i := 1; i <= burn+steps; i++ {
			if err := kernel.Step(rng, st); err != nil {
				t.Fatal(err)
			}
			if i <= burn {
				continue
			}
			temps, err := KineticTemperatures(st.P, k)
			if err != nil {
				t.Fatal(err)
			}
			sum += floats.Sum(temps) / k
			if (i-burn)%batch == 0 {
				means = append(means, sum/batch)
				sum = 0
			}
		}
		m, sd := stat.MeanStdDev(means, nil)
		se := sd / math.Sqrt(float64(len(means)))
		t.Logf("correction %v: temperature %.4f ± %.4f, recursion %.4f", correct, m, se, want)
		if math.Abs(m-want) > 5*se || se > 0.01 {
			t.Errorf("correction %v: temperature %.4f ± %.4f, want %.4f", correct, m, se, want)
		}
		if lo, hi := 1.4, 1.6; !correct && (want < lo || want > hi) {
			t.Errorf("without correction the recursion's fixed point is %.4f, want about 1.5", want)
		} else if correct && math.Abs(want-1) > 0.06 {
			t.Errorf("with correction the recursion's fixed point is %.4f, want about 1", want)
		}
	}
}

// TestHotFractionFindsAHotBlock: momenta at equilibrium give HotLevel within
// its binomial error for several numbers of chains; heating 2 % of the
// coordinates to temperature 4 raises the share to about 2 % with 20 chains
// or more (with fewer, a hot coordinate's mean over the chains is too noisy
// to pass the limit every time) where the kinetic temperature moves by only
// 6 %; too few momenta and NaN are handled.
func TestHotFractionFindsAHotBlock(t *testing.T) {
	const d = 200_000
	rng := rand.New(rand.NewPCG(3, 9))
	for _, k := range []int{1, 4, 20, 50} {
		p := make([]float64, d*k)
		for i := range p {
			p[i] = rng.NormFloat64()
		}
		got, err := HotFraction(p, k)
		if se := math.Sqrt(HotLevel * (1 - HotLevel) / d); err != nil || math.Abs(got-HotLevel) > 4*se {
			t.Errorf("%d chains at equilibrium: hot fraction %v (%v), want %v ± %.2g", k, got, err, HotLevel, 4*se)
		}
		// a block of 2 % of the coordinates at temperature 4
		for i := range p[:d/50*k] {
			p[i] *= 2
		}
		got, _ = HotFraction(p, k)
		temps, _ := KineticTemperatures(p, k)
		if mean := stat.Mean(temps, nil); k >= 20 && (got < 0.015 || got > 0.025) || mean > 1.1 {
			t.Errorf("%d chains, 2 %% of the coordinates at temperature 4: hot fraction %v, want about 0.02 (kinetic temperature %v)", k, got, mean)
		}
	}
	if got, err := HotFraction([]float64{1, math.NaN(), 0, 0}, 2); err != nil || got != 0.5 {
		t.Errorf("a NaN momentum: hot fraction %v (%v), want 0.5", got, err)
	}
	for _, k := range []int{0, 4} {
		if _, err := HotFraction([]float64{1, 2, 3}, k); err == nil {
			t.Errorf("3 momenta of %d chains: no error", k)
		}
	}
}
