package nnkernel

import (
	"math"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/internal/vec"
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
	f := &fusedFD{Kernel: s, featureScales: sc, fq: coordnet.NewChainNet(cfg.Q, sc.u), fd: coordnet.NewChainNet(cfg.D, sc.u), temp: s.temperatures(m, n), zeta: s.zetas(m, n)}
	s.finds = newFinds(s.finds, n, fusedSpan)
	spans.Share(n, fusedSpan, func() (func(lo, hi int), func()) {
		b := new(fusedFDScratch)
		return func(lo, hi int) {
			found := &s.finds[lo/fusedSpan]
			for i := lo; i < hi; i += fusedBlock {
				f.block(st, e, b, found, i, min(i+fusedBlock, hi))
			}
		}, nil
	})
}

// fusedFD holds one fused step's constants.
type fusedFD struct {
	*Kernel
	featureScales
	fq, fd coordnet.ChainNet
	temp   []float64 // the thermostat's running means, nil when it is off
	zeta   []float64 // the adaptive friction's ζ, nil when it is off
}

// fusedScratch holds a block's network inputs and outputs.
type fusedScratch [7][fusedBlock]float64

// fusedFDScratch is fusedScratch and the finite-difference step's
// intermediate vectors: the quotients' operands and results, Q_f, D_f, the
// friction's exponent and exponential, the thermostat's factors, and where
// D_f's clamp is inactive.
type fusedFDScratch struct {
	fusedScratch
	v      [15][fusedBlock]float64
	inside [fusedBlock]bool
}

// block advances the coordinates [lo, hi) in two passes, the momenta then
// the positions, each evaluating the block's networks first, and records
// in found what it finds in the block's inputs and its new state. The first pass
// leaves p_t and Q_f(u_t, p_t) in the memory, where the second reads them.
// The momenta go in three loops, so that the quotients of the finite
// differences and the friction's exponentials run on vectors (vec.Quotient,
// vec.Expm1, which give the scalar results bit for bit): their operands and
// D_f, then those, then the update.
func (f *fusedFD) block(st *samplers.State, e *samplers.Eval, b *fusedFDScratch, found *finds, lo, hi int) {
	cfg := &f.cfg
	m, k, n := mem(st), f.k, hi-lo
	theta, p := st.Theta[lo:hi], st.P[lo:hi]
	grad, priorGrad, noise := e.Grad[lo:hi], e.PriorGrad[lo:hi], m.noise[lo:hi]
	mu, mp, mq, mqhat := m.u[lo:hi], m.p[lo:hi], m.q[lo:hi], m.qhat[lo:hi]
	gammaP, gammaThet := m.gammaP[lo:hi], m.gammaThet[lo:hi]
	eta, ms, sg := cfg.StepSize, cfg.MomentumScale, f.sg
	x, xPrev, g, q, d, dPrev := b.fusedScratch[0][:n], b.fusedScratch[1][:n], b.fusedScratch[2][:n], b.fusedScratch[3][:n], b.fusedScratch[4][:n], b.fusedScratch[5][:n]
	c0 := lo % k

	// Q_f, f_D and f_D at the previous momentum
	for i, pi := range p {
		x[i], xPrev[i], g[i] = ms*pi, ms*mp[i], sg*grad[i]
	}
	found.lookInputs(&f.watch, lo, x, g)
	f.fq.Eval(q, x, nil, c0)
	f.fd.Eval(d, x, g, c0)
	f.fd.Eval(dPrev, xPrev, g, c0)

	// the momenta: the operands of the quotients, Q_f and D_f
	v := &b.v
	num1, den1, num2, den2, num3 := v[0][:n], v[1][:n], v[2][:n], v[3][:n], v[4][:n]
	dQdu, dQdp, dDdp, qs, ds, ex := v[5][:n], v[6][:n], v[7][:n], v[8][:n], v[9][:n], v[10][:n]
	// the thermostat's factors, where it is on (temp not nil): Q_f is
	// cooled in the update, the networks' Q_f kept in the memory
	inside, cool, temp, zeta := b.inside[:n], v[12][:n], blockOf(f.temp, lo, hi), blockOf(f.zeta, lo, hi)
	c := c0
	for i, pi := range p {
		qi, _ := cfg.qOf(q[i])
		dpart, dhat := cfg.DScale*math.Abs(d[i]), cfg.DScale*math.Abs(dPrev[i])
		num1[i], den1[i] = qi-mqhat[i], f.u[c]-mu[i]
		num2[i], den2[i] = mqhat[i]-mq[i], pi-mp[i]
		num3[i] = dpart - dhat
		qs[i] = qi
		if temp != nil {
			cool[i] = cfg.cooling(temp[i])
			qi *= cool[i]
		}
		ds[i], inside[i] = f.diffusion(qi, dpart)
		ex[i] = -eta * ds[i]
		if c++; c == k {
			c = 0
		}
	}
	// the quotients (dQ_f/du, dQ_f/dp, dD_f/dp) and the friction's e
	vec.Quotient(dQdu, num1, den1, quotientTiny)
	vec.Quotient(dQdp, num2, den2, quotientTiny)
	vec.Quotient(dDdp, num3, den2, quotientTiny)
	fe := v[11][:n]
	if cfg.Friction != FrictionExplicit {
		vec.Expm1(fe, ex)
	} else {
		clear(fe)
	}
	// the adaptive friction's damping (damping), where it is on
	ea := fe
	if zeta != nil {
		ea = v[14][:n]
		xa := v[13][:n]
		for i, z := range zeta {
			xa[i] = cfg.dampingExponent(z, ds[i])
		}
		vec.Expm1(ea, xa)
	}
	// the update
	c = c0
	for i, pi := range p {
		qi := qs[i]
		qc, dqu, dqp := qi, dQdu[i], dQdp[i]
		if temp != nil {
			qc, dqu, dqp = cool[i]*qi, cool[i]*dqu, cool[i]*dqp
		}
		du := f.su * (grad[i] + (f.coef-1)*priorGrad[i])
		gp := f.gammaP(qc, inside[i], dqu, du, dDdp[i], dqp, 1+fe[i])
		pn := f.nextMomentum(qc, ds[i], ea[i], fe[i], gp, pi, grad[i], noise[i], 0)
		cfg.adapt(zeta, i, pn, ea[i])
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
		gt, qc := -quotient(q2-mq[i], pn-mp[i]), q2
		if temp != nil {
			gt, qc = cool[i]*gt, cool[i]*q2
		}
		theta[i], gammaThet[i], mqhat[i] = theta[i]+eta*(qc*pn+gt), gt, q2
	}
	warmAll(temp, p)
	found.lookState(lo, theta, p)
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
	s.finds = newFinds(s.finds, n, fusedSpan)
	temp, zeta := s.temperatures(m, n), s.zetas(m, n)
	spans.Share(n, fusedSpan, func() (func(lo, hi int), func()) {
		var b exactScratch
		return func(lo, hi int) {
			found := &s.finds[lo/fusedSpan]
			for i := lo; i < hi; i += fusedBlock {
				s.exactBlock(st, &fq, &fd, &b, found, temp, zeta, i, min(i+fusedBlock, hi))
			}
		}, nil
	})
	m.started = true
}

