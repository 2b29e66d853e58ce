package train

// Trace is what one unroll saw and produced, for comparing the
// meta-gradient with another implementation fed the same inputs (see
// cmd/dumpunroll). Vectors are coordinate-major, as the trainer holds
// them: coordinate i of chain c at index i·K + c.
type Trace struct {
	Theta0, P0 []float64   // the chains' state at the start
	Theta      [][]float64 // θ_t at the start of every step t
	Noise      [][]float64 // the noise ξ_t of every step
	// Grad holds, per loss (the cross-chain loss first), ∂L/∂φ per
	// parameter tensor: f_Q's (W0, B0, W1, B1, …), then f_D's.
	Grad [][][]float64
}

// SetTrace has f called with the trace of every following unroll, after
// the optimiser steps its gradients made (nil stops it). Tracing keeps every step's state of
// an unroll in memory until f returns.
func (t *Trainer) SetTrace(f func(*Trace)) {
	if f == nil {
		t.record = nil
		return
	}
	t.record = func(u *unrolled) {
		tr := &Trace{Grad: u.grads}
		for _, w := range u.windows {
			for _, r := range w.recs {
				xi := make([]float64, t.n)
				r.noiseInto(xi)
				tr.Theta, tr.Noise = append(tr.Theta, r.theta), append(tr.Noise, xi)
			}
		}
		if len(tr.Theta) > 0 {
			first := u.windows[0].recs[0]
			tr.Theta0, tr.P0 = first.theta, first.p
		}
		f(tr)
	}
}
