package coordnet

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/graph/graphtest"
)

// primitiveForward is the per-coordinate MLP built from Gorgonia's own
// primitives: the oracle for the fused ops.
func primitiveForward(m *Net, x *G.Node) *G.Node {
	h := x
	for l := range m.W {
		z := G.Must(G.BroadcastAdd(G.Must(G.Mul(h, m.W[l])), m.B[l], nil, []byte{0}))
		if l+1 < len(m.W) {
			if m.Weights.Activation == Tanh {
				z = G.Must(G.Tanh(z))
			} else {
				z = G.Must(G.Rectify(z))
			}
		}
		h = z
	}
	return G.Must(G.Reshape(h, tensor.Shape{x.Shape()[0]}))
}

// mlpCosts builds, for a network applied to X, a scalar cost that uses the
// network's value and its input-gradient in a state-dependent way, as
// NNSGHMC's step does: c = Σ w1·f + Σ w2·(∂f/∂x)∘(f² · column weights),
// and its gradients w.r.t. X and every weight.
func mlpCosts(t *testing.T, fused bool, act Activation, hidden []int) (vals [][]float64) {
	rng := rand.New(rand.NewPCG(8, 9))
	w := New(3, hidden, act, rng)
	const n = 9
	g := G.NewGraph()
	m, err := NewNet(g, graph.Float64, "f", w)
	if err != nil {
		t.Fatal(err)
	}
	x := graph.Input(g, graph.Float64, "x", n, 3)
	xs := make([]float64, n*3)
	for i := range xs {
		xs[i] = rng.NormFloat64()
	}
	graph.SetValue(x, xs)
	var f *G.Node
	if fused {
		f = G.Must(m.Forward(x))
	} else {
		f = primitiveForward(m, x)
	}
	w1 := graph.Constant(g, graph.Float64, "w1", []float64{1, -2, 0.5, 3, 1, 1, -1, 2, 0.3}, n)
	// ∂(Σ f²·w1)/∂x: the input gradient with a value-dependent upstream
	dfxs, err := graph.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(G.Square(f)), w1)))), x)
	if err != nil {
		t.Fatal(err)
	}
	dfx := dfxs[0]
	colw := graph.Constant(g, graph.Float64, "colw", []float64{0.7, -1.1, 0.4}, 1, 3)
	inner := G.Must(G.BroadcastHadamardProd(dfx, colw, nil, []byte{0}))
	cost := G.Must(G.Add(G.Must(G.Sum(G.Must(G.HadamardProd(f, w1)))), G.Must(G.Sum(G.Must(G.Square(inner))))))
	grads, err := graph.Grad(cost, append(G.Nodes{x}, m.Params()...)...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := graph.Compile(append(G.Nodes{f, dfx, cost}, grads...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	for _, nd := range append(G.Nodes{f, dfx, cost}, grads...) {
		v, err := graph.Value(nd, nil)
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, v)
	}
	// finite differences of the cost w.r.t. the weights (second order in the
	// network through dfx)
	eval := func() (float64, error) {
		if err := m.Sync(); err != nil {
			return 0, err
		}
		err := p.Run()
		v, _ := graph.Value(cost, nil)
		return v[0], err
	}
	params := w.Params()
	res, err := graphtest.CheckGradient(eval, append([][]float64{graphtest.Data(x)}, params...), vals[3:], 1e-6, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Worst > 1e-6 {
		t.Errorf("fused %v %s %v: gradient of a cost with second-order terms: %v", fused, act, hidden, res)
	}
	return vals
}

// TestFusedMLPMatchesPrimitives compares the fused MLP ops with the same
// network built from Gorgonia's primitives, through first and second
// derivatives, and both with finite differences, for ReLU and tanh networks
// of one and two hidden layers.
func TestFusedMLPMatchesPrimitives(t *testing.T) {
	for _, act := range []Activation{ReLU, Tanh} {
		for _, hidden := range [][]int{{5}, {4, 3}} {
			fused := mlpCosts(t, true, act, hidden)
			prim := mlpCosts(t, false, act, hidden)
			for j := range fused {
				for i := range fused[j] {
					if math.Abs(fused[j][i]-prim[j][i]) > 1e-12*(1+math.Abs(prim[j][i])) {
						t.Fatalf("%s %v: output %d entry %d: fused %v, primitives %v", act, hidden, j, i, fused[j][i], prim[j][i])
					}
				}
			}
		}
	}
}

func TestFusedMLPThirdDerivativeIsAnError(t *testing.T) {
	g := G.NewGraph()
	m, _ := NewNet(g, graph.Float64, "f", New(2, []int{3}, Tanh, rand.New(rand.NewPCG(1, 1))))
	x := graph.Input(g, graph.Float64, "x", 4, 2)
	f := G.Must(m.Forward(x))
	d1s, err := graph.Grad(G.Must(G.Sum(f)), m.Params()[0]) // mlpParamGrad
	if err != nil {
		t.Fatal(err)
	}
	d1 := d1s[0]
	if _, err := graph.Grad(G.Must(G.Sum(G.Must(G.Square(d1)))), m.Params()[0]); err == nil {
		t.Error("differentiating a parameter gradient again should be an error")
	}
}

// TestMLPInputGradMatchesFiniteDifferences checks the graph-free input
// gradient g_i·∇ₓf(x_i) against central differences of Eval, and its
// values against Eval, over more rows
// than one kernel block so that the blocks and workers are exercised.
func TestMLPInputGradMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, act := range []Activation{ReLU, Tanh} {
		w := New(3, []int{6, 4}, act, rng)
		n := 3*mlpBlock + 17
		x, g := make([]float64, 3*n), make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := range g {
			g[i] = rng.NormFloat64()
		}
		dx, val, want := make([]float64, 3*n), make([]float64, n), make([]float64, n)
		w.InputGrad(x, g, val, dx)
		w.Eval(x, want)
		for i := range want {
			if val[i] != want[i] {
				t.Fatalf("%s: row %d: InputGrad's value %v, Eval %v", act, i, val[i], want[i])
			}
		}
		fp, fm := make([]float64, n), make([]float64, n)
		const h = 1e-6
		for j := 0; j < 3; j++ {
			xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
			for i := 0; i < n; i++ {
				xp[3*i+j] += h
				xm[3*i+j] -= h
			}
			w.Eval(xp, fp)
			w.Eval(xm, fm)
			for i := 0; i < n; i++ {
				want := g[i] * (fp[i] - fm[i]) / (2 * h)
				if math.Abs(dx[3*i+j]-want) > 1e-6*(1+math.Abs(want)) {
					t.Fatalf("%s: row %d input %d: InputGrad %v, finite differences %v", act, i, j, dx[3*i+j], want)
				}
			}
		}
	}
}

// TestShallowFastPathIsBitIdentical checks that the row-by-row kernels of
// one-hidden-layer networks give exactly what the general blocked kernel
// gives, bit for bit, for every kind of fused op, so switching them on
// changes no result. A few inputs, upstream gradients and directions are
// exact zeros, which the general kernel skips in its sums. (The derivative
// kinds of tanh networks, and hidden layers of 1 unit or of in·h >
// smallLayer, take the general kernel both ways.)
func TestShallowFastPathIsBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	normals := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 2 * rng.NormFloat64()
			if rng.IntN(20) == 0 {
				v[i] = 0
			}
		}
		return v
	}
	for _, act := range []Activation{ReLU, Tanh} {
		for _, in := range []int{2, 3, 4} { // 2 and 3: the specialised ReLU kernels
			for _, hidden := range []int{10, 1, 200} {
				w := New(in, []int{hidden}, act, rng)
				testShallowFastPath(t, w, normals)
			}
		}
	}
}

