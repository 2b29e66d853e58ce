package netgraph

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
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
			if m.Weights.Activation == coordnet.Tanh {
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
func mlpCosts(t *testing.T, fused bool, act coordnet.Activation, hidden []int) (vals [][]float64) {
	rng := rand.New(rand.NewPCG(8, 9))
	w := coordnet.New(3, hidden, act, rng)
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
	for _, act := range []coordnet.Activation{coordnet.ReLU, coordnet.Tanh} {
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
	m, _ := NewNet(g, graph.Float64, "f", coordnet.New(2, []int{3}, coordnet.Tanh, rand.New(rand.NewPCG(1, 1))))
	x := graph.Input(g, graph.Float64, "x", 4, 2)
	f := G.Must(m.Forward(x))
	d1s, err := graph.Grad(G.Must(G.Sum(f)), m.Params()[0]) // ParamGrad
	if err != nil {
		t.Fatal(err)
	}
	d1 := d1s[0]
	if _, err := graph.Grad(G.Must(G.Sum(G.Must(G.Square(d1)))), m.Params()[0]); err == nil {
		t.Error("differentiating a parameter gradient again should be an error")
	}
}

func TestNet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, act := range []coordnet.Activation{coordnet.ReLU, coordnet.Tanh} {
		w := coordnet.New(3, []int{4, 5}, act, rng)
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

// newOp returns the op of the given kind for a network of the given layer
// sizes and activation.
func newOp(kind coordnet.Kind, sizes []int, act coordnet.Activation) mlpOp {
	return newMLPOp(coordnet.Spec{Kind: kind, Sizes: sizes, Act: act})
}

// Every kind of op, and ops for networks that differ in one size or in
// the activation, hash apart.
func TestOpHashesDistinguishParameters(t *testing.T) {
	err := graphtest.CheckOpHashes(func() []G.Op {
		var ops []G.Op
		for kind := coordnet.Value; kind <= coordnet.Mixed; kind++ {
			ops = append(ops, newOp(kind, []int{3, 10, 1}, coordnet.ReLU))
		}
		return append(ops, newOp(coordnet.Value, []int{3, 10, 1}, coordnet.Tanh), newOp(coordnet.Value, []int{3, 11, 1}, coordnet.ReLU),
			newOp(coordnet.Value, []int{2, 10, 1}, coordnet.ReLU), newOp(coordnet.Value, []int{3, 10, 10, 1}, coordnet.ReLU))
	})
	if err != nil {
		t.Error(err)
	}
}

// The ops hash as they did in package graph, where they were written
// first: "metasgmcmc." and their name; graphs are therefore built node for
// node as before.
func TestOpHashIsNamespaceAndName(t *testing.T) {
	for kind := coordnet.Value; kind <= coordnet.Mixed; kind++ {
		op := newOp(kind, []int{2, 10, 1}, coordnet.ReLU)
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
	m, err := NewNet(g, dt, "f", coordnet.New(3, []int{5}, coordnet.ReLU, rand.New(rand.NewPCG(3, 4))))
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
