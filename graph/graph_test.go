package graph

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph/graphtest"
)

// scalarFn builds a scalar cost of the input x.
type scalarFn func(x *G.Node) (*G.Node, error)

func sum(f func(x *G.Node) (*G.Node, error)) scalarFn {
	return func(x *G.Node) (*G.Node, error) {
		y, err := f(x)
		if err != nil {
			return nil, err
		}
		// a non-trivial weighting so that every output entry matters differently
		w := make([]float64, y.Shape().TotalSize())
		for i := range w {
			w[i] = 1 + 0.37*float64(i%5)
		}
		wc := Constant(x.Graph(), x.Dtype(), "weights", w, y.Shape()...)
		return G.Sum(G.Must(G.HadamardProd(G.Must(G.Tanh(y)), wc)))
	}
}

// checkFirstAndSecond checks d cost/dx and d/dx Σ (d cost/dx)² against
// central finite differences of the graph's own values, in float64.
func checkFirstAndSecond(t *testing.T, name string, f scalarFn, shape []int, x0 []float64) {
	t.Helper()
	g := G.NewGraph()
	x := Input(g, Float64, "x", shape...)
	if err := SetValue(x, x0); err != nil {
		t.Fatal(err)
	}
	cost, err := f(x)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	d1, err := Grad(cost, x)
	if err != nil {
		t.Fatalf("%s: first Grad: %v", name, err)
	}
	cost2 := G.Must(G.Sum(G.Must(G.Square(d1[0]))))
	d2, err := Grad(cost2, x)
	if err != nil {
		t.Fatalf("%s: second Grad: %v", name, err)
	}
	p, err := Compile(cost, d1[0], cost2, d2[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	graphtest.FreezeStopGradients(g, true) // the derivatives treat stop-gradient values as constants
	for _, c := range []struct {
		cost, grad *G.Node
		order      string
	}{{cost, d1[0], "first"}, {cost2, d2[0], "second"}} {
		eval := runScalar(p, c.cost)
		if _, err := eval(); err != nil {
			t.Fatal(err)
		}
		an, err := Value(c.grad, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := graphtest.CheckGradient(eval, [][]float64{graphtest.Data(x)}, [][]float64{an}, 1e-6, 0)
		if err != nil {
			t.Fatal(err)
		}
		// central differences with h = 1e-6 on smooth O(1) functions are
		// accurate to about 1e-9; 1e-6 leaves room for rounding.
		if res.Worst > 1e-6 {
			t.Errorf("%s, %s derivative: %v", name, c.order, res)
		}
	}
}

func TestOpsFirstAndSecondDerivatives(t *testing.T) {
	x0 := []float64{0.5, -1.5, 2, -0.3, 0.8, 1.2}
	tests := []struct {
		name  string
		f     scalarFn
		shape []int
	}{
		{"Rectify", sum(func(x *G.Node) (*G.Node, error) { return G.HadamardProd(G.Must(G.Rectify(x)), x) }), []int{6}},
		{"Abs", sum(func(x *G.Node) (*G.Node, error) { return G.HadamardProd(G.Must(G.Abs(x)), x) }), []int{6}},
		{"Clamp", sum(func(x *G.Node) (*G.Node, error) { return G.HadamardProd(Clamp(x, -1, 1), x) }), []int{6}},
		{"Copy", sum(func(x *G.Node) (*G.Node, error) { return G.HadamardProd(Copy(x), x) }), []int{6}},
		{"Neg", sum(func(x *G.Node) (*G.Node, error) { return G.HadamardProd(Neg(G.Must(G.Square(x))), x) }), []int{6}},
		{"our Abs", sum(func(x *G.Node) (*G.Node, error) { return G.HadamardProd(Abs(x), x) }), []int{6}},
		{"our Sqrt", sum(func(x *G.Node) (*G.Node, error) {
			return G.HadamardProd(Sqrt(G.Must(G.Add(G.Must(G.Square(x)), Scalar(x.Graph(), Float64, 1)))), x)
		}), []int{6}},
		{"our Expm1", sum(func(x *G.Node) (*G.Node, error) { return G.HadamardProd(Expm1(x), x) }), []int{6}},
		{"StopGradient", sum(func(x *G.Node) (*G.Node, error) { return G.Add(StopGradient(G.Must(G.Square(x))), G.Must(G.Cube(x))) }), []int{6}},
		{"LogSoftmax axis 1", sum(func(x *G.Node) (*G.Node, error) { return LogSoftmax(x, 1) }), []int{2, 3}},
		{"LogSoftmax axis 0", sum(func(x *G.Node) (*G.Node, error) { return LogSoftmax(x, 0) }), []int{2, 3}},
		{"Slice", sum(func(x *G.Node) (*G.Node, error) {
			a, err := Slice(x, 1, 1, 3)
			if err != nil {
				return nil, err
			}
			return G.HadamardProd(a, a)
		}), []int{2, 3}},
		{"Concat", sum(func(x *G.Node) (*G.Node, error) {
			a := G.Must(Slice(x, 0, 0, 1))
			b := G.Must(Slice(x, 0, 1, 2))
			return Concat(1, G.Must(G.Square(b)), a, G.Must(G.HadamardProd(a, b)))
		}), []int{2, 3}},
		{"Reshape", sum(func(x *G.Node) (*G.Node, error) {
			r, err := Reshape(x, 3, 2)
			if err != nil {
				return nil, err
			}
			return G.Mul(r, G.Must(Reshape(x, 2, 3)))
		}), []int{2, 3}},
		{"Sqrt via Inverse", sum(func(x *G.Node) (*G.Node, error) {
			return G.Inverse(G.Must(G.Sqrt(G.Must(G.Add(G.Must(G.Square(x)), Scalar(x.Graph(), Float64, 1))))))
		}), []int{6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkFirstAndSecond(t, tc.name, tc.f, tc.shape, x0) })
	}
}

func TestFloat32ForwardMatchesFloat64(t *testing.T) {
	x0 := []float64{0.5, -1.5, 2, -0.3, 0.8, 1.2}
	var vals [2][]float64
	for i, dt := range []tensor.Dtype{Float64, Float32} {
		g := G.NewGraph()
		x := Input(g, dt, "x", 2, 3)
		if err := SetValue(x, x0); err != nil {
			t.Fatal(err)
		}
		ls := G.Must(LogSoftmax(G.Must(G.HadamardProd(Clamp(G.Must(G.Abs(x)), 0, 1.6), G.Must(G.Rectify(x)))), 1))
		y := G.Must(Concat(0, ls, G.Must(Reshape(Copy(x), 2, 3))))
		cost := G.Must(G.Sum(y))
		d, err := Grad(cost, x)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(y, d[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		a, _ := Value(y, nil)
		b, _ := Value(d[0], nil)
		vals[i] = append(a, b...)
	}
	for i := range vals[0] {
		// float32 rounding of O(1) values: relative error about 1e-7
		if math.Abs(vals[0][i]-vals[1][i]) > 1e-5*(1+math.Abs(vals[0][i])) {
			t.Errorf("entry %d: float64 %v, float32 %v", i, vals[0][i], vals[1][i])
		}
	}
}

func TestGradWithRespectToIntermediateNode(t *testing.T) {
	g := G.NewGraph()
	x := Input(g, Float64, "x", 3)
	SetValue(x, []float64{1, 2, 3})
	y := G.Must(G.Square(x))
	z := G.Must(G.Sum(G.Must(G.HadamardProd(y, y)))) // Σ y², dz/dy = 2y
	d, err := Grad(z, y)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(d[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	got, _ := Value(d[0], nil)
	for i, want := range []float64{2, 8, 18} {
		if got[i] != want {
			t.Errorf("dz/dy[%d] = %v, want %v", i, got[i], want)
		}
	}
}

func TestGradOfUnreachableNodeIsZero(t *testing.T) {
	g := G.NewGraph()
	x := Input(g, Float64, "x", 3)
	w := Input(g, Float64, "w", 2, 2)
	z := G.Must(G.Sum(G.Must(G.Square(StopGradient(w)))))
	z = G.Must(G.Add(z, G.Must(G.Sum(x))))
	d, err := Grad(z, w, x)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(d...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	dw, _ := Value(d[0], nil)
	dx, _ := Value(d[1], nil)
	if len(dw) != 4 || dw[0] != 0 || dw[3] != 0 {
		t.Errorf("dz/dw = %v, want 4 zeros", dw)
	}
	if dx[0] != 1 || dx[2] != 1 {
		t.Errorf("dz/dx = %v, want ones", dx)
	}
}

func TestCheckGradientDetectsAWrongGradient(t *testing.T) {
	x := []float64{1, 2}
	f := func() (float64, error) { return x[0]*x[0] + 3*x[1], nil }
	good, err := graphtest.CheckGradient(f, [][]float64{x}, [][]float64{{2, 3}}, 1e-6, 0)
	if err != nil || good.Worst > 1e-8 {
		t.Fatalf("right gradient flagged: %v %v", good, err)
	}
	bad, _ := graphtest.CheckGradient(f, [][]float64{x}, [][]float64{{2, 1.5}}, 1e-6, 0)
	if bad.Worst < 0.3 || bad.Index != 1 {
		t.Errorf("wrong gradient not flagged: %v", bad)
	}
	if x[0] != 1 || x[1] != 2 {
		t.Errorf("parameters not restored: %v", x)
	}
}

func TestFreezeStopGradientsHoldsValues(t *testing.T) {
	g := G.NewGraph()
	x := Input(g, Float64, "x", 1)
	SetValue(x, []float64{2})
	y := G.Must(G.HadamardProd(StopGradient(x), x)) // analytic dy/dx = sg(x) = 2
	d, _ := Grad(G.Must(G.Sum(y)), x)
	p, err := Compile(y, d[0])
	if err != nil {
		t.Fatal(err)
	}
	f := runScalar(p, y)
	f()
	an, _ := Value(d[0], nil)
	free, _ := graphtest.CheckGradient(f, [][]float64{graphtest.Data(x)}, [][]float64{an}, 1e-6, 0)
	f() // run at the unperturbed point, then hold its stop-gradient values
	graphtest.FreezeStopGradients(g, true)
	frozen, _ := graphtest.CheckGradient(f, [][]float64{graphtest.Data(x)}, [][]float64{an}, 1e-6, 0)
	// without freezing, FD sees d(x²)/dx = 4 ≠ 2
	if free.Worst < 0.3 {
		t.Errorf("unfrozen FD should disagree with the stop-gradient derivative: %v", free)
	}
	if frozen.Worst > 1e-8 {
		t.Errorf("frozen FD should agree: %v", frozen)
	}
}

func TestClampGateIsTheClampsDerivative(t *testing.T) {
	g := G.NewGraph()
	x := Input(g, Float64, "x", 5)
	gate := ClampGate(x, -1, 2)
	prog, err := Compile(gate)
	if err != nil {
		t.Fatal(err)
	}
	if err := SetValue(x, []float64{-3, -1, 0.5, 2, 7}); err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	got, err := Value(gate, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 0, 1, 0, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("gate(%d) = %v, want %v", i, got[i], want[i])
		}
	}
}

// GradRows gives Grad's gradient, as the row slices' own gradients where
// the cost uses x through non-overlapping row slices alone, and as one
// block otherwise; rows in no block have zero gradient.
func TestGradRows(t *testing.T) {
	xv := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12} // (6, 2)
	for _, c := range []struct {
		name   string
		cost   func(x *G.Node) *G.Node
		blocks [][2]int
	}{
		{"slices that cover x", func(x *G.Node) *G.Node {
			a := G.Must(Slice(x, 0, 0, 2))
			b := G.Must(Slice(x, 0, 2, 6))
			c := G.Must(Slice(b, 0, 1, 3)) // a slice of a slice: b's use
			ab := G.Must(G.Add(G.Must(G.Sum(G.Must(G.Square(a)))), G.Must(G.Sum(G.Must(G.HadamardProd(b, b))))))
			return G.Must(G.Add(ab, G.Must(G.Sum(c))))
		}, [][2]int{{0, 2}, {2, 6}}},
		{"a gap", func(x *G.Node) *G.Node {
			a := G.Must(Slice(x, 0, 0, 1))
			b := G.Must(Slice(x, 0, 3, 5))
			return G.Must(G.Add(G.Must(G.Sum(G.Must(G.Square(a)))), G.Must(G.Sum(G.Must(G.Cube(b))))))
		}, [][2]int{{0, 1}, {3, 5}}},
		{"overlapping slices", func(x *G.Node) *G.Node {
			a := G.Must(Slice(x, 0, 0, 3))
			b := G.Must(Slice(x, 0, 2, 6))
			return G.Must(G.Add(G.Must(G.Sum(G.Must(G.Square(a)))), G.Must(G.Sum(G.Must(G.Cube(b))))))
		}, [][2]int{{0, 6}}},
		{"x itself used too", func(x *G.Node) *G.Node {
			a := G.Must(Slice(x, 0, 0, 3))
			return G.Must(G.Add(G.Must(G.Sum(G.Must(G.Square(a)))), G.Must(G.Sum(G.Must(G.Cube(x))))))
		}, [][2]int{{0, 6}}},
		{"a column slice", func(x *G.Node) *G.Node {
			return G.Must(G.Sum(G.Must(G.Square(G.Must(Slice(x, 1, 0, 1))))))
		}, [][2]int{{0, 6}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := G.NewGraph()
			x := Input(g, Float64, "x", 6, 2)
			if err := SetValue(x, xv); err != nil {
				t.Fatal(err)
			}
			cost := c.cost(x)
			blocks, err := GradRows(cost, x)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Grad(cost, x)
			if err != nil {
				t.Fatal(err)
			}
			outs := G.Nodes{want[0]}
			for i, b := range blocks {
				if i >= len(c.blocks) || [2]int{b.Lo, b.Hi} != c.blocks[i] {
					t.Fatalf("block %d is rows [%d, %d), want the blocks %v", i, b.Lo, b.Hi, c.blocks)
				}
				outs = append(outs, b.Grad)
			}
			if len(blocks) != len(c.blocks) {
				t.Fatalf("%d blocks, want %v", len(blocks), c.blocks)
			}
			p, err := Compile(outs...)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Run(); err != nil {
				t.Fatal(err)
			}
			w, _ := Value(want[0], nil)
			got := make([]float64, len(w))
			for _, b := range blocks {
				v, _ := Value(b.Grad, nil)
				copy(got[b.Lo*2:b.Hi*2], v)
			}
			for i := range w {
				if got[i] != w[i] {
					t.Errorf("element %d: %v from the blocks, %v from Grad", i, got[i], w[i])
				}
			}
		})
	}
}
