package bnn

import (
	"math/rand/v2"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks/mnist"
)

func TestNewMatrix(t *testing.T) {
	for _, tc := range []struct {
		name            string
		x               []float64
		y               []int
		inputs, classes int
		ok              bool
	}{
		{"valid", []float64{1, 2, 3, 4}, []int{0, 1}, 2, 2, true},
		{"short features", []float64{1, 2, 3}, []int{0, 1}, 2, 2, false},
		{"label too large", []float64{1, 2, 3, 4}, []int{0, 2}, 2, 2, false},
		{"negative label", []float64{1, 2, 3, 4}, []int{-1, 0}, 2, 2, false},
		{"one class", []float64{1, 2}, []int{0}, 2, 1, false},
		{"empty", nil, nil, 2, 2, false},
	} {
		m, err := NewMatrix(tc.x, tc.y, tc.inputs, tc.classes)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok %v", tc.name, err, tc.ok)
			continue
		}
		if tc.ok {
			x := make([]float64, tc.inputs)
			if l := m.Example(1, x); l != tc.y[1] || x[0] != tc.x[2] || x[1] != tc.x[3] || m.Len() != 2 {
				t.Errorf("%s: example 1 = %v, label %d", tc.name, x, l)
			}
		}
	}
}

func TestMNISTAdapter(t *testing.T) {
	pixels := make([]byte, 3*mnist.Dim)
	for i := range pixels {
		pixels[i] = byte(i * 13)
	}
	set := &mnist.Set{Pixels: pixels, Labels: []int{7, 2, 9}, N: 3, Classes: 10}
	for _, tc := range []struct {
		name  string
		set   *mnist.Set
		n, c  int
		label int // of example 0
	}{
		{"full", set, 3, 10, 7},
		{"subset 9, 7", set.Subset(9, 7), 2, 2, 1},
	} {
		d := MNIST(tc.set)
		if d.Len() != tc.n || d.Inputs() != mnist.Dim || d.Classes() != tc.c {
			t.Errorf("%s: %d examples of %d inputs, %d classes", tc.name, d.Len(), d.Inputs(), d.Classes())
		}
		x := make([]float64, mnist.Dim)
		if l := d.Example(0, x); l != tc.label {
			t.Errorf("%s: label %d, want %d", tc.name, l, tc.label)
		}
		want := tc.set.Image(0, nil)
		for j := range want {
			if x[j] != want[j] {
				t.Fatalf("%s: pixel %d = %v, want %v", tc.name, j, x[j], want[j])
			}
		}
	}
}

// TestOneChain checks the graph with K = 1 against the oracle.
func TestOneChain(t *testing.T) {
	net := MLP{Sizes: []int{7, 5, 4, 3}, Activation: Sigmoid}
	data := synthetic(t, 10, 7, 3, 2)
	ev := compiled(t, net, data, 4, 1, graph.Float64)
	theta := net.Init(rand.New(rand.NewPCG(1, 1)), 1, 0.5)
	got := samplers.NewEval(net.Dim(), 1)
	if err := ev.Evaluate(rand.New(rand.NewPCG(3, 3)), theta, got); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 4*7)
	y := make([]int, 4)
	if _, err := mustBatcher(t, data, 4).next(rand.New(rand.NewPCG(3, 3)), x, y); err != nil {
		t.Fatal(err)
	}
	u, grad := make([]float64, 1), make([]float64, net.Dim())
	newOracle[float64](net, 1, 4).eval(theta, x, y, 10, u, grad)
	if d := maxRelDiff(got.U, u); d > 1e-9 {
		t.Errorf("U %v, oracle %v", got.U, u)
	}
	if d := maxRelDiff(got.Grad, grad); d > 1e-9 {
		t.Errorf("∇U differs from the oracle by %.3g", d)
	}
}

func mustBatcher(tb testing.TB, data Dataset, batch int) *batcher {
	tb.Helper()
	b, err := newBatcher(data, batch, false)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
