package bnn

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// lastLayerNets are the networks of the last-layer tests: ReLU with one
// hidden layer, sigmoid with two and a prior of σ = 2.
var lastLayerNets = []struct {
	name string
	net  MLP
}{
	{"relu", MLP{Sizes: []int{5, 4, 3}, Activation: ReLU}},
	{"sigmoid σ 2", MLP{Sizes: []int{5, 4, 4, 3}, Activation: Sigmoid, PriorStd: 2}},
}

// TestLastLayerConditionalIsTheEnergys checks the conditional of the last
// layer against the energy's own graph on the full data: at the mode the
// graph's gradient on the last layer's coordinates vanishes, and the
// Hessian there matches central differences of that gradient.
func TestLastLayerConditionalIsTheEnergys(t *testing.T) {
	const n, k = 300, 2
	for _, tc := range lastLayerNets {
		t.Run(tc.name, func(t *testing.T) {
			data := synthetic(t, n, 5, 3, 8)
			e, err := New(tc.net, data, n)
			if err != nil {
				t.Fatal(err)
			}
			ev := compiled(t, tc.net, data, n, k, graph.Float64) // full batch: the exact ∇U
			theta := tc.net.Init(rand.New(rand.NewPCG(4, 4)), k, 0.7)
			grad := func(theta []float64) []float64 {
				eval := samplers.NewEval(tc.net.Dim(), k)
				if err := ev.Evaluate(rand.New(rand.NewPCG(5, 5)), theta, eval); err != nil {
					t.Fatal(err)
				}
				return eval.Grad
			}
			w0, d := tc.net.lastLayer()
			last := func(g []float64, c int) []float64 {
				w := make([]float64, d)
				for i := range w {
					w[i] = g[(w0+i)*k+c]
				}
				return w
			}
			feats, labels := e.features(theta, k)
			for c := range k {
				q := tc.net.conditional(feats[c], labels)
				mu, a, err := q.mode(last(theta, c))
				if err != nil {
					t.Fatal(err)
				}
				at := append([]float64(nil), theta...)
				for i, v := range mu {
					at[(w0+i)*k+c] = v
				}
				g0 := last(grad(theta), c)
				g := last(grad(at), c)
				if r := floats.Norm(g, 2) / floats.Norm(g0, 2); r > 1e-8 {
					t.Errorf("chain %d: the graph's last-layer gradient at the mode is %.3g of its size at the chain's position, want 0", c, r)
				}
				// A·v against (∇U(μ + εv) − ∇U(μ − εv))/2ε
				v := make([]float64, d)
				rng := rand.New(rand.NewPCG(6, uint64(c)))
				for i := range v {
					v[i] = rng.NormFloat64()
				}
				const eps = 1e-5
				plus, minus := append([]float64(nil), at...), append([]float64(nil), at...)
				for i := range v {
					plus[(w0+i)*k+c] += eps * v[i]
					minus[(w0+i)*k+c] -= eps * v[i]
				}
				gp, gm := last(grad(plus), c), last(grad(minus), c)
				fd := make([]float64, d)
				for i := range fd {
					fd[i] = (gp[i] - gm[i]) / (2 * eps)
				}
				var av mat.VecDense
				av.MulVec(a, mat.NewVecDense(d, v))
				if r := maxRelDiff(av.RawVector().Data, fd); r > 1e-6 {
					t.Errorf("chain %d: the Hessian times a direction is %.3g from central differences of the graph's gradient", c, r)
				}
			}
		})
	}
}

