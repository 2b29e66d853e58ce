package gru

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks/music"
)

// The oracle: a plain hand-written GRU forward and backward pass in Go, one
// chain at a time, with gonum's blas64 for the matrix products. It shares no
// code with the package but the parameter layout.

// oracleChain holds the parameters of one chain as dense matrices and the
// work space of a forward/backward pass.
type oracleChain struct {
	l                     Layout
	h                     int
	resetAfter            bool      // Config.ResetAfter
	wx, u, b, wo, bo, b0  []float64 // 88×3H, H×3H, 3H, H×88, 88, H (with l.InitialState)
	dwx, du, db, dwo, dbo []float64
	db0                   []float64
	// per step activations, T rows each; rh holds r⊙h, or h·U_h with
	// resetAfter, and then e holds dA_h⊙r
	p, hprev, z, r, hh, rh, e, logits, dA, dout []float64
}

func newOracleChain(l Layout) *oracleChain {
	h := l.H
	c := &oracleChain{
		l: l, h: h,
		wx: make([]float64, Keys*3*h), u: make([]float64, h*3*h), b: make([]float64, 3*h),
		wo: make([]float64, h*Keys), bo: make([]float64, Keys),
		dwx: make([]float64, Keys*3*h), du: make([]float64, h*3*h), db: make([]float64, 3*h),
		dwo: make([]float64, h*Keys), dbo: make([]float64, Keys),
	}
	if l.InitialState {
		c.b0, c.db0 = make([]float64, h), make([]float64, h)
	}
	return c
}

// blocks returns the chain's parameter blocks, its gradient's and their
// offsets in θ, in the order of Layout.
func (c *oracleChain) blocks() (params, grads [][]float64, offs []int) {
	l := c.l
	params = [][]float64{c.wx, c.u, c.b, c.wo, c.bo}
	grads = [][]float64{c.dwx, c.du, c.db, c.dwo, c.dbo}
	offs = []int{l.offWx(), l.offU(), l.offB(), l.offWo(), l.offBo()}
	if l.InitialState {
		params, grads, offs = append(params, c.b0), append(grads, c.db0), append(offs, l.offH0())
	}
	return params, grads, offs
}

func grow(x []float64, n int) []float64 {
	if cap(x) < n {
		return make([]float64, n)
	}
	return x[:n]
}

func gen(rows, cols, stride int, data []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: stride, Data: data}
}

func vec(x []float64) blas64.Vector { return blas64.Vector{N: len(x), Inc: 1, Data: x} }

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// softplus is log(1 + eˣ), computed stably.
func softplus(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }

// get copies chain k's parameters out of theta (D·K, coordinate-major).
func (c *oracleChain) get(theta []float64, nk, k int) {
	params, _, offs := c.blocks()
	for i, dst := range params {
		for j := range dst {
			dst[j] = theta[(offs[i]+j)*nk+k]
		}
	}
}

// put writes chain k's gradient, scaled by s, into grad (D·K).
func (c *oracleChain) put(grad []float64, nk, k int, s float64) {
	_, grads, offs := c.blocks()
	for i, src := range grads {
		for j, v := range src {
			grad[(offs[i]+j)*nk+k] = s * v
		}
	}
}

