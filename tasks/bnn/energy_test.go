package bnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/graph/graphtest"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// synthetic returns a data set of n examples of in features and c classes:
// features N(0, 1), labels uniform, from seed.
func synthetic(t testing.TB, n, in, c int, seed uint64) *Matrix {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x73796e))
	x := make([]float64, n*in)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	y := make([]int, n)
	for i := range y {
		y[i] = rng.IntN(c)
	}
	d, err := NewMatrix(x, y, in, c)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// compiled returns the energy of net on data, with minibatches of batch
// examples, compiled for k chains in dt; the test's cleanup closes it.
func compiled(t testing.TB, net MLP, data Dataset, batch, k int, dt graph.Dtype) *tasks.Evaluator {
	t.Helper()
	e, err := New(net, data, batch)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := tasks.Compile(e, k, dt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ev.Close() })
	return ev
}

// maxRelDiff returns max_i |a_i − b_i| / max(max_i |b_i|, tiny).
func maxRelDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	scale, diff := 1e-300, 0.0
	for i := range b {
		scale = math.Max(scale, math.Abs(b[i]))
		diff = math.Max(diff, math.Abs(a[i]-b[i]))
		if math.IsNaN(a[i]) {
			return math.Inf(1)
		}
	}
	return diff / scale
}

