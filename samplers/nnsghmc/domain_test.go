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
