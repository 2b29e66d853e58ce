package coordnet

import "math"

// The kernels of samplers' fused steps: a network of the trained shape
// (Weights.ShallowReLU) with 2 or 3 inputs on columns of coordinates, with
// AVX2 kernels (rows_amd64.s) where the processor has them, which do each
// scalar operation of the Go loops in the same order (no fused
// multiply-add), so both give the same bits.

// ChainNet evaluates a network of the trained shape with 2 or 3 inputs
// whose first input is the chain's u, the same for all of a chain's
// coordinates, on many coordinates at once: f_Q and f_D of a step with
// finite-difference Γ. Coordinate i belongs to chain i mod k, so the table
// holds, for hidden unit j, the start of its sum b0_j + u_c·W0[0,j] for
// the chains c = 0, 1, …, k−1, 0, 1, … over k+8 columns: any eight
// consecutive coordinates read eight consecutive columns.
type ChainNet struct {
	tab       []float64 // tab[j·stride + c] = b0_j + u_{c mod k}·W0[0,j]
	stride, k int
	h, in     int       // hidden units; inputs after u (1 or 2)
	w         []float64 // per unit j: W0[1,j] (and W0[2,j]), then W1[j]/2
	b1        float64
}

// NewChainNet prepares w, a network of the trained shape with 2 or 3
// inputs, for k = len(u) chains whose u is u[c].
func NewChainNet(w *Weights, u []float64) ChainNet {
	h, k := w.Hidden[0], len(u)
	w0, b0 := w.W[0], w.B[0]
	s := ChainNet{stride: k + 8, k: k, h: h, in: w.Inputs - 1, b1: w.B[1][0]}
	s.tab = make([]float64, h*s.stride)
	for j := 0; j < h; j++ {
		for c := 0; c < s.stride; c++ {
			s.tab[j*s.stride+c] = b0[j] + u[c%k]*w0[j]
		}
		for i := 1; i < w.Inputs; i++ {
			s.w = append(s.w, w0[i*h+j])
		}
		s.w = append(s.w, 0.5*w.W[1][j])
	}
	return s
}

// Eval sets out[i] to the network at (u_c, x[i]), or at (u_c, x[i], g[i])
// when g is not nil, where c = (c0 + i) mod k is coordinate i's chain.
// Each sum is formed in the order Weights.Eval forms it, with
// max(z, 0)·w = (z + |z|)·(w/2) exactly, so it gives Eval's values bit for
// bit.
func (s *ChainNet) Eval(out, x, g []float64, c0 int) {
	done := s.evalSIMD(out, x, g, c0)
	if g != nil {
		g = g[done:]
	}
	s.evalGo(out[done:], x[done:], g, (c0+done)%s.k)
}

// evalGo is Eval in Go.
func (s *ChainNet) evalGo(out, x, g []float64, c int) {
	step := s.in + 1
	for i, xi := range x {
		sum := 0.0
		for j := 0; j < s.h; j++ {
			w := s.w[j*step : (j+1)*step]
			z := s.tab[j*s.stride+c] + xi*w[0]
			if g != nil {
				z += g[i] * w[1]
			}
			sum += (z + math.Abs(z)) * w[step-1]
		}
		out[i] = s.b1 + sum
		if c++; c == s.k {
			c = 0
		}
	}
}

// GradNet evaluates a network of the trained shape with 2 or 3 inputs and
// its input gradients in one pass, its inputs given as columns: f_Q and
// f_D of a step with exact Γ. Its rows are those of InputGrad with row
// weights 1 for 2 and 3 inputs, so it gives InputGrad's values bit for bit.
type GradNet struct {
	packed []float64 // per unit j: b0_j, W0[0,j], …, W0[in−1,j], W1[j]
	h      int
	b1     float64
}

// NewGradNet prepares w, a network of the trained shape with 2 or 3
// inputs.
func NewGradNet(w *Weights) GradNet {
	var n GradNet
	n.pack(w.Inputs, w.Params())
	return n
}

// pack lays out the parameters W0, B0, W1, B1 of a network with in inputs
// and one hidden layer unit by unit, in n's memory.
func (n *GradNet) pack(in int, params [][]float64) {
	w0, b0, w1 := params[0], params[1], params[2]
	h := len(b0)
	n.packed, n.h, n.b1 = n.packed[:0], h, params[3][0]
	for j := 0; j < h; j++ {
		n.packed = append(n.packed, b0[j])
		for i := 0; i < in; i++ {
			n.packed = append(n.packed, w0[i*h+j])
		}
		n.packed = append(n.packed, w1[j])
	}
}

// InputGrad2 sets, for a network of 2 inputs, f[i] to the network at
// (x0[i], x1[i]) and d0[i], d1[i] to its derivatives with respect to its
// inputs there.
func (n *GradNet) InputGrad2(f, d0, d1, x0, x1 []float64) {
	for i := n.grad2SIMD(f, d0, d1, x0, x1); i < len(f); i++ {
		f[i], d0[i], d1[i] = n.grad2(x0[i], x1[i], 1)
	}
}

// InputGrad3 sets, for a network of 3 inputs, f[i] to the network at
// (x0[i], x1[i], x2[i]) and d1[i] to its derivative with respect to its
// second input there.
func (n *GradNet) InputGrad3(f, d1, x0, x1, x2 []float64) {
	for i := n.grad3SIMD(f, d1, x0, x1, x2); i < len(f); i++ {
		f[i], _, d1[i], _ = n.grad3(x0[i], x1[i], x2[i], 1)
	}
}

// grad2 returns a network of 2 inputs at (x0, x1) and g times its
// derivatives there. With g = 1, g·W1[j] is W1[j]: the vector kernel, which
// multiplies by no g, gives the same bits.
func (n *GradNet) grad2(x0, x1, g float64) (f, d0, d1 float64) {
	sum := 0.0
	for p := n.packed; len(p) >= 4; p = p[4:] {
		z := p[0] + x0*p[1] + x1*p[2]
		sum += max(z, 0) * p[3] // builtin max: no branch to mispredict
		c := reluGate(z, g*p[3])
		d0 += c * p[1]
		d1 += c * p[2]
	}
	return n.b1 + sum, d0, d1
}

// grad3 is grad2 for a network of 3 inputs.
func (n *GradNet) grad3(x0, x1, x2, g float64) (f, d0, d1, d2 float64) {
	sum := 0.0
	for p := n.packed; len(p) >= 5; p = p[5:] {
		z := p[0] + x0*p[1] + x1*p[2] + x2*p[3]
		sum += max(z, 0) * p[4]
		c := reluGate(z, g*p[4])
		d0 += c * p[1]
		d1 += c * p[2]
		d2 += c * p[3]
	}
	return n.b1 + sum, d0, d1, d2
}
