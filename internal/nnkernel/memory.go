package nnkernel

import (
	"encoding/json"
	"errors"
	"fmt"
)

// nnJSON is what NNSGHMC's memory carries from one step to the next (the
// finite differences', the thermostat's and the adaptive friction's); the
// rest of memory is each step's scratch.
type nnJSON struct {
	Started bool      `json:"started"`
	U       []float64 `json:"u,omitempty"`
	P       []float64 `json:"p,omitempty"`
	Q       []float64 `json:"q,omitempty"`
	QHat    []float64 `json:"qhat,omitempty"`
	Temp    []float64 `json:"temp,omitempty"`
	Zeta    []float64 `json:"zeta,omitempty"`
}

// MarshalJSON saves the finite-difference memory of NNSGHMC.
func (m *memory) MarshalJSON() ([]byte, error) {
	return json.Marshal(nnJSON{Started: m.started, U: m.u, P: m.p, Q: m.q, QHat: m.qhat, Temp: m.temp, Zeta: m.zeta})
}

// UnmarshalJSON restores memory saved by MarshalJSON.
func (m *memory) UnmarshalJSON(b []byte) error {
	var j nnJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	m.started, m.u, m.p, m.q, m.qhat, m.temp, m.zeta = j.Started, j.U, j.P, j.Q, j.QHat, j.Temp, j.Zeta
	return nil
}

// Fits checks the restored memory against n coordinates (see
// samplers.Restore).
func (m *memory) Fits(n int) error {
	if err := errors.Join(vectorFits("u", m.u, n), vectorFits("p", m.p, n), vectorFits("q", m.q, n), vectorFits("qhat", m.qhat, n), vectorFits("temp", m.temp, n), vectorFits("zeta", m.zeta, n)); err != nil {
		return err
	}
	if l := len(m.u); len(m.p) != l || len(m.q) != l || len(m.qhat) != l {
		return fmt.Errorf("u, p, q and qhat have %d, %d, %d and %d values, want as many", len(m.u), len(m.p), len(m.q), len(m.qhat))
	}
	return nil
}

// vectorFits checks a saved vector of the memory: empty or of length n.
func vectorFits(name string, v []float64, n int) error {
	if len(v) != 0 && len(v) != n {
		return fmt.Errorf("%s has %d values, want %d (or none)", name, len(v), n)
	}
	return nil
}
