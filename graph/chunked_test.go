package graph

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
)

// TestChunkedMatchesOneBlock computes y = tanh(a·x) row-wise and Σ x·y over
// 10 rows, in one block and in blocks of 4 (so with a remainder of 2).
func TestChunkedMatchesOneBlock(t *testing.T) {
	build := func(rows int) (in, out, sum G.Nodes, err error) {
		g := G.NewGraph()
		x := Input(g, Float64, "x", rows)
		a := Input(g, Float64, "a", rows)
		y := G.Must(G.Tanh(G.Must(G.HadamardProd(a, x))))
		s := G.Must(G.Sum(G.Must(G.HadamardProd(x, y))))
		return G.Nodes{x, a}, G.Nodes{y}, G.Nodes{s}, nil
	}
	x, a := make([]float64, 10), make([]float64, 10)
	for i := range x {
		x[i], a[i] = float64(i)-4.5, 0.1*float64(i)
	}
	var ys [2][]float64
	var sums [2]float64
	for j, chunk := range []int{10, 4} {
		c, err := NewChunked(10, chunk, build)
		if err != nil {
			t.Fatal(err)
		}
		ys[j] = make([]float64, 10)
		s := make([]float64, 1)
		if err := c.Run([][]float64{x, a}, [][]float64{ys[j]}, [][]float64{s}); err != nil {
			t.Fatal(err)
		}
		sums[j] = s[0]
	}
	want := 0.0
	for i := range x {
		y := math.Tanh(a[i] * x[i])
		want += x[i] * y
		for j := range ys {
			if math.Abs(ys[j][i]-y) > 1e-15 {
				t.Errorf("row %d: %v, want %v", i, ys[j][i], y)
			}
		}
	}
	for j := range sums {
		if math.Abs(sums[j]-want) > 1e-12 {
			t.Errorf("sum %d: %v, want %v", j, sums[j], want)
		}
	}
}

// TestChunkedWorkersGiveIdenticalResults runs 103 rows in blocks of 8 with
// one worker and with four, which run blocks in parallel: outputs and block
// sums must agree bit for bit, and repeated runs must too.
func TestChunkedWorkersGiveIdenticalResults(t *testing.T) {
	build := func(rows int) (in, out, sum G.Nodes, err error) {
		g := G.NewGraph()
		x := Input(g, Float64, "x", rows)
		y := G.Must(G.Tanh(G.Must(G.HadamardProd(x, x))))
		s := G.Must(G.Sum(G.Must(G.HadamardProd(x, y))))
		return G.Nodes{x}, G.Nodes{y}, G.Nodes{s}, nil
	}
	const n = 103
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Sin(float64(i)) * 1.7
	}
	run := func(procs int) ([]float64, float64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		c, err := NewChunked(n, 8, build)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.full) != procs {
			t.Fatalf("%d workers with GOMAXPROCS %d", len(c.full), procs)
		}
		y, s := make([]float64, n), make([]float64, 1)
		for r := 0; r < 3; r++ {
			if err := c.Run([][]float64{x}, [][]float64{y}, [][]float64{s}); err != nil {
				t.Fatal(err)
			}
		}
		return y, s[0]
	}
	y1, s1 := run(1)
	y4, s4 := run(4)
	for i := range y1 {
		if math.Float64bits(y1[i]) != math.Float64bits(y4[i]) {
			t.Fatalf("row %d: %v with one worker, %v with four", i, y1[i], y4[i])
		}
	}
	if math.Float64bits(s1) != math.Float64bits(s4) {
		t.Errorf("sum: %v with one worker, %v with four", s1, s4)
	}
}

// TestChunkedBuildErrors checks that NewChunked reports a builder's error
// for the full blocks and for the shorter last block, and outputs of the
// wrong shape, after closing what it had compiled.
func TestChunkedBuildErrors(t *testing.T) {
	failAt := func(bad int) ChunkBuilder {
		return func(rows int) (in, out, sum G.Nodes, err error) {
			if rows == bad {
				return nil, nil, nil, fmt.Errorf("no graph for %d rows", rows)
			}
			g := G.NewGraph()
			x := Input(g, Float64, "x", rows)
			return G.Nodes{x}, G.Nodes{G.Must(G.Tanh(x))}, nil, nil
		}
	}
	wrongShape := func(rows int) (in, out, sum G.Nodes, err error) {
		g := G.NewGraph()
		x := Input(g, Float64, "x", rows)
		return G.Nodes{x}, G.Nodes{Input(g, Float64, "y", rows+1)}, nil, nil
	}
	for name, c := range map[string]struct {
		build ChunkBuilder
		want  string
	}{
		"full blocks": {failAt(4), "no graph for 4 rows"},
		"last block":  {failAt(2), "no graph for 2 rows"},
		"shape":       {wrongShape, "want (4)"},
	} {
		if _, err := NewChunked(10, 4, c.build); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
}
