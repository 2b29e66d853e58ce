package coordnet

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

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
// gives, bit for bit, for every Kind, so switching them on
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
	for kind := Value; kind <= Mixed; kind++ {
		op := w.Spec(kind)
		data := append([][]float64{x}, w.Params()...)
		size := n
		switch kind {
		case InputGrad:
			data, size = append(data, g), in*n
		case ParamGrad:
			data, size = append(data, g), w.NumParams()
		case JVP:
			data = append(data, hdir)
		case InputHVP:
			data, size = append(data, g, hdir), in*n
		case Mixed:
			data, size = append(data, g, hdir), w.NumParams()
		}
		run := func(fast bool) (out, value []float64) {
			shallowFastPath = fast
			defer func() { shallowFastPath = true }()
			out = make([]float64, size)
			if kind == InputGrad {
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
					t.Fatalf("%s%v(%s)%s[%d]: fast path %v, general %v", kindNames[kind], op.Sizes, op.Act, c.name, i, c.fast[i], c.slow[i])
				}
			}
		}
	}
}

// BenchmarkShallowMLP times NNSGHMC's trained network shapes (f_Q: 2 → 10
// → 1 and f_D: 3 → 10 → 1, ReLU) on 2^20 rows, every Kind,
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
			kind  Kind
			extra [][]float64
			size  int
		}{
			{"value", Value, nil, n},
			{"value+grad", InputGrad, [][]float64{g}, in * n},
			{"paramgrad", ParamGrad, [][]float64{g}, w.NumParams()},
			{"jvp", JVP, [][]float64{hdir}, n},
			{"inputhvp", InputHVP, [][]float64{g, hdir}, in * n},
			{"mixed", Mixed, [][]float64{g, hdir}, w.NumParams()},
		} {
			op := w.Spec(c.kind)
			data := append(append([][]float64{}, params...), c.extra...)
			out := make([]float64, c.size)
			var value []float64
			if c.kind == InputGrad {
				value = make([]float64, n)
			}
			reduce := c.kind == ParamGrad || c.kind == Mixed
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
	run := func(procs int, kind Kind) []float64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		op := w.Spec(kind)
		data := append([][]float64{x}, w.Params()...)
		data = append(data, g)
		if kind == Mixed {
			data = append(data, hdir)
		}
		out := make([]float64, w.NumParams())
		op.compute(data, out, nil)
		return out
	}
	for _, kind := range []Kind{ParamGrad, Mixed} {
		a, b := run(1, kind), run(3, kind)
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				t.Fatalf("%s: parameter %d: %v with one worker, %v with three", kindNames[kind], i, a[i], b[i])
			}
		}
	}
}

// kindNames name the kinds in the tests' messages.
var kindNames = map[Kind]string{Value: "Value", InputGrad: "InputGrad", ParamGrad: "ParamGrad", JVP: "JVP", InputHVP: "InputHVP", Mixed: "Mixed"}

// TestSpecCompute checks that Spec.Compute sets out whatever it held —
// Eval's values bit for bit, and a reduction's sum as into zeros — and
// panics on inputs that do not fit its spec.
func TestSpecCompute(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	w := New(3, []int{4, 2}, Tanh, rng)
	n := 50
	x, g := make([]float64, 3*n), make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	data := append([][]float64{x}, w.Params()...)
	garbage := func(v []float64) []float64 {
		for i := range v {
			v[i] = math.NaN()
		}
		return v
	}
	want, got := make([]float64, n), garbage(make([]float64, n))
	w.Eval(x, want)
	w.Spec(Value).Compute(data, got)
	pg := append(data, g)
	wantPG, gotPG := make([]float64, w.NumParams()), garbage(make([]float64, w.NumParams()))
	w.Spec(ParamGrad).compute(pg, wantPG, nil)
	w.Spec(ParamGrad).Compute(pg, gotPG)
	for _, c := range [][2][]float64{{want, got}, {wantPG, gotPG}} {
		for i := range c[0] {
			if math.Float64bits(c[0][i]) != math.Float64bits(c[1][i]) {
				t.Fatalf("entry %d: Compute %v, want %v", i, c[1][i], c[0][i])
			}
		}
	}
	for name, f := range map[string]func(){
		"short out":   func() { w.Spec(Value).Compute(data, make([]float64, n-1)) },
		"no g":        func() { w.Spec(InputGrad).Compute(data, make([]float64, 3*n)) },
		"short H":     func() { w.Spec(JVP).Compute(append(data, g), make([]float64, n)) },
		"ragged X":    func() { w.Spec(Value).Compute(append([][]float64{x[1:]}, w.Params()...), make([]float64, n)) },
		"wrong sizes": func() { (Spec{Kind: Value, Sizes: []int{3, 4, 1}, Act: Tanh}).Compute(data, make([]float64, n)) },
		"unknown kind": func() {
			(Spec{Kind: Mixed + 1, Sizes: w.Spec(Value).Sizes, Act: Tanh}).Compute(data, make([]float64, n))
		},
		"no activation":  func() { (Spec{Kind: Value, Sizes: w.Spec(Value).Sizes}).Compute(data, make([]float64, n)) },
		"no output unit": func() { (Spec{Kind: Value, Sizes: []int{3, 4, 2, 2}, Act: Tanh}).Compute(data, make([]float64, n)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Compute did not panic", name)
				}
			}()
			f()
		}()
	}
}
