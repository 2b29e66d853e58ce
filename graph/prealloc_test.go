package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// rerunGraph builds a graph with every op of this package and the Gorgonia
// ops the tasks use (matrix products, broadcasts, element-wise arithmetic),
// first and second derivatives included, and returns its inputs and
// outputs.
func rerunGraph(t *testing.T, dt tensor.Dtype) (G.Nodes, G.Nodes) {
	t.Helper()
	g := G.NewGraph()
	x := Input(g, dt, "x", 1000, 3)
	theta := Input(g, dt, "theta", 4, 2)
	f := G.Must(G.Sum(G.Must(G.HadamardProd(x, Sqrt(Abs(x)))), 1))
	clamped := Clamp(G.Must(G.HadamardProd(f, Abs(Neg(f)))), -0.5, 0.5)
	prior := G.Must(GaussianPrior(theta, 1.5))
	// Slices, a pad (their gradient), a concat and a matrix product
	top := G.Must(Slice(theta, 0, 0, 3))
	cat := G.Must(Concat(0, top, StopGradient(G.Must(Slice(theta, 0, 1, 4)))))
	prod := G.Must(G.Mul(G.Must(Reshape(G.Must(Slice(x, 0, 0, 6)), 3, 6)), G.Must(Reshape(cat, 6, 2))))
	bias := G.Must(G.BroadcastAdd(prod, G.Must(Slice(theta, 0, 3, 4)), nil, []byte{0}))
	cost := G.Must(G.Add(
		G.Must(G.Add(G.Must(G.Sum(clamped)), G.Must(G.Sum(prior)))),
		G.Must(G.Sum(G.Must(G.Square(bias))))))
	// first derivatives w.r.t. the data and the positions
	grads, err := Grad(cost, x, theta)
	if err != nil {
		t.Fatal(err)
	}
	// a second derivative through the data's gradient
	dx := grads[0]
	second, err := Grad(G.Must(G.Sum(G.Must(G.Square(dx)))), x)
	if err != nil {
		t.Fatal(err)
	}
	outs := append(G.Nodes{cost, clamped, prior, bias}, grads...)
	return G.Nodes{x, theta}, append(outs, second...)
}

// setRandom gives every input fresh random values.
func setRandom(t *testing.T, inputs G.Nodes, rng *rand.Rand) {
	t.Helper()
	for _, n := range inputs {
		v := make([]float64, n.Shape().TotalSize())
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		if err := SetValue(n, v); err != nil {
			t.Fatal(err)
		}
	}
}

// readAll copies the values of every node.
func readAll(t *testing.T, nodes G.Nodes) [][]float64 {
	t.Helper()
	out := make([][]float64, len(nodes))
	for i, n := range nodes {
		v, err := Value(n, nil)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = v
	}
	return out
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A program run again, with new inputs, gives bit for bit what a freshly
// compiled program gives on those inputs, although from the second run on
// every op writes into the memory of its last result; and it allocates far
// less than on its first run. (Five runs, each with new inputs.)
func TestProgramRerunMatchesFreshProgram(t *testing.T) {
	for _, dt := range []tensor.Dtype{Float64, Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			in, out := rerunGraph(t, dt)
			p, err := Compile(out...)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			var runs [][][]float64
			var bytes []uint64
			const runs0 = 5
			for seed := range uint64(runs0) {
				setRandom(t, in, rand.New(rand.NewPCG(seed, 1)))
				bytes = append(bytes, allocated(func() {
					if err := p.Run(); err != nil {
						t.Fatal(err)
					}
				}))
				runs = append(runs, readAll(t, out))
			}
			for seed := range uint64(runs0) {
				fin, fout := rerunGraph(t, dt)
				q, err := Compile(fout...)
				if err != nil {
					t.Fatal(err)
				}
				setRandom(t, fin, rand.New(rand.NewPCG(seed, 1)))
				if err := q.Run(); err != nil {
					t.Fatal(err)
				}
				if err := sameBits(runs[seed], readAll(t, fout)); err != nil {
					t.Errorf("run %d: %v", seed+1, err)
				}
				q.Close()
			}
			// the least of the later runs: the counts include whatever
			// else the process allocated meanwhile; under the race
			// detector, whose runtime allocates on its own, only the
			// results are compared
			if later := slices.Min(bytes[1:]); later > bytes[0]/2 && !raceEnabled {
				t.Errorf("the runs after the first allocated at least %d bytes each, the first %d: the results are not written in place", later, bytes[0])
			}
		})
	}
}

func sameBits(want, got [][]float64) error {
	for i := range want {
		if len(want[i]) != len(got[i]) {
			return fmt.Errorf("output %d: %d values, want %d", i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			if math.Float64bits(want[i][j]) != math.Float64bits(got[i][j]) {
				return fmt.Errorf("output %d[%d] = %v, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
	return nil
}
