package bnn

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// The oracle: the energy and its gradient written by hand in plain Go with
// gonum's BLAS, independent of the graph. The first layer of all chains is
// one matrix product straight on θ's memory (its W_0 rows are, row-major,
// the (fan_in, fan_out·K) matrix W0all), its gradient one matrix product
// written straight into ∇U; the later layers run chain by chain.

type float interface{ ~float32 | ~float64 }

// gemm computes c = alpha·op(a)·op(b) + beta·c for row-major matrices, with
// gonum's Dgemm or Sgemm.
func gemm[T float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if tA {
		ta = blas.Trans
	}
	if tB {
		tb = blas.Trans
	}
	switch a := any(a).(type) {
	case []float64:
		blas64.Implementation().Dgemm(ta, tb, m, n, k, float64(alpha), a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	case []float32:
		blas32.Implementation().Sgemm(ta, tb, m, n, k, float32(alpha), a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	}
}

// priorEnergy returns −log N(θ; 0, σ²I) = Σ_i [θ_i²/(2σ²) + ½·log(2πσ²)]
// of one chain's parameters of net (length Dim).
func priorEnergy(net MLP, theta []float64) float64 {
	s2 := net.Sigma() * net.Sigma()
	ss := 0.0
	for _, v := range theta {
		ss += v * v
	}
	return ss/(2*s2) + float64(len(theta))*0.5*math.Log(2*math.Pi*s2)
}

// oracle holds the work space of the hand-written energy for one network,
// K chains and batches of M rows.
type oracle[T float] struct {
	net  MLP
	k, m int
	z0   []T   // (M, H0·K) first-layer pre-activations of all chains
	dz0  []T   // its gradient
	w    [][]T // per later layer: one chain's W_l (in × out)
	dw   [][]T
	z    [][]T // per layer ≥ 0: one chain's pre-activations (M × out); z[0] gathered from z0
	h    [][]T // activations of those
	dz   [][]T
	dh   []T
	lsm  []T
}

func newOracle[T float](net MLP, k, m int) *oracle[T] {
	o := &oracle[T]{net: net, k: k, m: m}
	h0 := net.Sizes[1]
	o.z0 = make([]T, m*h0*k)
	o.dz0 = make([]T, m*h0*k)
	L := net.Layers()
	maxw := 0
	for l := 0; l < L; l++ {
		in, out := net.Sizes[l], net.Sizes[l+1]
		if l > 0 {
			o.w = append(o.w, make([]T, in*out))
			o.dw = append(o.dw, make([]T, in*out))
		} else {
			o.w = append(o.w, nil)
			o.dw = append(o.dw, nil)
		}
		o.z = append(o.z, make([]T, m*out))
		o.h = append(o.h, make([]T, m*out))
		o.dz = append(o.dz, make([]T, m*out))
		maxw = max(maxw, out)
	}
	o.dh = make([]T, m*maxw)
	o.lsm = make([]T, m*net.Classes())
	return o
}

func (o *oracle[T]) act(z T) T {
	if o.net.act() == Sigmoid {
		return T(1 / (1 + math.Exp(-float64(z))))
	}
	return max(z, 0)
}

// dact returns f'(z) given z and h = f(z).
func (o *oracle[T]) dact(z, h T) T {
	if o.net.act() == Sigmoid {
		return h * (1 - h)
	}
	if z > 0 {
		return 1
	}
	return 0
}

// eval computes U_k (length K) and ∇U (length D·K, coordinate-major) of the
// K chains of theta on the batch x (M × inputs) with labels y, for a
// training set of n examples.
func (o *oracle[T]) eval(theta []T, x []T, y []int, n float64, u, grad []T) {
	net, k, m := o.net, o.k, o.m
	L := net.Layers()
	C := net.Classes()
	scale := T(n / float64(m))
	s2 := net.Sigma() * net.Sigma()

	// Prior and its gradient.
	for c := 0; c < k; c++ {
		u[c] = T(float64(net.Dim()) * 0.5 * math.Log(2*math.Pi*s2))
	}
	for i, v := range theta {
		u[i%k] += v * v / T(2*s2)
		grad[i] = v / T(s2)
	}

	// Layer 0 for all chains: z0 = X·W0all + b0all.
	in0, h0 := net.Sizes[0], net.Sizes[1]
	ow, ob := net.Offsets(0)
	gemm(false, false, m, h0*k, in0, 1, x, in0, theta[ow*k:ob*k], h0*k, 0, o.z0, h0*k)
	bias := theta[ob*k : (ob+h0)*k]
	for r := 0; r < m; r++ {
		row := o.z0[r*h0*k : (r+1)*h0*k]
		for j, b := range bias {
			row[j] += b
		}
	}

	for c := 0; c < k; c++ {
		// Gather chain c's first layer and later weights.
		z, h := o.z[0], o.h[0]
		for r := 0; r < m; r++ {
			for j := 0; j < h0; j++ {
				v := o.z0[(r*h0+j)*k+c]
				z[r*h0+j] = v
				if L > 1 {
					h[r*h0+j] = o.act(v)
				} else {
					h[r*h0+j] = v
				}
			}
		}
		for l := 1; l < L; l++ {
			in, out := net.Sizes[l], net.Sizes[l+1]
			ow, ob := net.Offsets(l)
			w := o.w[l]
			for i := range w {
				w[i] = theta[(ow+i)*k+c]
			}
			z, h := o.z[l], o.h[l]
			gemm(false, false, m, out, in, 1, o.h[l-1], in, w, out, 0, z, out)
			for r := 0; r < m; r++ {
				for j := 0; j < out; j++ {
					z[r*out+j] += theta[(ob+j)*k+c]
					if l < L-1 {
						h[r*out+j] = o.act(z[r*out+j])
					} else {
						h[r*out+j] = z[r*out+j]
					}
				}
			}
		}
		// Log-softmax, likelihood and its gradient w.r.t. the logits.
		logits := o.h[L-1]
		dz := o.dz[L-1]
		ll := 0.0
		for r := 0; r < m; r++ {
			row := logits[r*C : (r+1)*C]
			mx := row[0]
			for _, v := range row {
				mx = max(mx, v)
			}
			se := 0.0
			for _, v := range row {
				se += math.Exp(float64(v - mx))
			}
			lse := float64(mx) + math.Log(se)
			ll += float64(row[y[r]]) - lse
			for j, v := range row {
				p := math.Exp(float64(v) - lse)
				if j == y[r] {
					p--
				}
				dz[r*C+j] = scale * T(p) // ∂(−(N/M)·ll)/∂logit
			}
		}
		u[c] += T(-float64(scale) * ll)

		// Backward through the later layers.
		for l := L - 1; l >= 1; l-- {
			in, out := net.Sizes[l], net.Sizes[l+1]
			ow, ob := net.Offsets(l)
			dz := o.dz[l]
			gemm(true, false, in, out, m, 1, o.h[l-1], in, dz, out, 0, o.dw[l], out)
			for i, v := range o.dw[l] {
				grad[(ow+i)*k+c] += v
			}
			for j := 0; j < out; j++ {
				s := T(0)
				for r := 0; r < m; r++ {
					s += dz[r*out+j]
				}
				grad[(ob+j)*k+c] += s
			}
			dh := o.dh[:m*in]
			gemm(false, true, m, in, out, 1, dz, out, o.w[l], out, 0, dh, in)
			dzp, zp, hp := o.dz[l-1], o.z[l-1], o.h[l-1]
			for i := range dh {
				dzp[i] = dh[i] * o.dact(zp[i], hp[i])
			}
		}
		// Scatter chain c's first-layer gradient into dz0.
		for r := 0; r < m; r++ {
			for j := 0; j < h0; j++ {
				o.dz0[(r*h0+j)*k+c] = o.dz[0][r*h0+j]
			}
		}
	}
	// First-layer gradient of all chains: Xᵀ·dz0 and the column sums.
	gemm(true, false, in0, h0*k, m, 1, x, in0, o.dz0, h0*k, 1, grad[ow*k:ob*k], h0*k)
	gb := grad[ob*k : (ob+h0)*k]
	for r := 0; r < m; r++ {
		row := o.dz0[r*h0*k : (r+1)*h0*k]
		for j, v := range row {
			gb[j] += v
		}
	}
}
