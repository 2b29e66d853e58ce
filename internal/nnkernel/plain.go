package nnkernel

import (
	"math"

	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// This file holds NNSGHMC's step without a graph: exact Γ from the
// networks' input gradients (GammaExact; it agrees with differentiating the
// step graph, which meta-training uses), finite-difference Γ (GammaFD, the
// paper's appendix A as the authors' code computes it) and the Γ-free
// ablation (GammaNone).

// evalQ computes Q_f = β + clamp(f_Q(u, m·p), ±ClampQ) for every coordinate;
// it leaves the clamp's gate (1 where it does not bind) in s.gate.
func (s *Kernel) evalQ(u, p, out []float64) {
	s.qInputs(u, p)
	s.cfg.Q.Eval(s.in, out)
	s.finishQ(out)
}

// evalQGrad computes Q_f as evalQ does and, in the same pass, its exact
// derivatives ∂Q_f/∂u and ∂Q_f/∂p (zero where the clamp binds); dQdu may be
// nil.
func (s *Kernel) evalQGrad(u, p, out, dQdu, dQdp []float64) {
	s.qInputs(u, p)
	s.dx = grow(s.dx, 2*len(p))
	s.cfg.Q.InputGrad(s.in, s.onesFor(len(p)), out, s.dx)
	s.finishQ(out)
	for i, g := range s.gate[:len(p)] {
		if dQdu != nil {
			dQdu[i] = g * s.dx[2*i]
		}
		dQdp[i] = g * s.cfg.MomentumScale * s.dx[2*i+1]
	}
}

// qInputs sets s.in to f_Q's input rows (u, m·p).
func (s *Kernel) qInputs(u, p []float64) {
	s.in = grow(s.in, 2*len(p))
	for i := range p {
		s.in[2*i], s.in[2*i+1] = u[i], s.cfg.MomentumScale*p[i]
	}
}

// finishQ turns f_Q's outputs into Q_f in place and sets the clamp's gate.
func (s *Kernel) finishQ(out []float64) {
	s.gate = grow(s.gate, len(out))
	for i, f := range out {
		out[i], s.gate[i] = s.cfg.qOf(f)
	}
}

// QF computes Q_f = β + clamp(f_Q(u_i, m·p_i), ±ClampQ) for every
// coordinate i into out.
func (cfg *Config) QF(u, p, out []float64) {
	s := Kernel{cfg: *cfg}
	s.evalQ(u, p, out)
}

// qOf turns an output f of f_Q into Q_f = β + clamp(f, ±ClampQ) and the
// clamp's gate: 1 where it does not bind, 0 where it does (no derivative
// passes).
func (cfg *Config) qOf(f float64) (q, gate float64) {
	gate = 1
	if c := cfg.ClampQ; c > 0 && !(f > -c && f < c) {
		if f >= c { // math.Min(math.Max(f, −c), c), small enough to inline: NaN stays NaN
			f = c
		} else if f <= -c {
			f = -c
		}
		gate = 0
	}
	return cfg.Beta + f, gate
}

// evalDPart computes s_D·|f_D(u, m·p, g)| for every coordinate.
func (s *Kernel) evalDPart(u, p, g, out []float64) {
	s.dInputs(u, p, g)
	s.cfg.D.Eval(s.in, out)
	for i, f := range out {
		out[i] = s.cfg.DScale * math.Abs(f)
	}
}

// evalDPartGrad computes s_D·|f_D(u, m·p, g)| as evalDPart does and, in the
// same pass, its exact derivative with respect to p.
func (s *Kernel) evalDPartGrad(u, p, g, out, dp []float64) {
	cfg := &s.cfg
	s.dInputs(u, p, g)
	s.dx = grow(s.dx, 3*len(p))
	cfg.D.InputGrad(s.in, s.onesFor(len(p)), out, s.dx)
	// ∂(s_D·|f|)/∂p = s_D·sign(f)·m·∂f/∂(m·p)
	for i, f := range out {
		dp[i] = cfg.DScale * cfg.MomentumScale * absGrad(f) * s.dx[3*i+1]
		out[i] = cfg.DScale * math.Abs(f)
	}
}

// absGrad is the derivative of |x| that graph.Abs's gradient uses, sign(x)
// and 0 at 0, so that the steps without a graph agree with the step graph
// where f_D is 0.
func absGrad(x float64) float64 {
	if x > 0 {
		return 1
	}
	if x < 0 {
		return -1
	}
	return 0
}

// dInputs sets s.in to f_D's input rows (u, m·p, g).
func (s *Kernel) dInputs(u, p, g []float64) {
	s.in = grow(s.in, 3*len(p))
	for i := range p {
		s.in[3*i], s.in[3*i+1], s.in[3*i+2] = u[i], s.cfg.MomentumScale*p[i], g[i]
	}
}

// onesFor returns n ones (the row weights of a plain input gradient).
func (s *Kernel) onesFor(n int) []float64 {
	for len(s.ones) < n {
		s.ones = append(s.ones, 1)
	}
	return s.ones[:n]
}

// diffusion returns D_f from Q_f and the network part, and whether the clamp
// on D_f is inactive (its derivative passes).
func (s *Kernel) diffusion(q, dpart float64) (float64, bool) {
	cfg := &s.cfg
	d := cfg.Alpha*q*q + dpart + cfg.C
	if d <= 0 {
		return 0, false
	}
	if cfg.DMax > 0 && d >= cfg.DMax {
		return cfg.DMax, false
	}
	return d, true
}

// authorsDU is ∂u/∂θ_i as the authors' code takes it (GammaAuthors):
// |s_u|·∇Ũ/N whatever the sign of the energy scale s_u, so +∇Ũ/N where
// u = −Ũ/N (BNN_Q_D.py:69 multiplies ∂f_Q/∂u by ∇Ũ/N).
func (cfg *Config) authorsDU(du float64) float64 {
	if cfg.EnergyScale < 0 {
		return -du
	}
	return du
}

// gammaP is Γ_p of one coordinate, ∂Q_f/∂u·∂u/∂θ plus, where D_f's clamp
// does not bind (inside), the friction's slope (see friction) times
// ∂D_f/∂p = ∂(s_D|f_D|)/∂p + 2α·Q_f·∂Q_f/∂p.
func (s *Kernel) gammaP(q float64, inside bool, dQdu, du, dDdp, dQdp, slope float64) float64 {
	if s.cfg.Gamma == GammaAuthors {
		gp := dQdu*s.cfg.authorsDU(du) + slope*dDdp
		if inside {
			gp += slope * 2 * s.cfg.Alpha * q * dQdp
		}
		return gp
	}
	if inside {
		return dQdu*du + slope*dDdp + slope*2*s.cfg.Alpha*q*dQdp
	}
	return dQdu * du
}

// friction returns, for the diffusion d = D_f of a coordinate, what the
// friction step needs: e = e^{−η·d} − 1 (math.Expm1) and the slope
// ∂D_eff/∂D_f = e^{−η·d} of the diffusion D_eff = −e/η it runs with, under
// FrictionExponential; 0 and 1 under FrictionExplicit, which runs with D_f.
//
// The exponential step is the explicit one with D_f replaced by D_eff =
// (1 − e^{−η·D_f})/η, a smooth cap of D_f below 1/η: so Γ_p, whose ∂D/∂p
// is the recipe's correction for a state-dependent D, takes D_eff's
// derivative, ∂D_eff/∂p = e^{−η·D_f}·∂D_f/∂p, and the sampler stays valid.
func (s *Kernel) friction(d float64) (e, slope float64) {
	if s.cfg.Friction != FrictionExplicit {
		e = math.Expm1(-s.cfg.StepSize * d)
	}
	return e, 1 + e
}

// nextMomentum is p_{t+1} of one coordinate with diffusion d, e from
// friction(d) and the damping e_a from damping (e where the adaptive
// friction is off), the noise variance less b2 ≥ 0 (2η·B̂ under the noise
// correction, else 0): explicit,
//
//	p − η(Q_f·∇Ũ + D_f·p) + η·Γ_p + √(2η·D_f − b2)·ξ,
//
// or exponential, the same with η·D_eff = −e, damped by e_a,
//
//	p + e_a·p − η·Q_f·∇Ũ + η·Γ_p + √(−2e − b2)·ξ.
//
// A negative variance injects no noise.
func (s *Kernel) nextMomentum(q, d, ea, e, gp, p, g, noise, b2 float64) float64 {
	eta := s.cfg.StepSize
	if s.cfg.Friction == FrictionExplicit {
		return p - eta*(q*g+d*p) + eta*gp + math.Sqrt(max(2*eta*d-b2, 0))*noise
	}
	return p + ea*p - eta*(q*g) + eta*gp + math.Sqrt(max(-2*e-b2, 0))*noise
}

// quotientTiny is the smallest |b| quotient divides by.
const quotientTiny = 1e-10

// quotient is a/b, or 0 when b is too small for the quotient to mean
// anything (the authors add 1e−7 to b instead, which is not sign-aware).
func quotient(a, b float64) float64 {
	if math.Abs(b) < quotientTiny {
		return 0
	}
	return a / b
}

// centralDiff sets out[i] to the central difference of f along coordinate i
// of x, for a function f acting coordinate-wise.
func centralDiff(f func(x, out []float64), x, out []float64) {
	n := len(x)
	xp, xm, fp, fm := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	h := make([]float64, n)
	for i, v := range x {
		h[i] = 1e-5 * math.Max(1, math.Abs(v))
		xp[i], xm[i] = v+h[i], v-h[i]
	}
	f(xp, fp)
	f(xm, fm)
	for i := range out {
		out[i] = (fp[i] - fm[i]) / (2 * h[i])
	}
}

// stepPlain is one NNSGHMC step without a graph.
//
// Exact Γ differentiates the networks at the current state:
//
//	Γ_p = ∂Q_f/∂u·∂u/∂θ + ∂D_f/∂p,   Γ'_θ = −∂Q_f/∂p at (u_t, p_{t+1}).
//
// Finite differences follow the authors' code (appendix A of the paper): at
// step t ≥ 1, with u_{t−1}, p_{t−1}, Q_{t−1} = Q_f(u_{t−1}, p_{t−1}) and
// Q̂_{t−1} = Q_f(u_{t−1}, p_t) kept from the previous step,
//
//	∂Q_f/∂u  ≈ (Q_f(u_t, p_t) − Q̂_{t−1}) / (u_t − u_{t−1})
//	∂Q_f/∂p  ≈ (Q̂_{t−1} − Q_{t−1}) / (p_t − p_{t−1})           (one step stale)
//	∂f_D/∂p  ≈ (f_D(u_t, p_t) − f_D(u_t, p_{t−1})) / (p_t − p_{t−1})  (one extra pass)
//	∂Q'_f/∂p ≈ (Q_f(u_t, p_{t+1}) − Q_f(u_t, p_t)) / (p_{t+1} − p_t)
//
// and ∂D_f/∂p = 2α·Q_f·∂Q_f/∂p + ∂(s_D|f_D|)/∂p, zero where D_f is clamped.
// The first step, which has no history, uses central differences.
func (s *Kernel) stepPlain(st *samplers.State) {
	cfg := &s.cfg
	m := mem(st)
	n := len(st.Theta)
	u, du, gf := s.feat.U, s.feat.DU, s.feat.GFeat
	p, grad := st.P, st.Eval.Grad
	exact, fd := cfg.Gamma == GammaExact || cfg.Gamma == GammaAuthors, cfg.Gamma == GammaFD
	eta := cfg.StepSize

	s.q, s.q2 = grow(s.q, n), grow(s.q2, n)
	s.dpart, s.dhat, s.dd = grow(s.dpart, n), grow(s.dhat, n), grow(s.dd, n)
	s.dQdu, s.dQdp = grow(s.dQdu, n), grow(s.dQdp, n)
	m.gammaP, m.gammaThet, m.newP = grow(m.gammaP, n), grow(m.gammaThet, n), grow(m.newP, n)
	q, dpart := s.q, s.dpart
	dQdu, dQdp, dDdp := s.dQdu, s.dQdp, s.dd
	switch {
	case exact:
		s.evalQGrad(u, p, q, dQdu, dQdp)
		s.evalDPartGrad(u, p, gf, dpart, dDdp)
	case fd:
		s.evalQ(u, p, q)
		s.evalDPart(u, p, gf, dpart)
		if !m.started {
			centralDiff(func(x, out []float64) { s.evalQ(x, p, out) }, u, dQdu)
			centralDiff(func(x, out []float64) { s.evalQ(u, x, out) }, p, dQdp)
			centralDiff(func(x, out []float64) { s.evalDPart(u, x, gf, out) }, p, dDdp)
		} else {
			s.evalDPart(u, m.p, gf, s.dhat)
			for i := range q {
				dQdu[i] = quotient(q[i]-m.qhat[i], u[i]-m.u[i])
				dQdp[i] = quotient(m.qhat[i]-m.q[i], p[i]-m.p[i])
				dDdp[i] = quotient(dpart[i]-s.dhat[i], p[i]-m.p[i])
			}
		}
	default:
		s.evalQ(u, p, q)
		s.evalDPart(u, p, gf, dpart)
	}

	// the thermostat's factors of Q_f (q, q2 and the memory keep the
	// networks' Q_f, which the finite differences compare across steps)
	temp := s.temperatures(m, n)
	s.cool = grow(s.cool, n)
	cfg.cools(s.cool, temp)
	zeta := s.zetas(m, n)

	pn := m.newP
	vhat := st.Eval.NoiseVar
	s.excess = NoiseExcess{}
	for i := range p {
		c := s.cool[i]
		qc := c * q[i]
		d, inside := s.diffusion(qc, dpart[i])
		e, slope := s.friction(d)
		ea := cfg.damping(zeta, i, d, e)
		gp := 0.0
		if exact || fd {
			gp = s.gammaP(qc, inside, c*dQdu[i], du[i], dDdp[i], c*dQdp[i], slope)
		}
		b2 := 0.0
		if vhat != nil {
			// the minibatch noise of η·Q_f·∇Ũ adds η²·Q_f²·V̂ = 2η·B̂ to
			// the momentum's variance
			b := 0.5 * eta * qc * qc * vhat[i]
			if b > d && b-d > s.excess.B-s.excess.D {
				s.excess = NoiseExcess{B: b, D: d, Coord: i}
			}
			if cfg.NoiseCorrection {
				b2 = 2 * eta * b
			}
		}
		m.gammaP[i], pn[i] = gp, s.nextMomentum(qc, d, ea, e, gp, p[i], grad[i], m.noise[i], b2)
		cfg.adapt(zeta, i, pn[i], ea)
	}

	q2 := s.q2
	clear(m.gammaThet)
	switch {
	case exact:
		s.evalQGrad(u, pn, q2, nil, m.gammaThet)
	case fd:
		s.evalQ(u, pn, q2)
		if !m.started {
			centralDiff(func(x, out []float64) { s.evalQ(u, x, out) }, pn, m.gammaThet)
		} else {
			for i := range q2 {
				m.gammaThet[i] = quotient(q2[i]-q[i], pn[i]-p[i])
			}
		}
	default:
		s.evalQ(u, pn, q2)
	}
	for i := range m.gammaThet {
		m.gammaThet[i] = -s.cool[i] * m.gammaThet[i]
	}
	qPos := q2
	if cfg.Gamma == GammaAuthors {
		qPos = q // Q_f at (θ_t, p_t), as the authors' training does
	}
	for i := range st.Theta {
		st.Theta[i] += eta * (s.cool[i]*qPos[i]*pn[i] + m.gammaThet[i])
	}
	warmAll(temp, pn)

	// remember u_t, p_t, Q_f(u_t, p_t) and Q_f(u_t, p_{t+1}) for the next
	// step (only finite differences use them)
	if fd {
		m.u = append(m.u[:0], u...)
		m.p = append(m.p[:0], p...)
		m.q = append(m.q[:0], q...)
		m.qhat = append(m.qhat[:0], q2...)
	}
	copy(st.P, pn)
	m.started = true
}
