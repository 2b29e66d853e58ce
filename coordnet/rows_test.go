package coordnet

import (
	"math/rand/v2"
	"testing"
)

// TestChainNetEval evaluates ChainNet on rows of every length up to 40,
// for chain counts below, at and above the vector width and first
// coordinates of every chain, with the vector kernels where the machine
// has them and without, and requires Weights.Eval's values bit for bit.
func TestChainNetEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	for _, inputs := range []int{2, 3} {
		for _, k := range []int{1, 3, 8, 20} {
			net := New(inputs, []int{10}, ReLU, rng)
			u := make([]float64, k)
			for c := range u {
				u[c] = rng.NormFloat64()
			}
			s := NewChainNet(net, u)
			for n := 0; n <= 40; n++ {
				x, g := make([]float64, n), make([]float64, n)
				for i := range x {
					x[i], g[i] = 3*rng.NormFloat64(), 3*rng.NormFloat64()
				}
				if inputs == 2 {
					g = nil
				}
				for c0 := 0; c0 < k; c0++ {
					rowsIn := make([]float64, 0, n*inputs)
					for i := range x {
						rowsIn = append(rowsIn, u[(c0+i)%k], x[i])
						if g != nil {
							rowsIn = append(rowsIn, g[i])
						}
					}
					want := make([]float64, n)
					net.Eval(rowsIn, want)
					for _, simd := range []bool{true, false} {
						useSIMD = simd && simdAvailable
						got := make([]float64, n)
						s.Eval(got, x, g, c0)
						kernels := useSIMD
						useSIMD = simdAvailable
						for i := range want {
							if got[i] != want[i] {
								t.Fatalf("%d inputs, %d chains, %d rows from chain %d, vector kernels %v: row %d is %v, Eval gives %v",
									inputs, k, n, c0, kernels, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestGradNetRows requires GradNet, with its vector kernels where the
// machine has them and without, to give InputGrad's values and derivatives
// (with row weights 1) bit for bit, on rows of every length up to 20. Unit
// 0 has no bias and row 2 zero inputs, so that one pre-activation is
// exactly 0, where the unit is off.
func TestGradNetRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 2))
	qw := New(2, []int{10}, ReLU, rng)
	dw := New(3, []int{10}, ReLU, rng)
	qw.B[0][0], dw.B[0][0] = 0, 0
	q, d := NewGradNet(qw), NewGradNet(dw)
	for n := 0; n <= 20; n++ {
		u, x, g, ones := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		var qRows, dRows []float64
		for i := range u {
			if i != 2 {
				u[i], x[i], g[i] = rng.NormFloat64(), 3*rng.NormFloat64(), 3*rng.NormFloat64()
			}
			ones[i] = 1
			qRows, dRows = append(qRows, u[i], x[i]), append(dRows, u[i], x[i], g[i])
		}
		qf, qd, df, dd := make([]float64, n), make([]float64, 2*n), make([]float64, n), make([]float64, 3*n)
		qw.InputGrad(qRows, ones, qf, qd)
		dw.InputGrad(dRows, ones, df, dd)
		for _, simd := range []bool{true, false} {
			useSIMD = simd && simdAvailable
			f, du, dx := make([]float64, n), make([]float64, n), make([]float64, n)
			q.InputGrad2(f, du, dx, u, x)
			for i := range f {
				if f[i] != qf[i] || du[i] != qd[2*i] || dx[i] != qd[2*i+1] {
					t.Fatalf("f_Q, %d rows, vector kernels %v, row %d: (%v, %v, %v), InputGrad (%v, %v, %v)",
						n, useSIMD, i, f[i], du[i], dx[i], qf[i], qd[2*i], qd[2*i+1])
				}
			}
			d.InputGrad3(f, dx, u, x, g)
			for i := range f {
				if f[i] != df[i] || dx[i] != dd[3*i+1] {
					t.Fatalf("f_D, %d rows, vector kernels %v, row %d: (%v, %v), InputGrad (%v, %v)",
						n, useSIMD, i, f[i], dx[i], df[i], dd[3*i+1])
				}
			}
			useSIMD = simdAvailable
		}
	}
}