// forward returns log p(x) for the frames x (T×88) and keeps the
// activations.
func (c *oracleChain) forward(x []float64, T int) float64 {
	H := c.h
	H3 := 3 * H
	c.p = grow(c.p, T*H3)
	for _, q := range []*[]float64{&c.hprev, &c.z, &c.r, &c.hh, &c.rh, &c.e} {
		*q = grow(*q, T*H)
	}
	c.logits = grow(c.logits, T*Keys)
	// input projections of all frames: P = X·Wx + b
	for t := 0; t < T; t++ {
		copy(c.p[t*H3:(t+1)*H3], c.b)
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, gen(T, Keys, Keys, x), gen(Keys, H3, H3, c.wx), 1, gen(T, H3, H3, c.p))
	uzr := gen(H, 2*H, H3, c.u)
	uh := gen(H, H, H3, c.u[2*H:])
	h := make([]float64, H) // h_0 = 0, or tanh(b₀)
	for i, v := range c.b0 {
		h[i] = math.Tanh(v)
	}
	for t := 0; t < T; t++ {
		copy(c.hprev[t*H:(t+1)*H], h)
		a := c.p[t*H3 : (t+1)*H3]
		blas64.Gemv(blas.Trans, 1, uzr, vec(h), 1, vec(a[:2*H])) // a_zr += hᵀU_zr
		z, r, rh := c.z[t*H:(t+1)*H], c.r[t*H:(t+1)*H], c.rh[t*H:(t+1)*H]
		for i := 0; i < H; i++ {
			z[i] = sigmoid(a[i])
			r[i] = sigmoid(a[H+i])
			rh[i] = r[i] * h[i]
		}
		if c.resetAfter {
			blas64.Gemv(blas.Trans, 1, uh, vec(h), 0, vec(rh)) // rh = hᵀU_h
			for i := 0; i < H; i++ {
				a[2*H+i] += r[i] * rh[i]
			}
		} else {
			blas64.Gemv(blas.Trans, 1, uh, vec(rh), 1, vec(a[2*H:])) // a_h += (r⊙h)ᵀU_h
		}
		hh := c.hh[t*H : (t+1)*H]
		for i := 0; i < H; i++ {
			hh[i] = math.Tanh(a[2*H+i])
			h[i] += z[i] * (hh[i] - h[i])
		}
	}
	// logits of every frame from the state before it
	for t := 0; t < T; t++ {
		copy(c.logits[t*Keys:(t+1)*Keys], c.bo)
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, gen(T, H, H, c.hprev), gen(H, Keys, Keys, c.wo), 1, gen(T, Keys, Keys, c.logits))
	ll := 0.0
	for i, l := range c.logits {
		ll += x[i]*l - softplus(l)
	}
	return ll
}