// testShallowFastPath compares the fast paths with the general kernel for
// the network w over a few blocks of rows.
func testShallowFastPath(t *testing.T, w *Weights, normals func(int) []float64) {
	in, n := w.Inputs, 2*mlpBlock+31
	x, g, hdir := normals(in*n), normals(n), normals(in*n)
	for kind := mlpValue; kind <= mlpMixed; kind++ {
		op := newMLPOp(kind, w.sizes(), w.Activation)
		data := append([][]float64{x}, w.Params()...)
		size := n
		switch kind {
		case mlpInputGrad:
			data, size = append(data, g), in*n
		case mlpParamGrad:
			data, size = append(data, g), w.NumParams()
		case mlpJVP:
			data = append(data, hdir)
		case mlpInputHVP:
			data, size = append(data, g, hdir), in*n
		case mlpMixed:
			data, size = append(data, g, hdir), w.NumParams()
		}
		run := func(fast bool) (out, value []float64) {
			shallowFastPath = fast
			defer func() { shallowFastPath = true }()
			out = make([]float64, size)
			if kind == mlpInputGrad {
				value = make([]float64, n) // the network's values from the same pass
			}
			op.compute(data, out, value)
			return out, value
		}
		fout, fval := run(true)
		sout, sval := run(false)
		for _, c := range []struct {
			name       string
			fast, slow []float64
		}{{"", fout, sout}, {" value", fval, sval}} {
			for i := range c.fast {
				if math.Float64bits(c.fast[i]) != math.Float64bits(c.slow[i]) {
					t.Fatalf("%v%s[%d]: fast path %v, general %v", op, c.name, i, c.fast[i], c.slow[i])
				}
			}
		}
	}
}

