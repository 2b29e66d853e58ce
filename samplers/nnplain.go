package samplers

import "math"

// This file holds NNSGHMC's step without a graph: finite-difference Γ
// (GammaFD, the paper's appendix A as the authors' code computes it) and the
// Γ-free ablation (GammaNone).

// evalQ computes Q_f = β + clamp(f_Q(u, m·p), ±ClampQ) for every coordinate.
func (s *NNSGHMC) evalQ(u, p, out []float64) {
	cfg := &s.cfg
	s.in = grow(s.in, 2*len(p))
	for i := range p {
		s.in[2*i], s.in[2*i+1] = u[i], cfg.MomentumScale*p[i]
	}
	cfg.Q.Eval(s.in, out)
	for i, f := range out {
		if cfg.ClampQ > 0 {
			f = math.Min(math.Max(f, -cfg.ClampQ), cfg.ClampQ)
		}
		out[i] = cfg.Beta + f
	}
}

// evalDPart computes s_D·|f_D(u, m·p, g)| for every coordinate.
func (s *NNSGHMC) evalDPart(u, p, g, out []float64) {
	cfg := &s.cfg
	s.in = grow(s.in, 3*len(p))
	for i := range p {
		s.in[3*i], s.in[3*i+1], s.in[3*i+2] = u[i], cfg.MomentumScale*p[i], g[i]
	}
	cfg.D.Eval(s.in, out)
	for i, f := range out {
		out[i] = cfg.DScale * math.Abs(f)
	}
}

// diffusion returns D_f from Q_f and the network part, and whether the clamp
// on D_f is inactive (its derivative passes).
func (s *NNSGHMC) diffusion(q, dpart float64) (float64, bool) {
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

// quotient is a/b, or 0 when b is too small for the quotient to mean
// anything (the authors add 1e−7 to b instead, which is not sign-aware).
func quotient(a, b float64) float64 {
	if math.Abs(b) < 1e-10 {
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

// stepPlain is one NNSGHMC step with finite-difference Γ or without Γ.
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
func (s *NNSGHMC) stepPlain(st *State) {
	cfg := &s.cfg
	m := st.nn
	n := len(st.Theta)
	u, du, gf := s.feat.U, s.feat.DU, s.feat.GFeat
	p, grad := st.P, st.Eval.Grad
	fd := cfg.Gamma == GammaFD
	eta := cfg.StepSize

	s.q, s.q2 = grow(s.q, n), grow(s.q2, n)
	s.dpart, s.dhat, s.dd = grow(s.dpart, n), grow(s.dhat, n), grow(s.dd, n)
	m.gammaP, m.gammaThet, m.newP = grow(m.gammaP, n), grow(m.gammaThet, n), grow(m.newP, n)
	q, dpart := s.q, s.dpart
	s.evalQ(u, p, q)
	s.evalDPart(u, p, gf, dpart)

	clear(m.gammaP)
	if fd {
		dQdu, dQdp, dDdp := make([]float64, n), make([]float64, n), s.dd
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
		for i := range q {
			if _, inside := s.diffusion(q[i], dpart[i]); inside {
				m.gammaP[i] = dQdu[i]*du[i] + dDdp[i] + 2*cfg.Alpha*q[i]*dQdp[i]
			} else {
				m.gammaP[i] = dQdu[i] * du[i]
			}
		}
	}

	pn := m.newP
	for i := range p {
		d, _ := s.diffusion(q[i], dpart[i])
		pn[i] = p[i] - eta*(q[i]*grad[i]+d*p[i]) + eta*m.gammaP[i] + math.Sqrt(2*eta*d)*m.noise[i]
	}

	q2 := s.q2
	s.evalQ(u, pn, q2)
	clear(m.gammaThet)
	if fd {
		if !m.started {
			centralDiff(func(x, out []float64) { s.evalQ(u, x, out) }, pn, m.gammaThet)
		} else {
			for i := range q2 {
				m.gammaThet[i] = quotient(q2[i]-q[i], pn[i]-p[i])
			}
		}
		for i := range m.gammaThet {
			m.gammaThet[i] = -m.gammaThet[i]
		}
	}
	for i := range st.Theta {
		st.Theta[i] += eta * (q2[i]*pn[i] + m.gammaThet[i])
	}

	// remember u_t, p_t, Q_f(u_t, p_t) and Q_f(u_t, p_{t+1}) for the next step
	m.u = append(m.u[:0], u...)
	m.p = append(m.p[:0], p...)
	m.q = append(m.q[:0], q...)
	m.qhat = append(m.qhat[:0], q2...)
	copy(st.P, pn)
	m.started = true
}
