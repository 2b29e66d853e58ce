package samplers

import (
	"encoding/json"
	"fmt"
)

// Snapshot is a State in a form that encoding/json writes and reads back
// exactly (floats in their shortest exact form): its step, positions,
// momenta and the kernel's memory, State.Aux, as JSON. A run that saves a
// Snapshot and the random source it draws from, and later restores both,
// continues bit for bit as if it had not stopped.
//
// State.Eval is not saved: every kernel of this package evaluates the
// target at the current positions at the start of a step, before reading
// Eval, so the evaluation a step leaves behind is never used by the next.
type Snapshot struct {
	Steps int       `json:"steps"`
	Theta []float64 `json:"theta"`
	P     []float64 `json:"p,omitempty"` // nil for first-order kernels
	// Aux is the kernel's memory as its MarshalJSON writes it; absent for
	// a kernel without memory.
	Aux json.RawMessage `json:"aux,omitempty"`
}

// Save returns a snapshot of s, a copy. The kernel's memory must implement
// json.Marshaler, as that of the kernels of this package does (or be nil).
func Save(s *State) (*Snapshot, error) {
	snap := &Snapshot{Steps: s.Steps, Theta: append([]float64(nil), s.Theta...)}
	if s.P != nil {
		snap.P = append([]float64(nil), s.P...)
	}
	if s.Aux != nil {
		m, ok := s.Aux.(json.Marshaler)
		if !ok {
			return nil, fmt.Errorf("samplers: the kernel's memory, a %T, cannot be saved (it does not implement json.Marshaler)", s.Aux)
		}
		b, err := m.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("samplers: saving the kernel's memory: %w", err)
		}
		snap.Aux = b
	}
	return snap, nil
}

// Restore returns the state saved in snap, for kernel k, which must be of
// the type and settings of the kernel that stepped it (on the same target):
// k.Init makes a state at the saved positions and momenta, and the saved
// memory is decoded into the memory Init gives it, which must implement
// json.Unmarshaler. It refuses a snapshot that does not fit k: a
// different number of positions, momenta where k has none or none where
// it has some, memory where k keeps none or none where it keeps some.
func Restore(k Kernel, snap *Snapshot) (*State, error) {
	if snap.Steps < 0 {
		return nil, fmt.Errorf("samplers: snapshot at step %d, want ≥ 0", snap.Steps)
	}
	st, err := k.Init(snap.Theta, snap.P)
	if err != nil {
		return nil, err
	}
	if (st.P == nil) != (snap.P == nil) {
		return nil, fmt.Errorf("samplers: snapshot with %d momenta for a kernel with%s momenta", len(snap.P), map[bool]string{true: "out", false: ""}[st.P == nil])
	}
	st.Steps = snap.Steps
	switch saved := len(snap.Aux) > 0 && string(snap.Aux) != "null"; {
	case !saved && st.Aux == nil:
	case !saved:
		return nil, fmt.Errorf("samplers: snapshot without the memory that %T keeps", k)
	case st.Aux == nil:
		return nil, fmt.Errorf("samplers: snapshot with memory for %T, which keeps none", k)
	default:
		u, ok := st.Aux.(json.Unmarshaler)
		if !ok {
			return nil, fmt.Errorf("samplers: the memory of %T, a %T, cannot be restored (it does not implement json.Unmarshaler)", k, st.Aux)
		}
		if err := u.UnmarshalJSON(snap.Aux); err != nil {
			return nil, fmt.Errorf("samplers: restoring the memory of %T: %w", k, err)
		}
		if v, ok := st.Aux.(interface{ Fits(n int) error }); ok {
			if err := v.Fits(len(st.Theta)); err != nil {
				return nil, fmt.Errorf("samplers: restoring the memory of %T: %w", k, err)
			}
		}
	}
	return st, nil
}

// vectorFits checks a saved vector of the memory: empty or of length n.
func vectorFits(name string, v []float64, n int) error {
	if len(v) != 0 && len(v) != n {
		return fmt.Errorf("%s has %d values, want %d (or none)", name, len(v), n)
	}
	return nil
}

type psgldJSON struct {
	V []float64 `json:"v"`
}

// MarshalJSON saves pSGLD's moving average (null before the first step).
func (m *psgldMemory) MarshalJSON() ([]byte, error) { return json.Marshal(psgldJSON{V: m.v}) }

// UnmarshalJSON restores a moving average saved by MarshalJSON.
func (m *psgldMemory) UnmarshalJSON(b []byte) error {
	var j psgldJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	m.v = j.V
	return nil
}

// Fits checks the restored average against n coordinates.
func (m *psgldMemory) Fits(n int) error { return vectorFits("v", m.v, n) }