// BenchmarkShallowMLP times NNSGHMC's trained network shapes (f_Q: 2 → 10
// → 1 and f_D: 3 → 10 → 1, ReLU) on 2^20 rows, every kind of fused op,
// with the row-by-row kernels and with the general blocked one.
//
//	go test ./coordnet -run '^$' -bench ShallowMLP
func BenchmarkShallowMLP(b *testing.B) {
	const n = 1 << 20
	for _, net := range []struct {
		name string
		in   int
	}{{"fQ", 2}, {"fD", 3}} {
		in := net.in
		rng := rand.New(rand.NewPCG(1, 1))
		w := New(in, []int{10}, ReLU, rng)
		x, g, hdir := make([]float64, in*n), make([]float64, n), make([]float64, in*n)
		for i := range x {
			x[i], hdir[i] = rng.NormFloat64(), rng.NormFloat64()
		}
		for i := range g {
			g[i] = 1
		}
		params := append([][]float64{x}, w.Params()...)
		for _, c := range []struct {
			name  string
			kind  mlpKind
			extra [][]float64
			size  int
		}{
			{"value", mlpValue, nil, n},
			{"value+grad", mlpInputGrad, [][]float64{g}, in * n},
			{"paramgrad", mlpParamGrad, [][]float64{g}, w.NumParams()},
			{"jvp", mlpJVP, [][]float64{hdir}, n},
			{"inputhvp", mlpInputHVP, [][]float64{g, hdir}, in * n},
			{"mixed", mlpMixed, [][]float64{g, hdir}, w.NumParams()},
		} {
			op := spec{kind: c.kind, sizes: w.sizes(), act: w.Activation}
			data := append(append([][]float64{}, params...), c.extra...)
			out := make([]float64, c.size)
			var value []float64
			if c.kind == mlpInputGrad {
				value = make([]float64, n)
			}
			reduce := c.kind == mlpParamGrad || c.kind == mlpMixed
			for _, fast := range []bool{true, false} {
				name := "rows"
				if !fast {
					name = "general" // the blocked kernel every other shape uses
				}
				b.Run(net.name+"/"+c.name+"/"+name, func(b *testing.B) {
					shallowFastPath = fast
					defer func() { shallowFastPath = true }()
					for i := 0; i < b.N; i++ {
						if reduce {
							clear(out) // compute adds into out
						}
						op.compute(data, out, value)
					}
					b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*n), "ns/row")
				})
			}
		}
	}
}

// TestMLPReductionsIndependentOfWorkers checks that the parameter gradients,
// sums over rows, come out bit for bit the same with one worker and with
// three, over rows spanning several spans.
func TestMLPReductionsIndependentOfWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	w := New(3, []int{5, 4}, Tanh, rng)
	n := 3*mlpSpan + 100
	x, g, hdir := make([]float64, 3*n), make([]float64, n), make([]float64, 3*n)
	for i := range x {
		x[i], hdir[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	run := func(procs int, kind mlpKind) []float64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		op := newMLPOp(kind, w.sizes(), w.Activation)
		data := append([][]float64{x}, w.Params()...)
		data = append(data, g)
		if kind == mlpMixed {
			data = append(data, hdir)
		}
		out := make([]float64, w.NumParams())
		op.compute(data, out, nil)
		return out
	}
	for _, kind := range []mlpKind{mlpParamGrad, mlpMixed} {
		a, b := run(1, kind), run(3, kind)
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				t.Fatalf("%s: parameter %d: %v with one worker, %v with three", mlpKindNames[kind], i, a[i], b[i])
			}
		}
	}
}

func TestNet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, act := range []Activation{ReLU, Tanh} {
		w := New(3, []int{4, 5}, act, rng)
		n := 7
		xin := make([]float64, n*3)
		for i := range xin {
			xin[i] = rng.NormFloat64()
		}
		want := make([]float64, n)
		w.Eval(xin, want)

		g := G.NewGraph()
		m, err := NewNet(g, graph.Float64, "f", w)
		if err != nil {
			t.Fatal(err)
		}
		x := graph.Input(g, graph.Float64, "x", n, 3)
		graph.SetValue(x, xin)
		y, err := m.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		cost := G.Must(G.Sum(G.Must(G.Square(y))))
		wrt := append(G.Nodes{x}, m.Params()...)
		grads, err := graph.Grad(cost, wrt...)
		if err != nil {
			t.Fatal(err)
		}
		p, err := graph.Compile(append(G.Nodes{y, cost}, grads...)...)
		if err != nil {
			t.Fatal(err)
		}
		eval := func() (float64, error) {
			if err := p.Run(); err != nil {
				return 0, err
			}
			v, err := graph.Value(cost, nil)
			return v[0], err
		}
		eval()
		got, _ := graph.Value(y, nil)
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Errorf("%s row %d: graph %v, plain Go %v", act, i, got[i], want[i])
			}
		}
		var params, an [][]float64
		for i, n := range wrt {
			params = append(params, graphtest.Data(n))
			v, _ := graph.Value(grads[i], nil)
			an = append(an, v)
		}
		res, err := graphtest.CheckGradient(eval, params, an, 1e-6, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Worst > 1e-6 {
			t.Errorf("%s: %v", act, res)
		}
	}
}

