package bnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// naiveLogProbs returns log softmax(f(x; θ_c)) of chain c by plain loops.
func naiveLogProbs(net MLP, theta []float64, k, c int, x []float64) []float64 {
	h := append([]float64(nil), x...)
	for l := 0; l < net.Layers(); l++ {
		in, out := net.Sizes[l], net.Sizes[l+1]
		ow, ob := net.Offsets(l)
		z := make([]float64, out)
		for j := 0; j < out; j++ {
			s := theta[(ob+j)*k+c]
			for i := 0; i < in; i++ {
				s += h[i] * theta[(ow+i*out+j)*k+c]
			}
			if l < net.Layers()-1 {
				if net.act() == Sigmoid {
					s = 1 / (1 + math.Exp(-s))
				} else {
					s = math.Max(s, 0)
				}
			}
			z[j] = s
		}
		h = z
	}
	mx := math.Inf(-1)
	for _, v := range h {
		mx = math.Max(mx, v)
	}
	se := 0.0
	for _, v := range h {
		se += math.Exp(v - mx)
	}
	for j := range h {
		h[j] -= mx + math.Log(se)
	}
	return h
}

// naivePrediction is the authors' evaluation by plain loops: the mean of the
// chains' predictive probabilities.
func naivePrediction(net MLP, theta []float64, k int, data Dataset) *Prediction {
	n, c := data.Len(), data.Classes()
	pr := &Prediction{LogProbs: make([]float64, n*c), LogLik: make([]float64, n), ChainError: make([]float64, k), ChainNLL: make([]float64, k)}
	x := make([]float64, data.Inputs())
	wrong := 0
	for i := 0; i < n; i++ {
		y := data.Example(i, x)
		p := make([]float64, c)
		for ch := 0; ch < k; ch++ {
			lps := naiveLogProbs(net, theta, k, ch, x)
			chBest := 0
			for j, lp := range lps {
				p[j] += math.Exp(lp) / float64(k)
				if lp > lps[chBest] {
					chBest = j
				}
			}
			pr.ChainNLL[ch] -= lps[y]
			if chBest != y {
				pr.ChainError[ch] += 1 / float64(n)
			}
		}
		best := 0
		for j := range p {
			pr.LogProbs[i*c+j] = math.Log(p[j])
			if p[j] > p[best] {
				best = j
			}
		}
		if best != y {
			wrong++
		}
		pr.LogLik[i] = math.Log(p[y])
		pr.NLL -= math.Log(p[y])
	}
	pr.Error = float64(wrong) / float64(n)
	return pr
}