func TestDim(t *testing.T) {
	for _, tc := range []struct {
		net  MLP
		want int
	}{
		{NTTrain, 15910},
		{NTTest, 33450},
		{AFTest, 33450},
		{DataTrain, 15805},
		{DataTest, 33245},
		{MLP{Sizes: []int{3, 2}}, 8},
	} {
		if got := tc.net.Dim(); got != tc.want {
			t.Errorf("%v: Dim = %d, want %d", tc.net.Sizes, got, tc.want)
		}
		// The layers tile θ: each layer starts where the previous ends.
		end := 0
		for l := 0; l < tc.net.Layers(); l++ {
			w, b := tc.net.Offsets(l)
			if w != end || b != w+tc.net.Sizes[l]*tc.net.Sizes[l+1] {
				t.Errorf("%v layer %d: offsets %d, %d after %d", tc.net.Sizes, l, w, b, end)
			}
			end = b + tc.net.Sizes[l+1]
		}
		if end != tc.want {
			t.Errorf("%v: layers end at %d, want %d", tc.net.Sizes, end, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		net MLP
		ok  bool
	}{
		{NTTest, true},
		{MLP{Sizes: []int{4, 3}, Activation: Sigmoid, PriorStd: 2}, true},
		{MLP{Sizes: []int{4}}, false},
		{MLP{Sizes: []int{4, 0, 3}}, false},
		{MLP{Sizes: []int{4, 1}}, false},
		{MLP{Sizes: []int{4, 3}, Activation: "tanh"}, false},
		{MLP{Sizes: []int{4, 3}, PriorStd: -1}, false},
	} {
		if err := tc.net.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate() = %v, want ok %v", tc.net, err, tc.ok)
		}
	}
	d := synthetic(t, 10, 4, 3, 1)
	for _, tc := range []struct {
		net   MLP
		batch int
	}{{MLP{Sizes: []int{5, 3}}, 2}, {MLP{Sizes: []int{4, 2}}, 2}, {MLP{Sizes: []int{4, 3}}, 0}, {MLP{Sizes: []int{4, 3}}, 11}} {
		if _, err := New(tc.net, d, tc.batch); err == nil {
			t.Errorf("New(%v, 4 inputs 3 classes, batch %d) accepted", tc.net.Sizes, tc.batch)
		}
	}
}

// oracleCase is a network and data set for comparisons with the oracle.
type oracleCase struct {
	name        string
	net         MLP
	n, batch    int
	thetaStd    float64
	dataSeed    uint64
	tol64, tol3 float64
}

var oracleCases = []oracleCase{
	{"relu 1 hidden", MLP{Sizes: []int{13, 6, 4}, Activation: ReLU}, 23, 7, 0.5, 1, 1e-9, 1e-4},
	{"relu 2 hidden", MLP{Sizes: []int{13, 6, 5, 4}, Activation: ReLU}, 23, 7, 0.5, 2, 1e-9, 1e-4},
	{"sigmoid 1 hidden", MLP{Sizes: []int{13, 6, 4}, Activation: Sigmoid}, 23, 7, 0.5, 3, 1e-9, 1e-4},
	{"sigmoid 2 hidden", MLP{Sizes: []int{13, 6, 5, 4}, Activation: Sigmoid}, 23, 7, 0.5, 4, 1e-9, 1e-4},
	{"relu 2 hidden prior σ 0.7", MLP{Sizes: []int{9, 5, 4, 3}, Activation: ReLU, PriorStd: 0.7}, 20, 7, 0.5, 5, 1e-9, 1e-4},
	{"no hidden layer", MLP{Sizes: []int{9, 3}}, 20, 7, 0.5, 6, 1e-9, 1e-4},
	{"batch of one, two classes", MLP{Sizes: []int{9, 4, 3, 2}, Activation: Sigmoid}, 5, 1, 0.5, 9, 1e-9, 1e-4},
	{"relu 784-20-10", MLP{Sizes: []int{784, 20, 10}, Activation: ReLU}, 30, 7, 0.05, 7, 1e-9, 1e-4},
	{"sigmoid 784-8-8-5", MLP{Sizes: []int{784, 8, 8, 5}, Activation: Sigmoid}, 30, 7, 0.05, 8, 1e-9, 1e-4},
}

// TestEnergyMatchesOracle checks U, the prior and ∇U of the compiled graph
// for K = 3 chains, over three consecutive minibatches, against the
// hand-written oracle on the same minibatches, in float64 and float32.
func TestEnergyMatchesOracle(t *testing.T) {
	const k = 3
	for _, tc := range oracleCases {
		for _, dt := range []graph.Dtype{graph.Float64, graph.Float32} {
			t.Run(fmt.Sprintf("%s/%v", tc.name, dt), func(t *testing.T) {
				tol := tc.tol64
				if dt == graph.Float32 {
					tol = tc.tol3
				}
				data := synthetic(t, tc.n, tc.net.Inputs(), tc.net.Classes(), tc.dataSeed)
				ev := compiled(t, tc.net, data, tc.batch, k, dt)
				if ev.Dim() != tc.net.Dim() || ev.DataSize() != float64(tc.n) {
					t.Errorf("Dim %d, DataSize %v; want %d, %d", ev.Dim(), ev.DataSize(), tc.net.Dim(), tc.n)
				}
				theta := tc.net.Init(rand.New(rand.NewPCG(tc.dataSeed, 9)), k, tc.thetaStd)
				thetaCopy := append([]float64(nil), theta...)
				// The oracle replays the graph's minibatches from a twin source.
				rng, twin := rand.New(rand.NewPCG(42, 1)), rand.New(rand.NewPCG(42, 1))
				b := mustBatcher(t, data, tc.batch)
				x := make([]float64, tc.batch*tc.net.Inputs())
				y := make([]int, tc.batch)
				o := newOracle[float64](tc.net, k, tc.batch)
				want := samplers.NewEval(tc.net.Dim(), k)
				got := samplers.NewEval(tc.net.Dim(), k)
				for step := 0; step < 3; step++ {
					if err := ev.Evaluate(rng, theta, got); err != nil {
						t.Fatal(err)
					}
					if _, err := b.next(twin, x, y); err != nil {
						t.Fatal(err)
					}
					o.eval(theta, x, y, float64(tc.n), want.U, want.Grad)
					for c := 0; c < k; c++ {
						col := make([]float64, tc.net.Dim())
						for i := range col {
							col[i] = theta[i*k+c]
						}
						want.Prior[c] = priorEnergy(tc.net, col)
					}
					for i := range want.PriorGrad {
						want.PriorGrad[i] = theta[i] / (tc.net.Sigma() * tc.net.Sigma())
					}
					for _, cmp := range []struct {
						what      string
						got, want []float64
					}{{"U", got.U, want.U}, {"∇U", got.Grad, want.Grad}, {"prior", got.Prior, want.Prior}, {"∇prior", got.PriorGrad, want.PriorGrad}} {
						d := maxRelDiff(cmp.got, cmp.want)
						if step == 0 {
							t.Logf("%s: relative difference %.3g", cmp.what, d)
						}
						if !(d <= tol) {
							t.Errorf("batch %d: %s differs from the oracle by %.3g (relative to its largest entry), tolerance %g", step, cmp.what, d, tol)
						}
					}
				}
				if maxRelDiff(theta, thetaCopy) != 0 {
					t.Error("Evaluate modified theta")
				}
			})
		}
	}
}

// TestEnergyRepeatable checks that evaluating the same positions on the same
// minibatch twice gives bit-identical results (no input is overwritten in
// place by the compiled graph).
func TestEnergyRepeatable(t *testing.T) {
	net := MLP{Sizes: []int{13, 6, 5, 4}, Activation: ReLU}
	data := synthetic(t, 14, 13, 4, 11)
	ev := compiled(t, net, data, 14, 2, graph.Float64) // full batch: every evaluation sees the same examples
	theta := net.Init(rand.New(rand.NewPCG(1, 2)), 2, 0.5)
	var first *samplers.Eval
	for i := 0; i < 3; i++ {
		got := samplers.NewEval(net.Dim(), 2)
		if err := ev.Evaluate(rand.New(rand.NewPCG(7, 7)), theta, got); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = got
			continue
		}
		if maxRelDiff(got.U, first.U) != 0 || maxRelDiff(got.Grad, first.Grad) != 0 {
			t.Fatalf("evaluation %d differs from the first", i)
		}
	}
}

