package gru

import "math"

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
//	b₀  H        the initial state's parameters, with InitialState only
//
// so that D = 3·(88·H + H·H + H) + 88·H + 88 (65,588 for H = 100 and 191,088
// for H = 200), plus H with InitialState. Columns 0..H−1 of Wx, U and b belong to the update gate z,
// columns H..2H−1 to the reset gate r and columns 2H..3H−1 to the candidate
// ĥ. With K chains, θ is coordinate-major: coordinate i of chain k is at
// i·K + k.
type Layout struct {
	// H is the number of hidden units.
	H int
	// InitialState adds the parameters b₀ of the state before the first
	// frame, h_0 = tanh(b₀) (the GRU of Chen et al. 2016); without them
	// h_0 = 0.
	InitialState bool
}

// Offsets of the parameter blocks in θ (for one chain).
func (l Layout) offWx() int { return 0 }
func (l Layout) offU() int  { return Keys * 3 * l.H }
func (l Layout) offB() int  { return l.offU() + 3*l.H*l.H }
func (l Layout) offWo() int { return l.offB() + 3*l.H }
func (l Layout) offBo() int { return l.offWo() + l.H*Keys }
func (l Layout) offH0() int { return l.offBo() + Keys }

// Dim returns D, the number of parameters of one chain.
func (l Layout) Dim() int {
	d := 3*(Keys*l.H+l.H*l.H+l.H) + Keys*l.H + Keys
	if l.InitialState {
		d += l.H
	}
	return d
}

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

// H0 returns the index of the initial-state parameter b₀ of hidden unit j
// (with InitialState).
func (l Layout) H0(j int) int { return l.offH0() + j }

// startState writes the state h_0 of chain k of the nk chains at theta
// (D·nk, coordinate-major) into h (H values): tanh(b₀), or zeros without
// InitialState.
func (l Layout) startState(theta []float64, nk, k int, h []float64) {
	if !l.InitialState {
		clear(h[:l.H])
		return
	}
	for j := range h[:l.H] {
		h[j] = math.Tanh(theta[l.H0(j)*nk+k])
	}
}

// startStateGrad writes into grad (D·nk) the gradient with respect to b₀
// of the nk chains at theta, given the adjoint adj (nk·H, chain-major) of
// their states h_0 = tanh(b₀); nothing without InitialState.
func (l Layout) startStateGrad(theta []float64, nk int, adj, grad []float64) {
	if !l.InitialState {
		return
	}
	for k := 0; k < nk; k++ {
		for j := 0; j < l.H; j++ {
			i := l.H0(j)*nk + k
			h := math.Tanh(theta[i])
			grad[i] = adj[k*l.H+j] * (1 - h*h)
		}
	}
}

// kernel holds the parameters of K chains in the layout the segment graph
// uses: one tensor per gate block, the chain axis outermost (batched matrix
// products over chains). With g ∈ {z, r, h} the column block of a gate
// (columns 0..H−1, H..2H−1, 2H..3H−1 of Wx, U and b):
//
//	Wx_g  (K, 88, H)  [k, i, j] = Wx[i][g·H + j]     parts 0, 1, 2
//	b_g   (K, 1, H)   [k, j]    = b[g·H + j]         parts 3, 4, 5
//	U_g   (K, H, H)   [k, i, j] = U[i][g·H + j]      parts 6, 7, 8
//	Wo    (K, H, 88)  [k, i, j] = Wo[i][j]           part 9
//	bo    (K, 1, 88)  [k, j]    = bo[j]              part 10
type kernel [][]float64

// Indices of the kernel's parts.
const (
	kWx    = 0 // + gate
	kB     = 3 // + gate
	kU     = 6 // + gate
	kWo    = 9
	kBo    = 10
	kParts = 11
	gateZ  = 0
	gateR  = 1
	gateH  = 2
	nGates = 3
)

func newKernel(h, k int) kernel {
	kn := make(kernel, kParts)
	for i, shape := range kernelShapes(h, k) {
		kn[i] = make([]float64, shape[0]*shape[1]*shape[2])
	}
	return kn
}

func (kn kernel) zero() {
	for _, p := range kn {
		clear(p)
	}
}

// kernelShapes returns the shapes of the kernel's parts.
func kernelShapes(h, k int) [][]int {
	s := make([][]int, kParts)
	for g := 0; g < nGates; g++ {
		s[kWx+g] = []int{k, Keys, h}
		s[kB+g] = []int{k, 1, h}
		s[kU+g] = []int{k, h, h}
	}
	s[kWo] = []int{k, h, Keys}
	s[kBo] = []int{k, 1, Keys}
	return s
}

// blockMap describes how a rows × cols block of θ (for one chain, row-major
// from offset off) maps to a kernel part (K, rows, w): columns c0..c0+w−1
// of row r of chain k go to [k, r, 0..w−1].
type blockMap struct {
	off, rows, cols, c0, w int
}

// maps returns the block maps of the kernel's parts.
func (l Layout) maps() []blockMap {
	h := l.H
	m := make([]blockMap, kParts)
	for g := 0; g < nGates; g++ {
		m[kWx+g] = blockMap{off: l.offWx(), rows: Keys, cols: 3 * h, c0: g * h, w: h}
		m[kB+g] = blockMap{off: l.offB(), rows: 1, cols: 3 * h, c0: g * h, w: h}
		m[kU+g] = blockMap{off: l.offU(), rows: h, cols: 3 * h, c0: g * h, w: h}
	}
	m[kWo] = blockMap{off: l.offWo(), rows: h, cols: Keys, w: Keys}
	m[kBo] = blockMap{off: l.offBo(), rows: 1, cols: Keys, w: Keys}
	return m
}

// toKernel writes the positions theta (D·K, coordinate-major) of K chains
// into kn.
func (l Layout) toKernel(theta []float64, nk int, kn kernel) {
	for p, m := range l.maps() {
		dst := kn[p]
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
func (l Layout) fromKernel(kn kernel, nk int, s float64, grad []float64) {
	for p, m := range l.maps() {
		src := kn[p]
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
