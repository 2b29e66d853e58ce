package nnsghmc_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// noisyGaussian is N(0, 1) in one dimension for one chain, U = θ²/2, with a
// gradient-noise estimate v (0: none).
type noisyGaussian struct{ v float64 }

func (g noisyGaussian) Dim() int          { return 1 }
func (g noisyGaussian) Chains() int       { return 1 }
func (g noisyGaussian) DataSize() float64 { return 1 }
func (g noisyGaussian) Evaluate(_ *rand.Rand, x []float64, e *samplers.Eval) error {
	e.U[0], e.Prior[0], e.Grad[0], e.PriorGrad[0] = x[0]*x[0]/2, 0, x[0], 0
	e.NoiseVar = nil
	if g.v > 0 {
		e.NoiseVar = []float64{g.v}
	}
	return nil
}

// TestWarnsOutsideTheDomain: a trained sampler run inside the domain it
// was trained on says nothing; at a step size four times the trained one,
// with a momentum, an energy or a gradient far outside the ranges of its
// training, or with gradient noise above its diffusion, it says so, once
// for each, naming the input, its value and the range.
func TestWarnsOutsideTheDomain(t *testing.T) {
	tr := nnsghmc.RandomTrained([]int{4}, []int{4}, nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 1}, 1, rand.New(rand.NewPCG(1, 1)))
	tr.Domain = nnsghmc.Domain{Dim: 1, DataSize: 1, StepSize: nnsghmc.Range{Min: 0.1, Max: 0.1},
		Energy: &nnsghmc.Range{Min: 0, Max: 1}, Momentum: &nnsghmc.Range{Min: -1, Max: 1}, Gradient: &nnsghmc.Range{Min: -1, Max: 1}}
	for _, tc := range []struct {
		name     string
		eta      float64
		theta, p float64
		noise    float64
		want     []string // parts of each warning, in order; none for nil
	}{
		{"inside", 0.1, 0.5, 0, 0, nil},
		{"step size", 0.4, 0.5, 0, 0, []string{"step size η = 0.4 is far from the step sizes it was trained at, 0.1 to 0.1"}},
		// the momentum throws the chain out, and the energy follows
		{"momentum", 0.1, 0.5, 5, 0, []string{"momentum input m·p reaches 5 at step 1 (chain 0), far outside the range it had in training, [-1, 1]", "energy input u reaches"}},
		{"energy and gradient", 0.1, 4, 0, 0, []string{"energy input u reaches 8 at step 1", "gradient input s_g·∇Ũ/N reaches 4 at step 1"}},
		{"gradient noise", 0.1, 0.5, 0, 1e6, []string{"the minibatch gradient noise B̂ = ½·η·Q_f²·V̂ reaches"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			s := nnsghmc.ToySettings()
			s.StepSize, s.Warn = samplers.Constant(tc.eta), func(msg string) { got = append(got, msg) }
			k, err := nnsghmc.New(noisyGaussian{tc.noise}, tr, s)
			if err != nil {
				t.Fatal(err)
			}
			st, err := k.Init([]float64{tc.theta}, []float64{tc.p})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(2, 2))
			for i := 0; i < 5; i++ {
				if err := k.Step(rng, st); err != nil {
					t.Fatal(err)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) || strings.Contains(got[i], "\n") {
					t.Errorf("warning %q, want one line with %q", got[i], w)
				}
			}
		})
	}
}

// spiky is U = Σθ²/2 over d coordinates of k chains (coordinate-major),
// with the gradient raised to 100 at the index spike and to 200 at an
// index after it in the same span of the scan.
type spiky struct{ d, k, spike int }

func (g spiky) Dim() int          { return g.d }
func (g spiky) Chains() int       { return g.k }
func (g spiky) DataSize() float64 { return 1 }
func (g spiky) Evaluate(_ *rand.Rand, x []float64, e *samplers.Eval) error {
	clear(e.U)
	for i, v := range x {
		e.U[i%g.k] += v * v / 2
		e.Grad[i] = v
	}
	e.Grad[g.spike], e.Grad[g.spike+5001] = 100, 200
	clear(e.Prior)
	clear(e.PriorGrad)
	e.NoiseVar = nil
	return nil
}