// Every kind of op, and ops for networks that differ in one size or in
// the activation, hash apart.
func TestOpHashesDistinguishParameters(t *testing.T) {
	err := graphtest.CheckOpHashes(func() []G.Op {
		var ops []G.Op
		for kind := mlpValue; kind <= mlpMixed; kind++ {
			ops = append(ops, newMLPOp(kind, []int{3, 10, 1}, ReLU))
		}
		return append(ops, newMLPOp(mlpValue, []int{3, 10, 1}, Tanh), newMLPOp(mlpValue, []int{3, 11, 1}, ReLU),
			newMLPOp(mlpValue, []int{2, 10, 1}, ReLU), newMLPOp(mlpValue, []int{3, 10, 10, 1}, ReLU))
	})
	if err != nil {
		t.Error(err)
	}
}

// The ops hash as they did in package graph, where they were written
// first: "metasgmcmc." and their name; graphs are therefore built node for
// node as before.
func TestOpHashIsNamespaceAndName(t *testing.T) {
	for kind := mlpValue; kind <= mlpMixed; kind++ {
		op := newMLPOp(kind, []int{2, 10, 1}, ReLU)
		h := fnv.New32a()
		h.Write([]byte("metasgmcmc." + op.String()))
		if op.Hashcode() != h.Sum32() {
			t.Errorf("%v hashes %08x, want FNV-1a of %q, %08x", op, op.Hashcode(), "metasgmcmc."+op.String(), h.Sum32())
		}
	}
}

// rerunGraph builds the network's value on 1000 rows and its derivatives
// of first and second order, which apply every kind of op, and returns the
// graph's inputs and outputs.
func rerunGraph(t *testing.T, dt tensor.Dtype) (G.Nodes, G.Nodes) {
	t.Helper()
	g := G.NewGraph()
	m, err := NewNet(g, dt, "f", New(3, []int{5}, ReLU, rand.New(rand.NewPCG(3, 4))))
	if err != nil {
		t.Fatal(err)
	}
	x := graph.Input(g, dt, "x", 1000, 3)
	f := G.Must(m.Forward(x))
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(f, f))))
	wrt := append(G.Nodes{x}, m.Params()...)
	grads, err := graph.Grad(cost, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	second, err := graph.Grad(G.Must(G.Sum(G.Must(G.Square(grads[0])))), wrt...)
	if err != nil {
		t.Fatal(err)
	}
	return wrt, append(append(G.Nodes{f, cost}, grads...), second...)
}

// A program run again on new inputs, each op writing into the memory of
// its last result, gives bit for bit what a freshly compiled program gives
// on those inputs.
func TestProgramRerunMatchesFreshProgram(t *testing.T) {
	for _, dt := range []tensor.Dtype{graph.Float64, graph.Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			run := func(p *graph.Program, in, out G.Nodes, seed uint64) [][]float64 {
				rng := rand.New(rand.NewPCG(seed, 1))
				for _, n := range in {
					v := make([]float64, n.Shape().TotalSize())
					for i := range v {
						v[i] = rng.NormFloat64()
					}
					if err := graph.SetValue(n, v); err != nil {
						t.Fatal(err)
					}
				}
				if err := p.Run(); err != nil {
					t.Fatal(err)
				}
				vals := make([][]float64, len(out))
				for i, n := range out {
					var err error
					if vals[i], err = graph.Value(n, nil); err != nil {
						t.Fatal(err)
					}
				}
				return vals
			}
			in, out := rerunGraph(t, dt)
			p, err := graph.Compile(out...)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			for seed := range uint64(3) {
				got := run(p, in, out, seed)
				fin, fout := rerunGraph(t, dt)
				q, err := graph.Compile(fout...)
				if err != nil {
					t.Fatal(err)
				}
				want := run(q, fin, fout, seed)
				q.Close()
				for i := range want {
					for j := range want[i] {
						if math.Float64bits(got[i][j]) != math.Float64bits(want[i][j]) {
							t.Fatalf("run %d, output %d[%d]: %v, fresh program %v", seed+1, i, j, got[i][j], want[i][j])
						}
					}
				}
			}
		})
	}
}