// TestGradientFiniteDifferences checks ∇U of the graph against central
// finite differences of U at a tiny size, in float64, for both activations.
func TestGradientFiniteDifferences(t *testing.T) {
	const k = 2
	for _, tc := range []struct {
		name string
		net  MLP
	}{
		{"sigmoid", MLP{Sizes: []int{5, 4, 3, 3}, Activation: Sigmoid}},
		{"relu", MLP{Sizes: []int{5, 4, 3, 3}, Activation: ReLU}},
		{"relu 1 hidden σ 2", MLP{Sizes: []int{5, 4, 3}, Activation: ReLU, PriorStd: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := synthetic(t, 6, 5, 3, 21)
			ev := compiled(t, tc.net, data, 6, k, graph.Float64) // full batch: U is a deterministic function of θ
			theta := tc.net.Init(rand.New(rand.NewPCG(3, 3)), k, 0.7)
			eval := samplers.NewEval(tc.net.Dim(), k)
			f := func() (float64, error) {
				if err := ev.Evaluate(rand.New(rand.NewPCG(5, 5)), theta, eval); err != nil {
					return 0, err
				}
				return eval.U[0] + eval.U[1], nil
			}
			if _, err := f(); err != nil {
				t.Fatal(err)
			}
			grad := append([]float64(nil), eval.Grad...)
			res, err := graphtest.CheckGradient(f, [][]float64{theta}, [][]float64{grad}, 1e-6, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("∇U against finite differences: %v", res)
			if res.Worst > 1e-6 {
				t.Errorf("∇U against finite differences: %v", res)
			}
		})
	}
}

// TestMinibatches checks that the minibatch sequence of a model depends only
// on the seed of the source passed to Next, and that every data epoch visits
// each example at most once and all but N mod M of them exactly once, with
// the labels of the examples it loads.
func TestMinibatches(t *testing.T) {
	for _, tc := range []struct{ n, batch int }{{12, 4}, {14, 4}, {5, 5}, {7, 1}} {
		t.Run(fmt.Sprintf("N=%d,M=%d", tc.n, tc.batch), func(t *testing.T) {
			const in, c = 3, 3
			x := make([]float64, tc.n*in)
			y := make([]int, tc.n)
			for i := 0; i < tc.n; i++ {
				x[i*in] = float64(i) // feature 0 names the example
				y[i] = i % c
			}
			data, err := NewMatrix(x, y, in, c)
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(MLP{Sizes: []int{in, 2, c}}, data, tc.batch)
			if err != nil {
				t.Fatal(err)
			}
			run := func(seed uint64, epochs int) [][]int {
				g := G.NewGraph()
				theta := graph.Input(g, graph.Float64, "theta", e.Dim(), 2)
				m, err := e.Build(g, theta)
				if err != nil {
					t.Fatal(err)
				}
				xn, yn := g.ByName("bnn.X")[0], g.ByName("bnn.Y")[0]
				rng := rand.New(rand.NewPCG(seed, 0))
				var out [][]int
				for ep := 0; ep < epochs; ep++ {
					var ids []int
					for b := 0; b < m.Batches.PerEpoch(); b++ {
						if err := m.Next(rng); err != nil {
							t.Fatal(err)
						}
						xv, _ := graph.Value(xn, nil)
						yv, _ := graph.Value(yn, nil)
						for r := 0; r < tc.batch; r++ {
							id := int(xv[r*in])
							ids = append(ids, id)
							for j := 0; j < c; j++ {
								want := 0.0
								if j == y[id] {
									want = 1
								}
								if yv[r*c+j] != want {
									t.Fatalf("row %d (example %d): one-hot label %v, want class %d", r, id, yv[r*c:(r+1)*c], y[id])
								}
							}
						}
					}
					out = append(out, ids)
				}
				return out
			}
			a, b, other := run(1, 3), run(1, 3), run(2, 3)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("the same seed gave different minibatches:\n%v\n%v", a, b)
			}
			if tc.n > 3 && fmt.Sprint(a) == fmt.Sprint(other) {
				t.Errorf("seeds 1 and 2 gave the same minibatches %v", a)
			}
			for ep, ids := range a {
				seen := map[int]int{}
				for _, id := range ids {
					seen[id]++
				}
				if len(ids) != tc.n-tc.n%tc.batch || len(seen) != len(ids) {
					t.Errorf("epoch %d visits %v: want %d distinct examples once each", ep, ids, tc.n-tc.n%tc.batch)
				}
			}
			if tc.n > 3 && fmt.Sprint(a[0]) == fmt.Sprint(a[1]) && fmt.Sprint(a[1]) == fmt.Sprint(a[2]) {
				t.Errorf("three epochs in the same order %v", a[0])
			}
		})
	}
}