// backward computes the gradient of −log p(x) after forward.
func (c *oracleChain) backward(x []float64, T int) {
	H := c.h
	H3 := 3 * H
	c.dA = grow(c.dA, T*H3)
	c.dout = grow(c.dout, T*H)
	// d(−ll)/d logits = σ(l) − x
	dl := make([]float64, T*Keys)
	for i, l := range c.logits {
		dl[i] = sigmoid(l) - x[i]
	}
	clear(c.dwo)
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, gen(T, H, H, c.hprev), gen(T, Keys, Keys, dl), 0, gen(H, Keys, Keys, c.dwo))
	clear(c.dbo)
	for t := 0; t < T; t++ {
		for j := 0; j < Keys; j++ {
			c.dbo[j] += dl[t*Keys+j]
		}
	}
	// adjoint of each state h_{t−1} from the prediction of frame t
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, gen(T, Keys, Keys, dl), gen(H, Keys, Keys, c.wo), 0, gen(T, H, H, c.dout))
	uzr := gen(H, 2*H, H3, c.u)
	uh := gen(H, H, H3, c.u[2*H:])
	dh := make([]float64, H)    // adjoint of the state after step t
	dprev := make([]float64, H) // adjoint of the state before step t
	drh := make([]float64, H)
	for t := T - 1; t >= 0; t-- {
		hp := c.hprev[t*H : (t+1)*H]
		z, r, hh := c.z[t*H:(t+1)*H], c.r[t*H:(t+1)*H], c.hh[t*H:(t+1)*H]
		da := c.dA[t*H3 : (t+1)*H3]
		for i := 0; i < H; i++ {
			dprev[i] = dh[i] * (1 - z[i])
			da[i] = dh[i] * (hh[i] - hp[i]) * z[i] * (1 - z[i]) // d a_z
			da[2*H+i] = dh[i] * z[i] * (1 - hh[i]*hh[i])        // d a_h
		}
		if c.resetAfter {
			q, e := c.rh[t*H:(t+1)*H], c.e[t*H:(t+1)*H]
			for i := 0; i < H; i++ {
				e[i] = da[2*H+i] * r[i]                        // d(h·U_h)
				da[H+i] = da[2*H+i] * q[i] * r[i] * (1 - r[i]) // d a_r
			}
			blas64.Gemv(blas.NoTrans, 1, uh, vec(e), 1, vec(dprev)) // += U_h·e
		} else {
			blas64.Gemv(blas.NoTrans, 1, uh, vec(da[2*H:]), 0, vec(drh)) // d(r⊙h) = U_h·da_h
			for i := 0; i < H; i++ {
				dprev[i] += drh[i] * r[i]
				da[H+i] = drh[i] * hp[i] * r[i] * (1 - r[i]) // d a_r
			}
		}
		blas64.Gemv(blas.NoTrans, 1, uzr, vec(da[:2*H]), 1, vec(dprev)) // += U_zr·da_zr
		for i := 0; i < H; i++ {
			dprev[i] += c.dout[t*H+i]
		}
		dh, dprev = dprev, dh
	}
	for i, v := range c.b0 { // dh is the adjoint of h_0 = tanh(b₀)
		h0 := math.Tanh(v)
		c.db0[i] = dh[i] * (1 - h0*h0)
	}
	// weight gradients from the stacked pre-activation adjoints
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, gen(T, H, H, c.hprev), gen(T, 2*H, H3, c.dA), 0, gen(H, 2*H, H3, c.du))
	if c.resetAfter {
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, gen(T, H, H, c.hprev), gen(T, H, H, c.e), 0, gen(H, H, H3, c.du[2*H:]))
	} else {
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, gen(T, H, H, c.rh), gen(T, H, H3, c.dA[2*H:]), 0, gen(H, H, H3, c.du[2*H:]))
	}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, gen(T, Keys, Keys, x), gen(T, H3, H3, c.dA), 0, gen(Keys, H3, H3, c.dwx))
	clear(c.db)
	for t := 0; t < T; t++ {
		for j := 0; j < H3; j++ {
			c.db[j] += c.dA[t*H3+j]
		}
	}
}

// oracle evaluates the GRU of every chain on sequences.
type oracle struct {
	h, k int
	c    *oracleChain
	x    []float64
}

func newOracle(h, k int) *oracle { return newOracleOf(Layout{H: h}, k) }

// newOracleOf is an oracle of the GRU with layout l.
func newOracleOf(l Layout, k int) *oracle {
	return newOracleFor(Config{Hidden: l.H, Chains: k, InitialState: l.InitialState})
}

// newOracleFor is an oracle of cfg's GRU (Hidden, Chains, InitialState,
// ResetAfter).
func newOracleFor(cfg Config) *oracle {
	c := newOracleChain(cfg.Layout())
	c.resetAfter = cfg.ResetAfter
	return &oracle{h: cfg.Hidden, k: cfg.Chains, c: c}
}

// logLik writes log p(seq | θ_k) into ll.
func (o *oracle) logLik(theta []float64, seq music.Sequence, ll []float64) {
	o.x = seq.Float64s(o.x)
	for k := 0; k < o.k; k++ {
		o.c.get(theta, o.k, k)
		ll[k] = o.c.forward(o.x, seq.T)
	}
}

// energy writes into ev the energy of the chains at theta on seq with the
// data scale 1, −log p(seq | θ_k) plus the prior, and its gradient, with
// the prior's part in ev.Prior and ev.PriorGrad too: what
// Energy.SequenceEnergy computes.
func (o *oracle) energy(theta []float64, seq music.Sequence, ev *samplers.Eval) {
	o.nllGrad(theta, seq, 1, ev.U, ev.Grad)
	Prior(theta, o.k, ev.Prior, ev.PriorGrad)
	for c := range ev.U {
		ev.U[c] += ev.Prior[c]
	}
	for j, g := range ev.PriorGrad {
		ev.Grad[j] += g
	}
}