// TestLastLayerHeatOfDraws puts draws of the conditional's Laplace
// approximation N(μ, A⁻¹), widened s times along A's stiffest fifth of
// eigen-directions and r times along the rest, into the last layers of 64
// chains that share their hidden layers: the mean temperatures read s over
// the stiff fifth, r over the rest and their weighted mean over all, each
// within four standard errors.
func TestLastLayerHeatOfDraws(t *testing.T) {
	const n, k = 400, 64
	for _, tc := range lastLayerNets {
		for _, sr := range [][2]float64{{1, 1}, {3, 1}, {1, 2}} {
			s, r := sr[0], sr[1]
			data := synthetic(t, n, 5, 3, 9)
			e, err := New(tc.net, data, 50)
			if err != nil {
				t.Fatal(err)
			}
			one := tc.net.Init(rand.New(rand.NewPCG(7, 7)), 1, 0.7)
			feats, labels := e.features(one, 1)
			w0, d := tc.net.lastLayer()
			stiff := d / 5
			q := tc.net.conditional(feats[0], labels)
			mu, a, err := q.mode(one[w0 : w0+d])
			if err != nil {
				t.Fatal(err)
			}
			var eig mat.EigenSym
			if !eig.Factorize(a, true) {
				t.Fatal("eigen-decomposition failed")
			}
			lams := eig.Values(nil)
			var vecs mat.Dense
			eig.VectorsTo(&vecs)
			theta := make([]float64, tc.net.Dim()*k)
			rng := rand.New(rand.NewPCG(8, uint64(10*s+r)))
			for c := range k {
				for i := 0; i < tc.net.Dim(); i++ {
					theta[i*k+c] = one[i]
				}
				w := append([]float64(nil), mu...)
				for j, lam := range lams {
					temp := r
					if j >= d-stiff {
						temp = s
					}
					z := math.Sqrt(temp/lam) * rng.NormFloat64()
					for i := range w {
						w[i] += z * vecs.At(i, j)
					}
				}
				for i := range d {
					theta[(w0+i)*k+c] = w[i]
				}
			}
			heats, err := e.LastLayerHeat(theta, k)
			if err != nil {
				t.Fatal(err)
			}
			var all, top, rest float64
			for _, h := range heats {
				all, top, rest = all+h.Temperature/k, top+h.Stiff/k, rest+h.Rest/k
			}
			want := (s*float64(stiff) + r*float64(d-stiff)) / float64(d)
			for _, c := range []struct {
				what      string
				got, want float64
				dirs      int
			}{{"all", all, want, d}, {"stiff", top, s, stiff}, {"rest", rest, r, d - stiff}} {
				se := c.want * math.Sqrt(2/float64(c.dirs)/k)
				t.Logf("%s, s = %v, r = %v: %s %.3f (want %.3f ± %.3f)", tc.name, s, r, c.what, c.got, c.want, se)
				if math.Abs(c.got-c.want) > 4*se {
					t.Errorf("%s, s = %v, r = %v: mean temperature over %s %.3f, want %.3f ± %.3f", tc.name, s, r, c.what, c.got, c.want, 4*se)
				}
			}
		}
	}
}

func TestLastLayerHeatRefusesBadPositions(t *testing.T) {
	net := MLP{Sizes: []int{5, 4, 3}}
	e, err := New(net, synthetic(t, 20, 5, 3, 1), 10)
	if err != nil {
		t.Fatal(err)
	}
	theta := net.Init(rand.New(rand.NewPCG(1, 1)), 2, 0.5)
	theta[7] = math.NaN()
	for _, tc := range []struct {
		theta []float64
		k     int
		want  string
	}{
		{theta[:10], 2, "10 positions for 2 chains of a 39-parameter network"},
		{theta, 2, "position 7 (coordinate 3 of chain 1) is NaN"},
	} {
		if _, err := e.LastLayerHeat(tc.theta, tc.k); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got error %v, want one saying %q", err, tc.want)
		}
	}
}

// TestLastLayerHeatOfSGHMC runs SGHMC (η = 0.02, C = 1) on a small
// Bayesian MLP whose labels are noise, 16 chains from the prior's scale for
// 8,000 steps, and reads the last layers' temperature every 500 steps of
// the second half: with the full-data gradient (a nearly exact sampler) it
// is 1 within 0.1, and with minibatches of 20 of the 200 examples, whose
// gradient noise the friction does not carry off, the same sampler's last
// layers run hot, above 1.3.
func TestLastLayerHeatOfSGHMC(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs SGHMC for 8,000 steps twice")
	}
	const n, k, steps = 200, 16, 8000
	net := MLP{Sizes: []int{5, 4, 3}, Activation: ReLU}
	data := synthetic(t, n, 5, 3, 10)
	for _, tc := range []struct {
		batch  int
		lo, hi float64
	}{{n, 0.9, 1.1}, {20, 1.3, math.Inf(1)}} {
		e, err := New(net, data, tc.batch)
		if err != nil {
			t.Fatal(err)
		}
		target := compiled(t, net, data, tc.batch, k, graph.Float64)
		kernel, err := samplers.NewSGHMC(target, samplers.SGHMCSettings{StepSize: samplers.Constant(0.02), Friction: 1})
		if err != nil {
			t.Fatal(err)
		}
		st, err := kernel.Init(net.Init(rand.New(rand.NewPCG(11, 11)), k, 1), nil)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		var reads int
		hook := func(step int, s *samplers.State) error {
			if step <= steps/2 || step%500 != 0 {
				return nil
			}
			heats, err := e.LastLayerHeat(s.Theta, k)
			if err != nil {
				return err
			}
			for _, h := range heats {
				sum += h.Temperature
				reads++
			}
			return nil
		}
		if err := samplers.Run(t.Context(), kernel, rand.New(rand.NewPCG(12, 12)), st, steps, hook); err != nil {
			t.Fatal(err)
		}
		mean := sum / float64(reads)
		t.Logf("minibatches of %d: mean last-layer temperature %.3f over %d readings", tc.batch, mean, reads)
		if mean < tc.lo || mean > tc.hi {
			t.Errorf("minibatches of %d: mean last-layer temperature %.3f, want it in [%v, %v]", tc.batch, mean, tc.lo, tc.hi)
		}
	}
}