// TestBuildTwiceInOneGraph checks that two models of one energy can live in
// the same graph (their data inputs get distinct names) and draw their own
// minibatch sequences.
func TestBuildTwiceInOneGraph(t *testing.T) {
	net := MLP{Sizes: []int{4, 3, 2}}
	e, err := New(net, synthetic(t, 8, 4, 2, 3), 2)
	if err != nil {
		t.Fatal(err)
	}
	g := G.NewGraph()
	t1 := graph.Input(g, graph.Float64, "t1", net.Dim(), 2)
	t2 := graph.Input(g, graph.Float32, "t2", net.Dim(), 3)
	if _, err := e.Build(g, t1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Build(g, t2); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Build(g, graph.Input(g, graph.Float64, "bad", net.Dim()+1, 2)); err == nil {
		t.Error("Build accepted positions of the wrong dimension")
	}
}

// TestKeepLastWeighsTheShortBatch checks Energy.KeepLast against the oracle
// over two data epochs of 7 examples in batches of 3: batches of 3, 3 and
// the 1 example left over, each weighted N/M' for its own size M', so the
// short batch's U and ∇U are those of a batch of one. EvaluateAgain at
// other positions stays on the last minibatch. Without KeepLast the epoch
// has two batches and the example left over is dropped.
func TestKeepLastWeighsTheShortBatch(t *testing.T) {
	const n, batch, k = 7, 3, 2
	net := MLP{Sizes: []int{5, 4, 3}, Activation: ReLU}
	data := synthetic(t, n, net.Inputs(), net.Classes(), 11)
	e, err := New(net, data, batch)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := tasks.Compile(e.KeepLast(), k, graph.Float64)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	dropping, err := tasks.Compile(e, k, graph.Float64)
	if err != nil {
		t.Fatal(err)
	}
	defer dropping.Close()
	if a, b := dropping.Batches().PerEpoch(), ev.Batches().PerEpoch(); a != 2 || b != 3 {
		t.Errorf("%d and %d batches per epoch, want 2 and (KeepLast) 3", a, b)
	}
	if !ev.Batches().KeepsLast() {
		t.Error("the compiled energy's order drops the short last batch")
	}
	rng, twin := rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(5, 6))
	b, err := newBatcher(data, batch, true)
	if err != nil {
		t.Fatal(err)
	}
	x, y := make([]float64, batch*net.Inputs()), make([]int, batch)
	theta := net.Init(rand.New(rand.NewPCG(1, 2)), k, 0.5)
	other := net.Init(rand.New(rand.NewPCG(3, 4)), k, 0.5)
	got := samplers.NewEval(net.Dim(), k)
	seen := 0
	for step, want := range []int{3, 3, 1, 3, 3, 1} {
		if err := ev.Evaluate(rng, theta, got); err != nil {
			t.Fatal(err)
		}
		rows, err := b.next(twin, x, y)
		if err != nil {
			t.Fatal(err)
		}
		if rows != want {
			t.Fatalf("batch %d has %d examples, want %d", step, rows, want)
		}
		seen += rows
		o := newOracle[float64](net, k, rows)
		u, grad := make([]float64, k), make([]float64, net.Dim()*k)
		o.eval(theta, x[:rows*net.Inputs()], y[:rows], n, u, grad)
		if d := maxRelDiff(got.U, u); d > 1e-9 {
			t.Errorf("batch %d of %d: U %v, oracle %v", step, rows, got.U, u)
		}
		if d := maxRelDiff(got.Grad, grad); d > 1e-9 {
			t.Errorf("batch %d of %d: ∇U differs from the oracle by %.3g", step, rows, d)
		}
		// again, elsewhere, on the same minibatch
		if err := ev.EvaluateAgain(other, got); err != nil {
			t.Fatal(err)
		}
		o.eval(other, x[:rows*net.Inputs()], y[:rows], n, u, grad)
		if d := maxRelDiff(got.U, u); d > 1e-9 {
			t.Errorf("batch %d again: U %v, oracle %v", step, got.U, u)
		}
		if d := maxRelDiff(got.Grad, grad); d > 1e-9 {
			t.Errorf("batch %d again: ∇U differs from the oracle by %.3g", step, d)
		}
	}
	if seen != 2*n {
		t.Errorf("two epochs visited %d examples, want %d", seen, 2*n)
	}
}