// exactScratch is fusedScratch and the thermostat's factors.
type exactScratch struct {
	fusedScratch
	cool [fusedBlock]float64
}

// exactBlock advances the coordinates [lo, hi) with exact Γ: the momenta,
// then the positions, each pass evaluating the block's networks first. It
// records in found what it finds in the block's inputs and its new state,
// warms the thermostat's running means temp and updates the adaptive
// friction's zeta (nil: off).
func (s *Kernel) exactBlock(st *samplers.State, fq, fd *coordnet.GradNet, b *exactScratch, found *finds, temp, zeta []float64, lo, hi int) {
	cfg, m, n := &s.cfg, mem(st), hi-lo
	eta, ms := cfg.StepSize, cfg.MomentumScale
	theta, p := st.Theta[lo:hi], st.P[lo:hi]
	u, du, gf := s.feat.U[lo:hi], s.feat.DU[lo:hi], s.feat.GFeat[lo:hi]
	grad, noise := st.Eval.Grad[lo:hi], m.noise[lo:hi]
	gammaP, gammaThet := m.gammaP[lo:hi], m.gammaThet[lo:hi]
	v := &b.fusedScratch
	x, f, dfu, dfx, fD, dfD, qt := v[0][:n], v[1][:n], v[2][:n], v[3][:n], v[4][:n], v[5][:n], v[6][:n]
	// the thermostat's factors and running means, the adaptive friction's ζ
	// (temp and zeta nil where off)
	cool, temp, zeta := b.cool[:n], blockOf(temp, lo, hi), blockOf(zeta, lo, hi)
	for i, pi := range p {
		x[i] = ms * pi
	}
	found.lookInputs(&s.watch, lo, x, gf)
	fq.InputGrad2(f, dfu, dfx, u, x)
	fd.InputGrad3(fD, dfD, u, x, gf)
	for i, pi := range p {
		q, gate := cfg.qOf(f[i])
		dQdu, dQdp := gate*dfu[i], gate*ms*dfx[i]
		if temp != nil {
			cool[i] = cfg.cooling(temp[i])
			q, dQdu, dQdp = cool[i]*q, cool[i]*dQdu, cool[i]*dQdp
		}
		dDdp := cfg.DScale * ms * absGrad(fD[i]) * dfD[i]
		d, inside := s.diffusion(q, cfg.DScale*math.Abs(fD[i]))
		e, slope := s.friction(d)
		gp := s.gammaP(q, inside, dQdu, du[i], dDdp, dQdp, slope)
		ea := cfg.damping(zeta, i, d, e)
		p[i], gammaP[i] = s.nextMomentum(q, d, ea, e, gp, pi, grad[i], noise[i], 0), gp
		cfg.adapt(zeta, i, p[i], ea)
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
		if temp != nil {
			q2, gt = cool[i]*q2, cool[i]*gt
		}
		if authors {
			q2 = qt[i] // Q_f at (θ_t, p_t), as the authors' training does
		}
		theta[i] += eta * (q2*pn + gt)
		gammaThet[i] = gt
	}
	warmAll(temp, p)
	found.lookState(lo, theta, p)
}
