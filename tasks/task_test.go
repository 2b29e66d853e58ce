package tasks

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// banana is a test energy with a data term, a prior and a minibatch: for
// K chains with θ of dimension 3, Lik_k = w·Σ_i (θ_{i+1,k} − θ_{i,k}²)² with
// a weight w that each minibatch changes, and Prior_k = ½Σ_i θ_ik².
type banana struct{ batches int }

func (banana) Dim() int { return 3 }

func (b *banana) Build(g *G.ExprGraph, theta *G.Node) (*Model, error) {
	w := graph.Input(g, theta.Dtype(), "banana.w")
	head := G.Must(graph.Slice(theta, 0, 0, 2))
	tail := G.Must(graph.Slice(theta, 0, 1, 3))
	r := G.Must(G.Sub(tail, G.Must(G.Square(head))))
	lik := G.Must(G.Mul(G.Must(G.Sum(G.Must(G.Square(r)), 0)), w))
	prior := G.Must(G.Mul(G.Must(G.Sum(G.Must(G.Square(theta)), 0)), graph.Scalar(g, theta.Dtype(), 0.5)))
	next := func(rng *rand.Rand) error {
		b.batches++
		return graph.SetValue(w, []float64{1 + rng.Float64()})
	}
	return &Model{Lik: lik, Prior: prior, DataSize: 10, Next: next}, nil
}

func TestEvaluatorGradientsAndParts(t *testing.T) {
	const k = 2
	b := &banana{}
	ev, err := Compile(b, k, graph.Float64)
	if err != nil {
		t.Fatal(err)
	}
	theta := []float64{0.5, -1, 1.2, 0.3, -0.7, 2}
	e := samplers.NewEval(3, k)
	seed := uint64(3)
	if err := ev.Evaluate(rand.New(rand.NewPCG(seed, 0)), theta, e); err != nil {
		t.Fatal(err)
	}
	if b.batches != 1 {
		t.Errorf("Next called %d times, want 1", b.batches)
	}
	w := 1 + rand.New(rand.NewPCG(seed, 0)).Float64()
	x := func(i, c int) float64 { return theta[i*k+c] }
	for c := 0; c < k; c++ {
		r0, r1 := x(1, c)-x(0, c)*x(0, c), x(2, c)-x(1, c)*x(1, c)
		lik := w * (r0*r0 + r1*r1)
		prior := 0.5 * (x(0, c)*x(0, c) + x(1, c)*x(1, c) + x(2, c)*x(2, c))
		grad := []float64{
			w*(-4*x(0, c)*r0) + x(0, c),
			w*(2*r0-4*x(1, c)*r1) + x(1, c),
			w*(2*r1) + x(2, c),
		}
		if math.Abs(e.U[c]-(lik+prior)) > 1e-12 || math.Abs(e.Prior[c]-prior) > 1e-12 {
			t.Errorf("chain %d: U = %v, prior %v; want %v, %v", c, e.U[c], e.Prior[c], lik+prior, prior)
		}
		for i := 0; i < 3; i++ {
			if math.Abs(e.Grad[i*k+c]-grad[i]) > 1e-12 {
				t.Errorf("chain %d: ∂U/∂θ_%d = %v, want %v", c, i, e.Grad[i*k+c], grad[i])
			}
			if math.Abs(e.PriorGrad[i*k+c]-x(i, c)) > 1e-12 {
				t.Errorf("chain %d: prior gradient %d = %v, want %v", c, i, e.PriorGrad[i*k+c], x(i, c))
			}
		}
	}
	if ev.DataSize() != 10 || ev.Dim() != 3 || ev.Chains() != k {
		t.Errorf("data size %v, dim %d, chains %d", ev.DataSize(), ev.Dim(), ev.Chains())
	}
	if err := ev.Evaluate(rand.New(rand.NewPCG(1, 1)), theta[:4], e); err == nil || !strings.Contains(err.Error(), "positions") {
		t.Errorf("wrong number of positions: %v", err)
	}
}

func TestGradientNoiseHasTheRightSpread(t *testing.T) {
	ev, err := Compile(&banana{}, 1, graph.Float64)
	if err != nil {
		t.Fatal(err)
	}
	noisy := GradientNoise{Target: ev, Sigma: 2}
	theta := []float64{0.1, 0.2, 0.3}
	exact, e := samplers.NewEval(3, 1), samplers.NewEval(3, 1)
	rng, replay := rand.New(rand.NewPCG(11, 9)), rand.New(rand.NewPCG(11, 9))
	const n = 5000
	var s, ss float64
	for i := 0; i < n; i++ {
		// the same batch weight for both: replay the generator, then skip
		// the three normals the noise takes
		if err := ev.Evaluate(replay, theta, exact); err != nil {
			t.Fatal(err)
		}
		replay.NormFloat64()
		replay.NormFloat64()
		replay.NormFloat64()
		if err := noisy.Evaluate(rng, theta, e); err != nil {
			t.Fatal(err)
		}
		d := e.Grad[0] - exact.Grad[0]
		s += d
		ss += d * d
		if e.U[0] != exact.U[0] {
			t.Fatal("noise changed the energy")
		}
	}
	mean, sd := s/n, math.Sqrt(ss/n-(s/n)*(s/n))
	// standard errors: 2/√n = 0.028 for the mean, 2/√(2n) = 0.02 for sd;
	// allow four
	if math.Abs(mean) > 0.11 || math.Abs(sd-2) > 0.08 {
		t.Errorf("noise mean %v, sd %v; want 0 and 2", mean, sd)
	}
}