// TestPredictMatchesNaive checks the compiled predictive against plain loops
// for batch sizes that divide the data set, leave a partial last batch, or
// exceed it, in float64 and float32.
func TestPredictMatchesNaive(t *testing.T) {
	const k = 3
	for _, tc := range []struct {
		net   MLP
		n     int
		batch int
		dt    graph.Dtype
		tol   float64
	}{
		{MLP{Sizes: []int{13, 6, 5, 4}, Activation: ReLU}, 23, 10, graph.Float64, 1e-12},
		{MLP{Sizes: []int{13, 6, 5, 4}, Activation: ReLU}, 23, 23, graph.Float64, 1e-12},
		{MLP{Sizes: []int{13, 6, 5, 4}, Activation: ReLU}, 23, 50, graph.Float64, 1e-12},
		{MLP{Sizes: []int{13, 6, 4}, Activation: Sigmoid}, 24, 8, graph.Float64, 1e-12},
		{MLP{Sizes: []int{13, 6, 4}, Activation: Sigmoid}, 23, 7, graph.Float32, 1e-5},
		{MLP{Sizes: []int{13, 4}}, 9, 4, graph.Float64, 1e-12},
	} {
		t.Run(fmt.Sprintf("%v_%v_N%d_B%d_%v", tc.net.Sizes, tc.net.act(), tc.n, tc.batch, tc.dt), func(t *testing.T) {
			data := synthetic(t, tc.n, tc.net.Inputs(), tc.net.Classes(), 5)
			theta := tc.net.Init(rand.New(rand.NewPCG(8, 8)), k, 1)
			p, err := NewPredictor(tc.net, k, tc.batch, tc.dt)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			want := naivePrediction(tc.net, theta, k, data)
			for rep := 0; rep < 2; rep++ { // a second pass reuses the compiled graph
				got, err := p.Predict(theta, data)
				if err != nil {
					t.Fatal(err)
				}
				if d := maxRelDiff(got.LogProbs, want.LogProbs); d > tc.tol {
					t.Errorf("log p̂(c|x) differs by %.3g", d)
				}
				if d := maxRelDiff(got.LogLik, want.LogLik); d > tc.tol {
					t.Errorf("log p̂(y|x) differs by %.3g", d)
				}
				if math.Abs(got.NLL-want.NLL) > tc.tol*math.Abs(want.NLL) {
					t.Errorf("NLL %v, want %v", got.NLL, want.NLL)
				}
				if got.Error != want.Error {
					t.Errorf("error %v, want %v", got.Error, want.Error)
				}
				if d := maxRelDiff(got.ChainNLL, want.ChainNLL); d > tc.tol {
					t.Errorf("chains' NLL %v, want %v", got.ChainNLL, want.ChainNLL)
				}
				if d := maxRelDiff(got.ChainError, want.ChainError); d > 1e-12 {
					t.Errorf("chains' error %v, want %v", got.ChainError, want.ChainError)
				}
				s := 0.0
				for _, v := range got.LogLik {
					s -= v
				}
				if math.Abs(s-got.NLL) > 1e-9*math.Abs(s) {
					t.Errorf("NLL %v is not the sum %v of −log p̂(y|x)", got.NLL, s)
				}
			}
		})
	}
}