// nllGrad writes −log p(seq | θ_k) into nll and the gradient of
// scale·Σ_k nll_k into grad.
func (o *oracle) nllGrad(theta []float64, seq music.Sequence, scale float64, nll, grad []float64) {
	o.x = seq.Float64s(o.x)
	for k := 0; k < o.k; k++ {
		o.c.get(theta, o.k, k)
		nll[k] = -o.c.forward(o.x, seq.T)
		o.c.backward(o.x, seq.T)
		o.c.put(grad, o.k, k, scale)
	}
}

// products runs the oracle's matrix products of a forward and backward pass
// over T frames, the same calls on the same shapes in the same order, and
// nothing else: no activation, no element-wise adjoint, no copy of the
// parameters. Its time is the floor the benchmarks measure against, the
// products the energy cannot avoid at the speed the BLAS reaches on them
// (the values it computes are meaningless). The state vectors are reused
// across frames, as the data dependencies of the recurrence allow nothing
// faster.
func (c *oracleChain) products(x []float64, T int) {
	H := c.h
	H3 := 3 * H
	c.p = grow(c.p, T*H3)
	c.dA = grow(c.dA, T*H3)
	for _, q := range []*[]float64{&c.hprev, &c.rh, &c.dout} {
		*q = grow(*q, T*H)
	}
	c.logits = grow(c.logits, T*Keys)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, gen(T, Keys, Keys, x), gen(Keys, H3, H3, c.wx), 1, gen(T, H3, H3, c.p))
	uzr := gen(H, 2*H, H3, c.u)
	uh := gen(H, H, H3, c.u[2*H:])
	h := make([]float64, H)
	for t := 0; t < T; t++ {
		a := c.p[t*H3 : (t+1)*H3]
		blas64.Gemv(blas.Trans, 1, uzr, vec(h), 1, vec(a[:2*H]))
		blas64.Gemv(blas.Trans, 1, uh, vec(h), 1, vec(a[2*H:]))
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, gen(T, H, H, c.hprev), gen(H, Keys, Keys, c.wo), 1, gen(T, Keys, Keys, c.logits))
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, gen(T, H, H, c.hprev), gen(T, Keys, Keys, c.logits), 0, gen(H, Keys, Keys, c.dwo))
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, gen(T, Keys, Keys, c.logits), gen(H, Keys, Keys, c.wo), 0, gen(T, H, H, c.dout))
	d := make([]float64, H)
	for t := T - 1; t >= 0; t-- {
		da := c.dA[t*H3 : (t+1)*H3]
		blas64.Gemv(blas.NoTrans, 1, uh, vec(da[2*H:]), 0, vec(d))
		blas64.Gemv(blas.NoTrans, 1, uzr, vec(da[:2*H]), 1, vec(d))
	}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, gen(T, H, H, c.hprev), gen(T, 2*H, H3, c.dA), 0, gen(H, 2*H, H3, c.du))
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, gen(T, H, H, c.rh), gen(T, H, H3, c.dA[2*H:]), 0, gen(H, H, H3, c.du[2*H:]))
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, gen(T, Keys, Keys, x), gen(T, H3, H3, c.dA), 0, gen(Keys, H3, H3, c.dwx))
}

// productFlops is the number of floating-point operations of products for
// one chain: 2·m·n·k for each product of an m×k and a k×n matrix.
func productFlops(h, T int) float64 {
	H, K, t := float64(h), float64(Keys), float64(T)
	perFrame := 2*K*3*H + // input projections
		2*H*3*H + // recurrent products, forward
		2*H*K + 2*H*K + 2*H*K + // output logits, their weight gradient, the states' adjoints
		2*H*3*H + // recurrent products, backward
		2*H*3*H + // recurrent weight gradients
		2*K*3*H // input weight gradients
	return t * perFrame
}
