package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph/graphtest"
)

// TestGaussianPrior checks the fused prior against its closed form and its
// gradient, weighted per chain, against finite differences in float64, and
// the float32 op against the float64 one.
func TestGaussianPrior(t *testing.T) {
	const d, k, sigma = 7, 3, 0.8
	rng := rand.New(rand.NewPCG(3, 3))
	th := make([]float64, d*k)
	for i := range th {
		th[i] = rng.NormFloat64()
	}
	weights := []float64{0.5, -1.5, 2}
	build := func(dt Dtype) (*G.Node, *G.Node, *Program) {
		g := G.NewGraph()
		theta := Input(g, dt, "theta", d, k)
		if err := SetValue(theta, th); err != nil {
			t.Fatal(err)
		}
		w := Input(g, dt, "w", k)
		if err := SetValue(w, weights); err != nil {
			t.Fatal(err)
		}
		u, err := GaussianPrior(theta, sigma)
		if err != nil {
			t.Fatal(err)
		}
		cost := G.Must(G.Sum(G.Must(G.HadamardProd(u, w))))
		grads, err := Grad(cost, theta)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(u, cost, grads[0])
		if err != nil {
			t.Fatal(err)
		}
		return theta, cost, p
	}
	theta, cost, p := build(Float64)
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	u, _ := Value(p.outputs[0], nil)
	for c := 0; c < k; c++ {
		want := float64(d) * 0.5 * math.Log(2*math.Pi*sigma*sigma)
		for i := 0; i < d; i++ {
			want += th[i*k+c] * th[i*k+c] / (2 * sigma * sigma)
		}
		if math.Abs(u[c]-want) > 1e-12*math.Abs(want) {
			t.Errorf("prior of chain %d: %v, want %v", c, u[c], want)
		}
	}
	an, _ := Value(p.outputs[2], nil)
	f := func() (float64, error) {
		if err := p.Run(); err != nil {
			return 0, err
		}
		v, err := Value(cost, nil)
		return v[0], err
	}
	res, err := graphtest.CheckGradient(f, [][]float64{graphtest.Data(theta)}, [][]float64{an}, 1e-6, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Worst > 1e-7 {
		t.Errorf("prior gradient against finite differences: %v", res)
	}

	_, _, p32 := build(Float32)
	if err := p32.Run(); err != nil {
		t.Fatal(err)
	}
	u32, _ := Value(p32.outputs[0], nil)
	g32, _ := Value(p32.outputs[2], nil)
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	u, _ = Value(p.outputs[0], nil)
	an, _ = Value(p.outputs[2], nil)
	for i := range u {
		if math.Abs(u32[i]-u[i]) > 1e-5*math.Abs(u[i]) {
			t.Errorf("float32 prior %v, float64 %v", u32[i], u[i])
		}
	}
	for i := range an {
		if math.Abs(g32[i]-an[i]) > 1e-5*(1+math.Abs(an[i])) {
			t.Errorf("float32 gradient %v, float64 %v", g32[i], an[i])
		}
	}
}
