package samplers

import (
	"math"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// This file holds the fused steps: what stepPlain computes with GammaFD
// after the first step, and with GammaExact, for the trained networks'
// shape (one hidden layer, ReLU), in spans of coordinates shared out among
// the processors. A span goes by in blocks: a block's networks are
// evaluated first (with AVX2 kernels where the processor has them), into
// scratch vectors that stay in the first-level cache, then its update, so
// the step reads and writes every state vector once instead of the generic
// path's dozens of passes over scratch vectors of full length. They
// evaluate the networks in the order of graph's row kernels and the update
// with stepPlain's own helpers, so they give stepPlain's result bit for bit
// (TestFusedStepsMatchPlain).

// fusedSpan is the number of coordinates a worker of the fused step takes at
// a time.
const fusedSpan = 4096

// fusedBlock is the number of coordinates whose networks the fused steps
// evaluate together.
const fusedBlock = 512

// shallowNet is a one-hidden-layer ReLU network whose first input is the
// chain's u, the same for all of a chain's coordinates, evaluated on many
// coordinates at once. Coordinate i of a state belongs to chain i mod k, so
// the table holds, for hidden unit j, the start of its sum b0_j + u_c·W0[0,j]
// for the chains c = 0, 1, …, k−1, 0, 1, … over k+8 columns: any eight
// consecutive coordinates read eight consecutive columns.
type shallowNet struct {
	tab       []float64 // tab[j·stride + c] = b0_j + u_{c mod k}·W0[0,j]
	stride, k int
	h, in     int       // hidden units; inputs after u (1 or 2)
	w         []float64 // per unit j: W0[1,j] (and W0[2,j]), then W1[j]/2
	b1        float64
}

// newShallowNet prepares net for chains whose u is u[c].
func newShallowNet(net *coordnet.Weights, u []float64) shallowNet {
	h, k := net.Hidden[0], len(u)
	w0, b0 := net.W[0], net.B[0]
	s := shallowNet{stride: k + 8, k: k, h: h, in: net.Inputs - 1, b1: net.B[1][0]}
	s.tab = make([]float64, h*s.stride)
	for j := 0; j < h; j++ {
		for c := 0; c < s.stride; c++ {
			s.tab[j*s.stride+c] = b0[j] + u[c%k]*w0[j]
		}
		for i := 1; i < net.Inputs; i++ {
			s.w = append(s.w, w0[i*h+j])
		}
		s.w = append(s.w, 0.5*net.W[1][j])
	}
	return s
}

// rows evaluates the network with inputs (u, x[i]), or (u, x[i], g[i]) when g
// is not nil, into out[i], coordinate 0 being of chain c. Each sum is formed
// in the order Eval forms it, with max(z, 0)·w = (z + |z|)·(w/2) exactly, so
// the vector kernels and rowsGo give the same bits.
func (s *shallowNet) rows(out, x, g []float64, c int) {
	done := s.rowsSIMD(out, x, g, c)
	if g != nil {
		g = g[done:]
	}
	s.rowsGo(out[done:], x[done:], g, (c+done)%s.k)
}

// rowsGo is rows in Go.
func (s *shallowNet) rowsGo(out, x, g []float64, c int) {
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

// fusedFastPath enables stepFusedFD (tests switch it off to compare).
var fusedFastPath = true

// canFuse reports whether the step can take the fused path.
func (s *NNSGHMC) canFuse(m *nnMemory) bool {
	cfg := &s.cfg
	return fusedFastPath && cfg.Gamma == GammaFD && m.started && cfg.Q.ShallowReLU() && cfg.D.ShallowReLU()
}

// stepFusedFD is stepPlain for GammaFD after the first step, with the
// networks' features computed from the evaluation e as Features does.
func (s *NNSGHMC) stepFusedFD(st *State, e *tasks.Eval) {
	cfg := &s.cfg
	m := nnMem(st)
	n := len(st.Theta)
	sc := cfg.scales(e, s.d, s.target.DataSize())
	m.gammaP, m.gammaThet = grow(m.gammaP, n), grow(m.gammaThet, n)
	f := &fusedFD{NNSGHMC: s, featureScales: sc, fq: newShallowNet(cfg.Q, sc.u), fd: newShallowNet(cfg.D, sc.u)}
	spans.Share(n, fusedSpan, func() (func(lo, hi int), func()) {
		var b fusedScratch
		return func(lo, hi int) {
			for i := lo; i < hi; i += fusedBlock {
				f.block(st, e, &b, i, min(i+fusedBlock, hi))
			}
		}, nil
	})
}

// fusedFD holds one fused step's constants.
type fusedFD struct {
	*NNSGHMC
	featureScales
	fq, fd shallowNet
}

// fusedScratch holds a block's network inputs and outputs.
type fusedScratch [6][fusedBlock]float64

// block advances the coordinates [lo, hi) in two passes, the momenta then
// the positions, each evaluating the block's networks first. The first pass
// leaves p_t and Q_f(u_t, p_t) in the memory, where the second reads them.
func (f *fusedFD) block(st *State, e *tasks.Eval, b *fusedScratch, lo, hi int) {
	cfg := &f.cfg
	m, k, n := nnMem(st), f.k, hi-lo
	theta, p := st.Theta[lo:hi], st.P[lo:hi]
	grad, priorGrad, noise := e.Grad[lo:hi], e.PriorGrad[lo:hi], m.noise[lo:hi]
	mu, mp, mq, mqhat := m.u[lo:hi], m.p[lo:hi], m.q[lo:hi], m.qhat[lo:hi]
	gammaP, gammaThet := m.gammaP[lo:hi], m.gammaThet[lo:hi]
	eta, ms, sg := cfg.StepSize, cfg.MomentumScale, f.sg
	x, xPrev, g, q, d, dPrev := b[0][:n], b[1][:n], b[2][:n], b[3][:n], b[4][:n], b[5][:n]
	c0 := lo % k

	// Q_f, f_D and f_D at the previous momentum
	for i, pi := range p {
		x[i], xPrev[i], g[i] = ms*pi, ms*mp[i], sg*grad[i]
	}
	f.fq.rows(q, x, nil, c0)
	f.fd.rows(d, x, g, c0)
	f.fd.rows(dPrev, xPrev, g, c0)
	c := c0
	for i, pi := range p {
		qi, _ := cfg.qOf(q[i])
		du := f.su * (grad[i] + (f.coef-1)*priorGrad[i])
		pn, gp := f.momentum(qi, d[i], dPrev[i], pi, grad[i], du, f.u[c], mu[i], mp[i], mq[i], mqhat[i], noise[i])
		gammaP[i], mu[i], mp[i], mq[i], p[i] = gp, f.u[c], pi, qi, pn
		if c++; c == k {
			c = 0
		}
	}

	// Q'_f at the new momentum, and the position update
	for i, pn := range p {
		x[i] = ms * pn
	}
	f.fq.rows(q, x, nil, c0)
	for i, pn := range p {
		q2, _ := cfg.qOf(q[i])
		gt := -quotient(q2-mq[i], pn-mp[i])
		theta[i], gammaThet[i], mqhat[i] = theta[i]+eta*(q2*pn+gt), gt, q2
	}
}

// momentum is stepPlain's momentum update of one coordinate with
// finite-difference Γ: it returns p_{t+1} and Γ_p.
func (f *fusedFD) momentum(q, fNow, fHat, p, g, du, u, mu, mp, mq, mqhat, noise float64) (pn, gp float64) {
	cfg := &f.cfg
	dpart, dhat := cfg.DScale*math.Abs(fNow), cfg.DScale*math.Abs(fHat)
	dQdu := quotient(q-mqhat, u-mu)
	dQdp := quotient(mqhat-mq, p-mp)
	dDdp := quotient(dpart-dhat, p-mp)
	d, inside := f.diffusion(q, dpart)
	gp = f.gammaP(q, inside, dQdu, du, dDdp, dQdp)
	return f.nextMomentum(q, d, gp, p, g, noise), gp
}

// gradNet is a one-hidden-layer ReLU network with 2 or 3 inputs that
// computes its input gradients with its value, summing as graph's row
// kernels do (InputGrad with row weights 1): the exact step's networks.
type gradNet struct {
	packed []float64 // per unit j: b0_j, W0[0,j], W0[1,j] (, W0[2,j]), W1[j]
	h      int
	b1     float64
}

func newGradNet(net *coordnet.Weights) gradNet {
	h := net.Hidden[0]
	n := gradNet{h: h, b1: net.B[1][0]}
	for j := 0; j < h; j++ {
		n.packed = append(n.packed, net.B[0][j])
		for i := 0; i < net.Inputs; i++ {
			n.packed = append(n.packed, net.W[0][i*h+j])
		}
		n.packed = append(n.packed, net.W[1][j])
	}
	return n
}

// q2Rows sets f[i], du[i], dx[i] to q2(u[i], x[i]).
func (n *gradNet) q2Rows(f, du, dx, u, x []float64) {
	for i := n.q2RowsSIMD(f, du, dx, u, x); i < len(f); i++ {
		f[i], du[i], dx[i] = n.q2(u[i], x[i])
	}
}

// d3Rows sets f[i], dx[i] to d3(u[i], x[i], g[i]).
func (n *gradNet) d3Rows(f, dx, u, x, g []float64) {
	for i := n.d3RowsSIMD(f, dx, u, x, g); i < len(f); i++ {
		f[i], dx[i] = n.d3(u[i], x[i], g[i])
	}
}

// q2 evaluates f_Q at (u, x) with ∂f/∂u and ∂f/∂x.
func (n *gradNet) q2(u, x float64) (f, du, dx float64) {
	sum, d0, d1 := 0.0, 0.0, 0.0
	for j := 0; j < n.h; j++ {
		w := n.packed[4*j : 4*j+4]
		z := w[0] + u*w[1] + x*w[2]
		sum += max(z, 0) * w[3]
		c := coordnet.ReLUGate(z, w[3])
		d0 += c * w[1]
		d1 += c * w[2]
	}
	return n.b1 + sum, d0, d1
}

// d3 evaluates f_D at (u, x, g) with ∂f/∂x.
func (n *gradNet) d3(u, x, g float64) (f, dx float64) {
	sum, d1 := 0.0, 0.0
	for j := 0; j < n.h; j++ {
		w := n.packed[5*j : 5*j+5]
		z := w[0] + u*w[1] + x*w[2] + g*w[3]
		sum += max(z, 0) * w[4]
		d1 += coordnet.ReLUGate(z, w[4]) * w[2]
	}
	return n.b1 + sum, d1
}

// canFuseExact reports whether the exact step can take the fused path.
func (s *NNSGHMC) canFuseExact() bool {
	cfg := &s.cfg
	return fusedFastPath && cfg.Gamma == GammaExact && cfg.Q.ShallowReLU() && cfg.D.ShallowReLU()
}

// stepFusedExact is stepPlain for GammaExact, the networks' features in
// s.feat, in blocks of coordinates shared out among the cores. Each block's
// networks are evaluated first, then its update, in two passes: the momenta,
// then the positions.
func (s *NNSGHMC) stepFusedExact(st *State) {
	cfg := &s.cfg
	m := nnMem(st)
	n := len(st.Theta)
	fq, fd := newGradNet(cfg.Q), newGradNet(cfg.D)
	m.gammaP, m.gammaThet = grow(m.gammaP, n), grow(m.gammaThet, n)
	spans.Share(n, fusedSpan, func() (func(lo, hi int), func()) {
		var b fusedScratch
		return func(lo, hi int) {
			for i := lo; i < hi; i += fusedBlock {
				s.exactBlock(st, &fq, &fd, &b, i, min(i+fusedBlock, hi))
			}
		}, nil
	})
	m.started = true
}

// exactBlock advances the coordinates [lo, hi) with exact Γ: the momenta,
// then the positions, each pass evaluating the block's networks first.
func (s *NNSGHMC) exactBlock(st *State, fq, fd *gradNet, b *fusedScratch, lo, hi int) {
	cfg, m, n := &s.cfg, nnMem(st), hi-lo
	eta, ms := cfg.StepSize, cfg.MomentumScale
	theta, p := st.Theta[lo:hi], st.P[lo:hi]
	u, du, gf := s.feat.U[lo:hi], s.feat.DU[lo:hi], s.feat.GFeat[lo:hi]
	grad, noise := st.Eval.Grad[lo:hi], m.noise[lo:hi]
	gammaP, gammaThet := m.gammaP[lo:hi], m.gammaThet[lo:hi]
	x, f, dfu, dfx, fD, dfD := b[0][:n], b[1][:n], b[2][:n], b[3][:n], b[4][:n], b[5][:n]
	for i, pi := range p {
		x[i] = ms * pi
	}
	fq.q2Rows(f, dfu, dfx, u, x)
	fd.d3Rows(fD, dfD, u, x, gf)
	for i, pi := range p {
		q, gate := cfg.qOf(f[i])
		dQdu, dQdp := gate*dfu[i], gate*ms*dfx[i]
		dDdp := cfg.DScale * ms * graph.AbsGrad(fD[i]) * dfD[i]
		d, inside := s.diffusion(q, cfg.DScale*math.Abs(fD[i]))
		gp := s.gammaP(q, inside, dQdu, du[i], dDdp, dQdp)
		p[i], gammaP[i] = s.nextMomentum(q, d, gp, pi, grad[i], noise[i]), gp
	}
	for i, pn := range p {
		x[i] = ms * pn
	}
	fq.q2Rows(f, dfu, dfx, u, x)
	for i, pn := range p {
		q2, gate2 := cfg.qOf(f[i])
		gt := -(gate2 * ms * dfx[i])
		theta[i] += eta * (q2*pn + gt)
		gammaThet[i] = gt
	}
}