// TestPredictEnsemble checks the ensemble formulas on hand-made cases: K
// copies of one chain predict like that chain, and the error and NLL follow
// the mean probability, not a vote.
func TestPredictEnsemble(t *testing.T) {
	net := MLP{Sizes: []int{2, 2}} // logits = x·W + b
	// Two chains: chain 0 is certain of class 0, chain 1 mildly prefers
	// class 1: the mean prefers class 0.
	// θ coordinate-major: W(2×2) then b(2); chain 0 then chain 1 per coordinate.
	theta := []float64{
		10, -1, // W[0][0]
		0, 1, // W[0][1]
		0, 0, // W[1][0]
		0, 0, // W[1][1]
		0, 0, // b[0]
		0, 0, // b[1]
	}
	data, err := NewMatrix([]float64{1, 0}, []int{1}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := Predict(net, theta, 2, data)
	if err != nil {
		t.Fatal(err)
	}
	sig := func(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
	p1 := (sig(-10) + sig(2)) / 2 // p̂(1|x)
	if math.Abs(pr.LogLik[0]-math.Log(p1)) > 1e-12 || math.Abs(pr.NLL+math.Log(p1)) > 1e-12 {
		t.Errorf("log p̂(y|x) = %v, NLL %v; want %v", pr.LogLik[0], pr.NLL, math.Log(p1))
	}
	if pr.Error != 1 {
		t.Errorf("error %v, want 1: the mean probability favours class 0", pr.Error)
	}
	// K identical chains: the ensemble of one chain.
	one := []float64{0.3, -0.2, 0.5, 0.1, -0.4, 0.2}
	three := make([]float64, 0, 18)
	for _, v := range one {
		three = append(three, v, v, v)
	}
	a, err := Predict(net, one, 1, data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Predict(net, three, 3, data)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxRelDiff(b.LogProbs, a.LogProbs); d > 1e-14 {
		t.Errorf("three copies of a chain: log p̂ %v, one chain %v", b.LogProbs, a.LogProbs)
	}
	if _, err := Predict(net, one, 2, data); err == nil {
		t.Error("Predict accepted positions of the wrong length")
	}
}

// TestMonitor checks the metric names and values, Summary, and that a
// monitor resumed from the latest positions reports the same metrics.
func TestMonitor(t *testing.T) {
	const k = 2
	net := MLP{Sizes: []int{6, 5, 3}, Activation: ReLU}
	test := synthetic(t, 17, 6, 3, 9)
	rng := rand.New(rand.NewPCG(4, 4))
	thetas := [][]float64{net.Init(rng, k, 1), net.Init(rng, k, 1), net.Init(rng, k, 1)}

	m, err := NewMonitor(net, k, test, MonitorConfig{Batch: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Metrics(); err == nil {
		t.Error("Metrics before any observation did not fail")
	}
	for step, th := range thetas {
		if err := m.Observe(step+1, th); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := m.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	want := naivePrediction(net, thetas[2], k, test)
	names := []string{MetricError, MetricNLL, MetricErrorChain, MetricNLLChain, MetricNLLChainMax, "weight_rms_1", "weight_rms_2"}
	if len(ms) != len(names) {
		t.Fatalf("metrics %v, want %v", ms, names)
	}
	for i, name := range names {
		if ms[i].Name != name {
			t.Fatalf("metrics %v, want %v", ms, names)
		}
	}
	chainErr := (want.ChainError[0] + want.ChainError[1]) / 2
	chainNLL := (want.ChainNLL[0] + want.ChainNLL[1]) / 2
	worst := math.Max(want.ChainNLL[0], want.ChainNLL[1])
	if ms[0].Value != want.Error || math.Abs(ms[1].Value-want.NLL) > 1e-9*want.NLL ||
		math.Abs(ms[2].Value-chainErr) > 1e-12 || math.Abs(ms[3].Value-chainNLL) > 1e-9*chainNLL || math.Abs(ms[4].Value-worst) > 1e-9*worst {
		t.Errorf("metrics %v, want error %v NLL %v, chains' error %v NLL %v worst %v", ms, want.Error, want.NLL, chainErr, chainNLL, worst)
	}
	blocks := []tasks.Block{{Name: "w1", Lo: 0, Hi: 30}, {Name: "w2", Lo: 35, Hi: 50}}
	if got := m.Blocks(); !slices.Equal(got, blocks) {
		t.Errorf("blocks %v, want %v", got, blocks)
	}
	// layer l's weights, chain c, entry (i, j): naive walk over the chains and entries
	for l, got := range ms[5:] {
		w, _ := net.Offsets(l)
		ss, n := 0.0, 0
		for c := 0; c < k; c++ {
			for e := 0; e < net.Sizes[l]*net.Sizes[l+1]; e++ {
				v := thetas[2][(w+e)*k+c]
				ss += v * v
				n++
			}
		}
		if rms := math.Sqrt(ss / float64(n)); math.Abs(got.Value-rms) > 1e-12*rms {
			t.Errorf("%s = %v, want %v", got.Name, got.Value, rms)
		}
	}
	if want.ChainNLL[0] == want.ChainNLL[1] || chainNLL < want.NLL {
		t.Errorf("chains' NLL %v against the ensemble's %v: the test cannot tell the mean from the worst, or breaks Jensen", want.ChainNLL, want.NLL)
	}
	sum, err := m.Summary()
	if err != nil || fmt.Sprint(sum) != fmt.Sprint(ms) {
		t.Errorf("Summary %v (%v), want the last metrics %v", sum, err, ms)
	}
	if err := m.Observe(4, make([]float64, 3)); err == nil {
		t.Error("Observe accepted positions of the wrong length")
	}

	// a fresh monitor resumed at the last positions reports what this one does
	resumed, err := NewMonitor(net, k, test, MonitorConfig{Batch: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	if err := resumed.Resume(3, thetas[2]); err != nil {
		t.Fatal(err)
	}
	if got, err := resumed.Metrics(); err != nil || fmt.Sprint(got) != fmt.Sprint(ms) {
		t.Errorf("resumed at step 3: metrics %v (%v), want %v", got, err, ms)
	}
}