// The gradient check over many coordinates, shared out among the cores,
// names the chain of the first far coordinate, once.
func TestWarnsOfTheFirstFarGradient(t *testing.T) {
	tr := nnsghmc.RandomTrained([]int{4}, []int{4}, nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 1}, 1, rand.New(rand.NewPCG(1, 1)))
	d, k := 20000, 3
	tr.Domain = nnsghmc.Domain{Dim: d, DataSize: 1, StepSize: nnsghmc.Range{Min: 1e-3, Max: 1e-3}, Gradient: &nnsghmc.Range{Min: -1, Max: 1}}
	spike := 50000 // in a later span of the scan (16,384 elements), chain 50000 mod 3 = 2
	var got []string
	s := nnsghmc.ToySettings()
	s.StepSize, s.Warn = samplers.Constant(1e-3), func(msg string) { got = append(got, msg) }
	kern, err := nnsghmc.New(spiky{d, k, spike}, tr, s)
	if err != nil {
		t.Fatal(err)
	}
	st, err := kern.Init(make([]float64, d*k), make([]float64, d*k))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for i := 0; i < 3; i++ {
		if err := kern.Step(rng, st); err != nil {
			t.Fatal(err)
		}
	}
	want := "gradient input s_g·∇Ũ/N reaches 100 at step 1 (chain 2)"
	if len(got) != 1 || !strings.Contains(got[0], want) {
		t.Errorf("warnings %q, want one with %q", got, want)
	}
}

// TestWarnsOfAnOffsetAgainstFQ: with f_Q = 1 everywhere, β = −1.2 brings
// Q_f to −0.2 and warns once, naming the values; β = 1.5 (f_Q's sign) and
// β = −4 (Q_f = −3, larger than f_Q) say nothing.
func TestWarnsOfAnOffsetAgainstFQ(t *testing.T) {
	tr := nnsghmc.RandomTrained([]int{4}, []int{4}, nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 1}, 1, rand.New(rand.NewPCG(1, 1)))
	last := len(tr.Q.W) - 1
	clear(tr.Q.W[last])
	tr.Q.B[last][0] = 1
	tr.Domain = nnsghmc.Domain{Dim: 1, DataSize: 1, StepSize: nnsghmc.Range{Min: 0.1, Max: 0.1}, Energy: &nnsghmc.Range{Min: 0, Max: 1}}
	for _, tc := range []struct {
		beta float64
		want string // "": no warning
	}{
		{-1.2, "the offset β = -1.2 has the sign opposite to f_Q and brings Q_f = β + f_Q towards 0 on the energy range of training (at u = 0, p = 0: f_Q = 1, Q_f = -0.2)"},
		{1.5, ""},
		{-4, ""},
		{0, ""},
	} {
		var got []string
		s := nnsghmc.ToySettings()
		s.StepSize, s.Beta, s.Warn = samplers.Constant(0.1), tc.beta, func(msg string) { got = append(got, msg) }
		k, err := nnsghmc.New(noisyGaussian{}, tr, s)
		if err != nil {
			t.Fatal(err)
		}
		st, err := k.Init([]float64{0.5}, []float64{0})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(2, 2))
		for i := 0; i < 3; i++ {
			if err := k.Step(rng, st); err != nil {
				t.Fatal(err)
			}
		}
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("β = %g: warnings %q, want none", tc.beta, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("β = %g: warnings %q, want one with %q", tc.beta, got, tc.want)
		}
	}
}

// TestQSign: the sign of f_Q's mean over the energy range of training, or
// of f_Q(0, 0) without one. f_Q = a·max(u, 0) + b: with a = −1, b = 0.5
// it is positive at u = 0 but its mean over [−1, 3] is −0.625.
func TestQSign(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a, b   float64
		energy *nnsghmc.Range
		want   float64
	}{
		{"positive constant", 0, 1, nil, 1},
		{"negative constant", 0, -0.5, nil, -1},
		{"zero", 0, 0, nil, 1},
		{"negative on the range", -1, 0.5, &nnsghmc.Range{Min: -1, Max: 3}, -1},
		{"positive at u = 0 without a range", -1, 0.5, nil, 1},
		{"positive on the range", 1, -0.5, &nnsghmc.Range{Min: -1, Max: 3}, 1},
	} {
		tr := nnsghmc.RandomTrained([]int{1}, []int{4}, nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 1}, 1, rand.New(rand.NewPCG(1, 1)))
		tr.Q.W[0], tr.Q.B[0] = []float64{1, 0}, []float64{0}
		tr.Q.W[1], tr.Q.B[1] = []float64{tc.a}, []float64{tc.b}
		tr.Domain.Energy = tc.energy
		if got := tr.QSign(); got != tc.want {
			t.Errorf("%s: QSign() = %g, want %g", tc.name, got, tc.want)
		}
	}
}
