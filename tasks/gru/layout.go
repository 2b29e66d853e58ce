package gru

import "fmt"

// Keys is the width of a frame: the 88 keys of a piano roll, the input and
// output size of the network.
const Keys = 88

// Layout describes where the parameters of a GRU with H hidden units lie in
// θ. For one chain θ is the concatenation, in this order, of
//
//	Wx  88 × 3H  input weights [W_z W_r W_h], row-major: Wx[i][j] at i·3H + j
//	U   H × 3H   recurrent weights [U_z U_r U_h], row-major
//	b   3H       gate biases [b_z b_r b_h]
//	Wo  H × 88   output weights, row-major
//	bo  88       output biases
//
// so that D = 3·(88·H + H·H + H) + 88·H + 88 (65,588 for H = 100 and 191,088
// for H = 200). Columns 0..H−1 of Wx, U and b belong to the update gate z,
// columns H..2H−1 to the reset gate r and columns 2H..3H−1 to the candidate
// ĥ. With K chains, θ is coordinate-major: coordinate i of chain k is at
// i·K + k.
type Layout struct {
	// H is the number of hidden units.
	H int
}

// Offsets of the parameter blocks in θ (for one chain).
func (l Layout) offWx() int { return 0 }
func (l Layout) offU() int  { return Keys * 3 * l.H }
func (l Layout) offB() int  { return l.offU() + 3*l.H*l.H }
func (l Layout) offWo() int { return l.offB() + 3*l.H }
func (l Layout) offBo() int { return l.offWo() + l.H*Keys }

// Dim returns D, the number of parameters of one chain.
func (l Layout) Dim() int { return 3*(Keys*l.H+l.H*l.H+l.H) + Keys*l.H + Keys }

// Wx returns the index in θ (of one chain) of the input weight from key i to
// gate column j (0 ≤ j < 3H).
func (l Layout) Wx(i, j int) int { return l.offWx() + i*3*l.H + j }

// U returns the index of the recurrent weight from hidden unit i to gate
// column j (0 ≤ j < 3H).
func (l Layout) U(i, j int) int { return l.offU() + i*3*l.H + j }

// B returns the index of the bias of gate column j (0 ≤ j < 3H).
func (l Layout) B(j int) int { return l.offB() + j }

// Wo returns the index of the output weight from hidden unit i to key j.
func (l Layout) Wo(i, j int) int { return l.offWo() + i*Keys + j }

// Bo returns the index of the output bias of key j.
func (l Layout) Bo(j int) int { return l.offBo() + j }

func (l Layout) check() error {
	if l.H < 1 {
		return fmt.Errorf("gru: %d hidden units", l.H)
	}
	return nil
}

// kernel holds the parameters of K chains in the layout the segment graph
// uses, the chain axis outermost (batched matrix products over chains):
//
//	wx   (K, 88, 3H)  [k, i, j] = Wx[i][j]
//	b    (K, 1, 3H)   [k, j]    = b[j]
//	uZR  (K, H, 2H)   [k, i, j] = U[i][j],      j < 2H
//	uH   (K, H, H)    [k, i, j] = U[i][2H + j]
//	wo   (K, H, 88)   [k, i, j] = Wo[i][j]
//	bo   (K, 1, 88)   [k, j]    = bo[j]
type kernel struct {
	wx, b, uZR, uH, wo, bo []float64
}

func newKernel(h, k int) *kernel {
	return &kernel{
		wx: make([]float64, k*Keys*3*h), b: make([]float64, k*3*h),
		uZR: make([]float64, k*h*2*h), uH: make([]float64, k*h*h),
		wo: make([]float64, k*h*Keys), bo: make([]float64, k*Keys),
	}
}

// parts lists the kernel's tensors in a fixed order.
func (kn *kernel) parts() [][]float64 {
	return [][]float64{kn.wx, kn.b, kn.uZR, kn.uH, kn.wo, kn.bo}
}

func (kn *kernel) zero() {
	for _, p := range kn.parts() {
		clear(p)
	}
}

// kernelShapes returns the shapes of the kernel's tensors, in parts order.
func kernelShapes(h, k int) [][]int {
	return [][]int{{k, Keys, 3 * h}, {k, 1, 3 * h}, {k, h, 2 * h}, {k, h, h}, {k, h, Keys}, {k, 1, Keys}}
}

// blockMap describes how a rows × cols block of θ (for one chain, row-major
// from offset off) maps to a kernel tensor (K, rows, w): columns c0..c0+w−1
// of row r of chain k go to [k, r, 0..w−1].
type blockMap struct {
	off, rows, cols, c0, w int
}

func (l Layout) maps() []blockMap {
	h := l.H
	return []blockMap{
		{off: l.offWx(), rows: Keys, cols: 3 * h, c0: 0, w: 3 * h},
		{off: l.offB(), rows: 1, cols: 3 * h, c0: 0, w: 3 * h},
		{off: l.offU(), rows: h, cols: 3 * h, c0: 0, w: 2 * h},
		{off: l.offU(), rows: h, cols: 3 * h, c0: 2 * h, w: h},
		{off: l.offWo(), rows: h, cols: Keys, c0: 0, w: Keys},
		{off: l.offBo(), rows: 1, cols: Keys, c0: 0, w: Keys},
	}
}

// toKernel writes the positions theta (D·K, coordinate-major) of K chains
// into kn.
func (l Layout) toKernel(theta []float64, nk int, kn *kernel) {
	parts := kn.parts()
	for p, m := range l.maps() {
		dst := parts[p]
		for r := 0; r < m.rows; r++ {
			for c := 0; c < m.w; c++ {
				src := theta[(m.off+r*m.cols+m.c0+c)*nk:][:nk]
				for k, v := range src {
					dst[(k*m.rows+r)*m.w+c] = v
				}
			}
		}
	}
}

// fromKernel writes s·kn, gradients in kernel layout, into grad (D·K,
// coordinate-major).
func (l Layout) fromKernel(kn *kernel, nk int, s float64, grad []float64) {
	parts := kn.parts()
	for p, m := range l.maps() {
		src := parts[p]
		for r := 0; r < m.rows; r++ {
			for c := 0; c < m.w; c++ {
				dst := grad[(m.off+r*m.cols+m.c0+c)*nk:][:nk]
				for k := range dst {
					dst[k] = s * src[(k*m.rows+r)*m.w+c]
				}
			}
		}
	}
}
