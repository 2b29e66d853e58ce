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

// stepsFit checks the saved step count of a kernel's memory.
func stepsFit(t int) error {
	if t < 0 {
		return fmt.Errorf("t is %d, want ≥ 0", t)
	}
	return nil
}

// countedVectorFits checks a saved vector of the memory of a kernel that
// counts its steps: none before its first step (t = 0), n values after.
func countedVectorFits(name string, v []float64, t, n int) error {
	want := n
	if t == 0 {
		want = 0
	}
	if len(v) != want {
		return fmt.Errorf("%s has %d values at step %d, want %d", name, len(v), t, want)
	}
	return nil
}

type adamJSON struct {
	T int       `json:"t"`
	M []float64 `json:"m"`
	V []float64 `json:"v"`
}

// MarshalJSON saves Adam's step count and moments (null before the first
// step).
func (m *adamMemory) MarshalJSON() ([]byte, error) {
	return json.Marshal(adamJSON{T: m.t, M: m.m, V: m.v})
}

// UnmarshalJSON restores Adam's memory saved by MarshalJSON.
func (m *adamMemory) UnmarshalJSON(b []byte) error {
	var j adamJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	m.t, m.m, m.v = j.T, j.M, j.V
	return nil
}

// Fits checks the restored memory against n coordinates: both moments or
// neither, and none before the first step.
func (m *adamMemory) Fits(n int) error {
	if err := stepsFit(m.t); err != nil {
		return err
	}
	if err := countedVectorFits("m", m.m, m.t, n); err != nil {
		return err
	}
	return countedVectorFits("v", m.v, m.t, n)
}

type santaJSON struct {
	T     int       `json:"t"`
	V     []float64 `json:"v"`
	Alpha []float64 `json:"alpha"`
	DrawU bool      `json:"draw_u,omitempty"`
}

// MarshalJSON saves Santa's step count, squared-gradient average and
// thermostats (null before the first step), and whether u_0 is still to be
// drawn.
func (m *santaMemory) MarshalJSON() ([]byte, error) {
	return json.Marshal(santaJSON{T: m.t, V: m.v, Alpha: m.alpha, DrawU: m.drawU})
}

// UnmarshalJSON restores Santa's memory saved by MarshalJSON.
func (m *santaMemory) UnmarshalJSON(b []byte) error {
	var j santaJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	m.t, m.v, m.alpha, m.drawU = j.T, j.V, j.Alpha, j.DrawU
	return nil
}

// Fits checks the restored memory against n coordinates: both vectors or
// neither, none before the first step, and u_0 drawn after it.
func (m *santaMemory) Fits(n int) error {
	if err := stepsFit(m.t); err != nil {
		return err
	}
	for _, x := range []struct {
		name string
		v    []float64
	}{{"v", m.v}, {"alpha", m.alpha}} {
		if err := countedVectorFits(x.name, x.v, m.t, n); err != nil {
			return err
		}
	}
	if m.drawU && m.t > 0 {
		return fmt.Errorf("draw_u is set at step %d, after u_0 was drawn", m.t)
	}
	return nil
}
