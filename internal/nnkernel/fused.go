package nnkernel

import (
	"math"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// This file holds the fused steps: what stepPlain computes with GammaFD
// after the first step, and with GammaExact, for the trained networks'
// shape (one hidden layer, ReLU), in spans of coordinates shared out among
// the processors. A span goes by in blocks: a block's networks are
// evaluated first (by coordnet's ChainNet and GradNet, which give the
// networks' Eval and InputGrad bit for bit), into scratch vectors that stay
// in the first-level cache, then its update, so the step reads and writes
// every state vector once instead of the generic path's dozens of passes
// over scratch vectors of full length. They compute the update with
// stepPlain's own helpers, so they give stepPlain's result bit for bit
// (TestFusedStepsMatchPlain).

// fusedSpan is the number of coordinates a worker of the fused step takes at
// a time.
const fusedSpan = 4096

// fusedBlock is the number of coordinates whose networks the fused steps
// evaluate together.
const fusedBlock = 512

// fusedFastPath enables stepFusedFD (tests switch it off to compare).
var fusedFastPath = true

// canFuse reports whether the step can take the fused path.
func (s *Kernel) canFuse(m *memory) bool {
	cfg := &s.cfg
	return fusedFastPath && cfg.Gamma == GammaFD && m.started && cfg.Q.ShallowReLU() && cfg.D.ShallowReLU()
}

// stepFusedFD is stepPlain for GammaFD after the first step, with the
// networks' features computed from the evaluation e as Features does.
func (s *Kernel) stepFusedFD(st *samplers.State, e *samplers.Eval) {
	cfg := &s.cfg
	m := mem(st)
	n := len(st.Theta)
	sc := cfg.scales(e, s.d, s.target.DataSize())
	m.gammaP, m.gammaThet = grow(m.gammaP, n), grow(m.gammaThet, n)
	f := &fusedFD{Kernel: s, featureScales: sc, fq: coordnet.NewChainNet(cfg.Q, sc.u), fd: coordnet.NewChainNet(cfg.D, sc.u)}
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
	*Kernel
	featureScales
	fq, fd coordnet.ChainNet
}

// fusedScratch holds a block's network inputs and outputs.
type fusedScratch [7][fusedBlock]float64

// block advances the coordinates [lo, hi) in two passes, the momenta then
// the positions, each evaluating the block's networks first. The first pass
// leaves p_t and Q_f(u_t, p_t) in the memory, where the second reads them.
func (f *fusedFD) block(st *samplers.State, e *samplers.Eval, b *fusedScratch, lo, hi int) {
	cfg := &f.cfg
	m, k, n := mem(st), f.k, hi-lo
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
	f.fq.Eval(q, x, nil, c0)
	f.fd.Eval(d, x, g, c0)
	f.fd.Eval(dPrev, xPrev, g, c0)
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
	f.fq.Eval(q, x, nil, c0)
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
	e, slope := f.friction(d)
	gp = f.gammaP(q, inside, dQdu, du, dDdp, dQdp, slope)
	return f.nextMomentum(q, d, e, gp, p, g, noise, 0), gp
}

// canFuseExact reports whether the exact step can take the fused path.
func (s *Kernel) canFuseExact() bool {
	cfg := &s.cfg
	return fusedFastPath && (cfg.Gamma == GammaExact || cfg.Gamma == GammaAuthors) && cfg.Q.ShallowReLU() && cfg.D.ShallowReLU()
}

// stepFusedExact is stepPlain for GammaExact and GammaAuthors, the
// networks' features in s.feat, in blocks of coordinates shared out among
// the cores. Each block's networks are evaluated first, then its update,
// in two passes: the momenta, then the positions.
func (s *Kernel) stepFusedExact(st *samplers.State) {
	cfg := &s.cfg
	m := mem(st)
	n := len(st.Theta)
	fq, fd := coordnet.NewGradNet(cfg.Q), coordnet.NewGradNet(cfg.D)
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
func (s *Kernel) exactBlock(st *samplers.State, fq, fd *coordnet.GradNet, b *fusedScratch, lo, hi int) {
	cfg, m, n := &s.cfg, mem(st), hi-lo
	eta, ms := cfg.StepSize, cfg.MomentumScale
	theta, p := st.Theta[lo:hi], st.P[lo:hi]
	u, du, gf := s.feat.U[lo:hi], s.feat.DU[lo:hi], s.feat.GFeat[lo:hi]
	grad, noise := st.Eval.Grad[lo:hi], m.noise[lo:hi]
	gammaP, gammaThet := m.gammaP[lo:hi], m.gammaThet[lo:hi]
	x, f, dfu, dfx, fD, dfD, qt := b[0][:n], b[1][:n], b[2][:n], b[3][:n], b[4][:n], b[5][:n], b[6][:n]
	for i, pi := range p {
		x[i] = ms * pi
	}
	fq.InputGrad2(f, dfu, dfx, u, x)
	fd.InputGrad3(fD, dfD, u, x, gf)
	for i, pi := range p {
		q, gate := cfg.qOf(f[i])
		dQdu, dQdp := gate*dfu[i], gate*ms*dfx[i]
		dDdp := cfg.DScale * ms * absGrad(fD[i]) * dfD[i]
		d, inside := s.diffusion(q, cfg.DScale*math.Abs(fD[i]))
		e, slope := s.friction(d)
		gp := s.gammaP(q, inside, dQdu, du[i], dDdp, dQdp, slope)
		p[i], gammaP[i] = s.nextMomentum(q, d, e, gp, pi, grad[i], noise[i], 0), gp
		qt[i] = q
	}
	authors := cfg.Gamma == GammaAuthors
	for i, pn := range p {
		x[i] = ms * pn
	}
	fq.InputGrad2(f, dfu, dfx, u, x)
	for i, pn := range p {
		q2, gate2 := cfg.qOf(f[i])
		gt := -(gate2 * ms * dfx[i])
		if authors {
			q2 = qt[i] // Q_f at (θ_t, p_t), as the authors' training does
		}
		theta[i] += eta * (q2*pn + gt)
		gammaThet[i] = gt
	}
}
