package samplers

import (
	"math"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// This file holds the fused steps: what stepPlain computes with GammaFD
// after the first step, and with GammaExact, for the trained networks'
// shape (one hidden layer, ReLU), in one pass over the coordinates shared
// out among the processors. Each coordinate's networks, differences and
// update are computed in registers, so the step reads and writes every
// vector once instead of the generic path's dozens of passes over scratch
// vectors. They evaluate the networks in the order of graph's row kernels
// and the update with stepPlain's own helpers, so they give stepPlain's
// result bit for bit (TestFusedStepsMatchPlain).

// fusedSpan is the number of coordinates a worker of the fused step takes at
// a time.
const fusedSpan = 4096

// shallowNet is a one-hidden-layer ReLU network whose first input is the
// chain's u, the same for all of a chain's coordinates: first[c·h+j] holds
// hidden unit j's bias plus u_c times its weight, the start of its sum.
type shallowNet struct {
	first []float64 // b0_j + u_c·W0[0,j], per chain c and unit j
	w     [][]float64
	w1    []float64
	b1    float64
}

// newShallowNet prepares net for chains whose u is u[c].
func newShallowNet(net *graph.MLPWeights, u []float64) shallowNet {
	h := net.Hidden[0]
	w0, b0 := net.W[0], net.B[0]
	s := shallowNet{first: make([]float64, len(u)*h), w1: make([]float64, h), b1: net.B[1][0]}
	for j, v := range net.W[1][:h] {
		s.w1[j] = 0.5 * v
	}
	for i := 1; i < net.Inputs; i++ {
		s.w = append(s.w, w0[i*h:(i+1)*h])
	}
	for c, uc := range u {
		for j := 0; j < h; j++ {
			s.first[c*h+j] = b0[j] + uc*w0[j]
		}
	}
	return s
}

// pair evaluates the network with inputs (u, x) for two coordinates, of
// chains ca and cb. Their sums are independent chains of additions, which
// the processor overlaps; each is formed in the order Eval forms it, with
// max(z, 0)·w = (z + |z|)·(w/2) exactly.
func (s *shallowNet) pair(ca int, xa float64, cb int, xb float64) (fa, fb float64) {
	h := len(s.w1)
	firstA := s.first[ca*h : (ca+1)*h : (ca+1)*h]
	firstB := s.first[cb*h : (cb+1)*h : (cb+1)*h]
	w, w1 := s.w[0][:h], s.w1[:h]
	sa, sb := 0.0, 0.0
	for j, za := range firstA {
		za += xa * w[j]
		zb := firstB[j] + xb*w[j]
		sa += (za + math.Abs(za)) * w1[j]
		sb += (zb + math.Abs(zb)) * w1[j]
	}
	return s.b1 + sa, s.b1 + sb
}

// quad evaluates the network with inputs (u, x, g) for two coordinates, of
// chains ca and cb, each at two values of x with the same u and g: four
// independent sums, each formed as in pair.
func (s *shallowNet) quad(ca int, xa, ya, ga float64, cb int, xb, yb, gb float64) (fxa, fya, fxb, fyb float64) {
	h := len(s.w1)
	firstA := s.first[ca*h : (ca+1)*h : (ca+1)*h]
	firstB := s.first[cb*h : (cb+1)*h : (cb+1)*h]
	wx, wg, w1 := s.w[0][:h], s.w[1][:h], s.w1[:h]
	sxa, sya, sxb, syb := 0.0, 0.0, 0.0, 0.0
	for j, za := range firstA {
		zb := firstB[j]
		ta, tb := ga*wg[j], gb*wg[j]
		zxa, zya := za+xa*wx[j]+ta, za+ya*wx[j]+ta
		zxb, zyb := zb+xb*wx[j]+tb, zb+yb*wx[j]+tb
		sxa += (zxa + math.Abs(zxa)) * w1[j]
		sya += (zya + math.Abs(zya)) * w1[j]
		sxb += (zxb + math.Abs(zxb)) * w1[j]
		syb += (zyb + math.Abs(zyb)) * w1[j]
	}
	return s.b1 + sxa, s.b1 + sya, s.b1 + sxb, s.b1 + syb
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
	m := st.nn
	n := len(st.Theta)
	sc := cfg.scales(e, s.d, s.target.DataSize())
	m.gammaP, m.gammaThet = grow(m.gammaP, n), grow(m.gammaThet, n)
	f := &fusedFD{NNSGHMC: s, featureScales: sc, fq: newShallowNet(cfg.Q, sc.u), fd: newShallowNet(cfg.D, sc.u)}
	graph.ShareSpans(n, fusedSpan, func() (func(lo, hi int), func()) {
		return func(lo, hi int) { f.span(st, e, lo, hi) }, nil
	})
}

// fusedFD holds one fused step's constants.
type fusedFD struct {
	*NNSGHMC
	featureScales
	fq, fd shallowNet
}

// span advances the coordinates [lo, hi) in two passes, the momenta then
// the positions, each two coordinates at a time (the last one twice when
// their number is odd): the two coordinates' networks are evaluated
// together, and each pass's iterations are short chains of dependent
// operations, so the processor overlaps them. The first pass leaves p_t and
// Q_f(u_t, p_t) in the memory, where the second reads them.
func (f *fusedFD) span(st *State, e *tasks.Eval, lo, hi int) {
	cfg := &f.cfg
	m, k := st.nn, f.k
	theta, p := st.Theta[lo:hi], st.P[lo:hi]
	grad, priorGrad, noise := e.Grad[lo:hi], e.PriorGrad[lo:hi], m.noise[lo:hi]
	mu, mp, mq, mqhat := m.u[lo:hi], m.p[lo:hi], m.q[lo:hi], m.qhat[lo:hi]
	gammaP, gammaThet := m.gammaP[lo:hi], m.gammaThet[lo:hi]
	eta, ms, sg := cfg.StepSize, cfg.MomentumScale, f.sg
	// pairs calls step on the coordinate pairs (a, b) and their chains
	pairs := func(step func(a, b, ca, cb int)) {
		ca := lo % k
		for a := 0; a < len(theta); a += 2 {
			b, cb := a+1, ca+1
			if cb == k {
				cb = 0
			}
			if b == len(theta) {
				b, cb = a, ca
			}
			step(a, b, ca, cb)
			if ca = cb + 1; ca == k {
				ca = 0
			}
		}
	}
	pairs(func(a, b, ca, cb int) {
		pa, pb := p[a], p[b]
		// Q_f, f_D and f_D at the previous momentum
		qa, qb := f.fq.pair(ca, ms*pa, cb, ms*pb)
		qa, _ = cfg.qOf(qa)
		qb, _ = cfg.qOf(qb)
		fa, ha, fb, hb := f.fd.quad(ca, ms*pa, ms*mp[a], sg*grad[a], cb, ms*pb, ms*mp[b], sg*grad[b])
		du := f.su * (grad[a] + (f.coef-1)*priorGrad[a])
		pna, gpa := f.momentum(qa, fa, ha, pa, grad[a], du, f.u[ca], mu[a], mp[a], mq[a], mqhat[a], noise[a])
		du = f.su * (grad[b] + (f.coef-1)*priorGrad[b])
		pnb, gpb := f.momentum(qb, fb, hb, pb, grad[b], du, f.u[cb], mu[b], mp[b], mq[b], mqhat[b], noise[b])
		// every read is done: write (b == a writes the same values twice)
		ua, ub := f.u[ca], f.u[cb]
		gammaP[a], mu[a], mp[a], mq[a], p[a] = gpa, ua, pa, qa, pna
		gammaP[b], mu[b], mp[b], mq[b], p[b] = gpb, ub, pb, qb, pnb
	})
	pairs(func(a, b, ca, cb int) {
		// Q'_f at the new momentum, and the position update
		pna, pnb := p[a], p[b]
		q2a, q2b := f.fq.pair(ca, ms*pna, cb, ms*pnb)
		q2a, _ = cfg.qOf(q2a)
		q2b, _ = cfg.qOf(q2b)
		gta, gtb := -quotient(q2a-mq[a], pna-mp[a]), -quotient(q2b-mq[b], pnb-mp[b])
		tha, thb := theta[a]+eta*(q2a*pna+gta), theta[b]+eta*(q2b*pnb+gtb)
		theta[a], gammaThet[a], mqhat[a] = tha, gta, q2a
		theta[b], gammaThet[b], mqhat[b] = thb, gtb, q2b
	})
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
	b0, w1 []float64
	w      [][]float64 // w[i][j] = W0[i, j], the weights of input i
	b1     float64
}

func newGradNet(net *graph.MLPWeights) gradNet {
	h := net.Hidden[0]
	n := gradNet{b0: net.B[0][:h], w1: net.W[1][:h], b1: net.B[1][0]}
	for i := 0; i < net.Inputs; i++ {
		n.w = append(n.w, net.W[0][i*h:(i+1)*h])
	}
	return n
}

// q2 evaluates f_Q at (u, x) with ∂f/∂u and ∂f/∂x.
func (n *gradNet) q2(u, x float64) (f, du, dx float64) {
	h := len(n.b0)
	w0, wx, w1 := n.w[0][:h], n.w[1][:h], n.w1[:h]
	sum, d0, d1 := 0.0, 0.0, 0.0
	for j, bj := range n.b0 {
		z := bj + u*w0[j] + x*wx[j]
		sum += max(z, 0) * w1[j]
		c := graph.ReLUGate(z, w1[j])
		d0 += c * w0[j]
		d1 += c * wx[j]
	}
	return n.b1 + sum, d0, d1
}

// d3 evaluates f_D at (u, x, g) with ∂f/∂x.
func (n *gradNet) d3(u, x, g float64) (f, dx float64) {
	h := len(n.b0)
	w0, wx, wg, w1 := n.w[0][:h], n.w[1][:h], n.w[2][:h], n.w1[:h]
	sum, d1 := 0.0, 0.0
	for j, bj := range n.b0 {
		z := bj + u*w0[j] + x*wx[j] + g*wg[j]
		sum += max(z, 0) * w1[j]
		d1 += graph.ReLUGate(z, w1[j]) * wx[j]
	}
	return n.b1 + sum, d1
}

// canFuseExact reports whether the exact step can take the fused path.
func (s *NNSGHMC) canFuseExact() bool {
	cfg := &s.cfg
	return fusedFastPath && cfg.Gamma == GammaExact && cfg.Q.ShallowReLU() && cfg.D.ShallowReLU()
}

// stepFusedExact is stepPlain for GammaExact, the networks' features in
// s.feat, in one pass over the coordinates shared out among the cores.
func (s *NNSGHMC) stepFusedExact(st *State) {
	cfg := &s.cfg
	m := st.nn
	n := len(st.Theta)
	fq, fd := newGradNet(cfg.Q), newGradNet(cfg.D)
	m.gammaP, m.gammaThet = grow(m.gammaP, n), grow(m.gammaThet, n)
	eta, ms := cfg.StepSize, cfg.MomentumScale
	graph.ShareSpans(n, fusedSpan, func() (func(lo, hi int), func()) {
		return func(lo, hi int) {
			theta, p := st.Theta[lo:hi], st.P[lo:hi]
			u, du, gf := s.feat.U[lo:hi], s.feat.DU[lo:hi], s.feat.GFeat[lo:hi]
			grad, noise := st.Eval.Grad[lo:hi], m.noise[lo:hi]
			gammaP, gammaThet := m.gammaP[lo:hi], m.gammaThet[lo:hi]
			// two passes, the momenta then the positions: each iteration is
			// half as long a chain of dependent operations, so the processor
			// overlaps consecutive ones
			for i, pi := range p {
				f, dfu, dfx := fq.q2(u[i], ms*pi)
				q, gate := cfg.qOf(f)
				dQdu, dQdp := gate*dfu, gate*ms*dfx
				fD, dfD := fd.d3(u[i], ms*pi, gf[i])
				dDdp := cfg.DScale * ms * graph.AbsGrad(fD) * dfD
				d, inside := s.diffusion(q, cfg.DScale*math.Abs(fD))
				gp := s.gammaP(q, inside, dQdu, du[i], dDdp, dQdp)
				p[i], gammaP[i] = s.nextMomentum(q, d, gp, pi, grad[i], noise[i]), gp
			}
			for i, pn := range p {
				f2, _, dfx2 := fq.q2(u[i], ms*pn)
				q2, gate2 := cfg.qOf(f2)
				gt := -(gate2 * ms * dfx2)
				theta[i] += eta * (q2*pn + gt)
				gammaThet[i] = gt
			}
		}, nil
	})
	m.started = true
}
