package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// CheckpointVersion is the version of the checkpoint format.
const CheckpointVersion = 1

// Checkpoint is the whole state of a training run at the end of an unroll:
// resuming from it gives the same result, bit for bit, as never stopping.
type Checkpoint struct {
	Version  int               `json:"version"`
	Config   Config            `json:"config"`
	Position Position          `json:"position"`
	Q        *coordnet.Weights `json:"f_q"`
	D        *coordnet.Weights `json:"f_d"`
	QAdam    *Adam             `json:"q_adam"`
	DAdam    *Adam             `json:"d_adam"`
	RNG      []byte            `json:"rng"`
	Theta    []float64         `json:"theta,omitempty"` // chain state; absent at an epoch's start
	P        []float64         `json:"p,omitempty"`
	// Batches are the minibatch orders of the targets that have one (the
	// sampler's target, then the loss's when it is another).
	Batches []json.RawMessage `json:"batches,omitempty"`
	Rows    []Row             `json:"rows"`
	Seconds float64           `json:"seconds"`
	// Ranges are the networks' input ranges over the epoch under way and
	// over the last complete epoch (absent in checkpoints written before
	// they were recorded: the ranges then start afresh).
	Ranges [2]*InputRanges `json:"input_ranges,omitzero"`
}

// Checkpoint returns the trainer's state.
func (t *Trainer) Checkpoint() (*Checkpoint, error) {
	rng, err := t.pcg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	batches, err := t.saveBatches()
	if err != nil {
		return nil, err
	}
	adam := func(a *Adam) *Adam {
		c := &Adam{Config: a.Config, T: a.T}
		for i := range a.M {
			c.M = append(c.M, clone(a.M[i]))
			c.V = append(c.V, clone(a.V[i]))
		}
		return c
	}
	return &Checkpoint{
		Version: CheckpointVersion, Config: t.cfg, Position: t.pos,
		Q: t.nn.Q.Clone(), D: t.nn.D.Clone(), QAdam: adam(t.qAdam), DAdam: adam(t.dAdam),
		RNG: rng, Theta: clone(t.theta), P: clone(t.p), Batches: batches, Rows: t.Rows(), Seconds: t.elapsed(),
		Ranges: [2]*InputRanges{t.ranges.clone(), t.lastRanges.clone()},
	}, nil
}

// batches returns the minibatch orders of the targets, in the order of
// Checkpoint.Batches.
func (t *Trainer) batches() []*samplers.Batches {
	targets := []samplers.Target{t.prob.Target}
	if t.prob.LossTarget != t.prob.Target {
		targets = append(targets, t.prob.LossTarget)
	}
	var bs []*samplers.Batches
	for _, tg := range targets {
		if b, ok := tg.(samplers.Batched); ok && b.Batches() != nil {
			bs = append(bs, b.Batches())
		}
	}
	return bs
}

// saveBatches returns the targets' minibatch orders as JSON.
func (t *Trainer) saveBatches() ([]json.RawMessage, error) {
	var saved []json.RawMessage
	for _, b := range t.batches() {
		j, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		saved = append(saved, j)
	}
	return saved, nil
}

// restoreBatches puts orders saved by saveBatches back into the targets.
func (t *Trainer) restoreBatches(saved []json.RawMessage) error {
	bs := t.batches()
	if len(saved) != len(bs) {
		return fmt.Errorf("%d minibatch orders for %d batched targets", len(saved), len(bs))
	}
	for i, j := range saved {
		if err := bs[i].UnmarshalJSON(j); err != nil {
			return err
		}
	}
	return nil
}

// Encode writes the checkpoint as JSON (floats in their shortest exact
// form).
func (c *Checkpoint) Encode(w io.Writer) error { return json.NewEncoder(w).Encode(c) }

// ReadCheckpoint reads a checkpoint file and validates it (see Validate).
func ReadCheckpoint(path string) (*Checkpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read checkpoint: %w", err)
	}
	if err := checkpointFields(b); err != nil {
		return nil, fmt.Errorf("checkpoint %s is not valid: %v; %s", path, err, damaged)
	}
	var c Checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		if field := badField(b); field != "" {
			return nil, fmt.Errorf("checkpoint %s is not valid: %s: %v; %s", path, field, err, damaged)
		}
		return nil, fmt.Errorf("checkpoint %s is not valid JSON of a checkpoint (%v); %s", path, err, damaged)
	}
	if c.Version != CheckpointVersion {
		return nil, fmt.Errorf("checkpoint %s has version %d; this program reads version %d (continue the run with the program that wrote it)", path, c.Version, CheckpointVersion)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("checkpoint %s is not valid: %v; %s", path, err, damaged)
	}
	return &c, nil
}

// requiredFields are the fields that every checkpoint has.
var requiredFields = []string{"version", "config", "position", "f_q", "f_d", "q_adam", "d_adam", "rng", "rows", "seconds"}

// checkpointFields checks that b is a JSON object with every required
// field, naming the first that is missing or null.
func checkpointFields(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("it holds a JSON %s, not an object with a checkpoint's fields", te.Value)
		}
		return nil // not JSON at all: ReadCheckpoint says where it breaks
	}
	if m == nil {
		return errors.New("it holds JSON null, not an object with a checkpoint's fields")
	}
	for _, k := range requiredFields {
		// rows is null before the first unroll
		if v, ok := m[k]; !ok || string(v) == "null" && k != "rows" {
			return fmt.Errorf("%s is missing", k)
		}
	}
	return nil
}

// badField returns the name of the first top-level field of the JSON
// object b that does not decode into a Checkpoint on its own, or "".
func badField(b []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		one, err := json.Marshal(map[string]json.RawMessage{k: m[k]})
		if err != nil {
			return k
		}
		if json.Unmarshal(one, new(Checkpoint)) != nil {
			return k
		}
	}
	return ""
}

// damaged says what to do about a damaged checkpoint file.
const damaged = "the file is damaged or was edited: restore it from a copy, or start the run afresh into another output directory"

// Validate checks that every field of the checkpoint is one a training run
// can have written: a valid configuration, a position within its schedule,
// networks, optimiser states, random state, chain state, minibatch orders
// and rows that agree with it. (Restore checks, in addition, that they fit
// the trainer.) The error names the first bad field as in the JSON.
func (c *Checkpoint) Validate() error {
	cfg := c.Config
	// the configuration, save its number of epochs, which the position is
	// checked against below
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("config: %v", err)
	}
	pos := c.Position
	if pos.Epoch < 0 || pos.Epoch > cfg.Epochs {
		return fmt.Errorf("position.epoch is %d, want 0 to %d (config.epochs)", pos.Epoch, cfg.Epochs)
	}
	switch {
	case pos.Epoch == cfg.Epochs && pos.Unroll != 0:
		return fmt.Errorf("position.unroll is %d at the end of the schedule (position.epoch %d = config.epochs), want 0", pos.Unroll, pos.Epoch)
	case pos.Unroll < 0 || pos.Unroll > cfg.SubEpochs:
		return fmt.Errorf("position.unroll is %d, want 0 to %d (config.sub_epochs)", pos.Unroll, cfg.SubEpochs)
	}
	for _, n := range []struct {
		name string
		w    *coordnet.Weights
	}{{"f_q", c.Q}, {"f_d", c.D}} {
		if n.w == nil {
			return fmt.Errorf("%s is missing", n.name)
		}
		if err := n.w.Validate(); err != nil {
			return fmt.Errorf("%s: %v", n.name, err)
		}
	}
	switch {
	case len(c.Theta) != len(c.P):
		return fmt.Errorf("theta has %d values and p %d, want as many", len(c.Theta), len(c.P))
	case pos.Unroll == 0 && len(c.Theta) > 0:
		return fmt.Errorf("theta and p are given at the start of an epoch (position.unroll 0), where the chains start afresh")
	case pos.Unroll > 0 && (len(c.Theta) == 0 || len(c.Theta)%cfg.Chains != 0):
		return fmt.Errorf("theta has %d values in the middle of an epoch, want a positive multiple of %d chains", len(c.Theta), cfg.Chains)
	}
	// one row, and one step of each optimiser, per loss and unroll done
	var losses []string
	if cfg.Cross != nil {
		losses = append(losses, "cross-chain")
	}
	if cfg.InChain != nil {
		losses = append(losses, "in-chain")
	}
	steps := (pos.Epoch*(1+cfg.SubEpochs) + pos.Unroll) * len(losses)
	for _, a := range []struct {
		name string
		a    *Adam
		cfg  AdamConfig
		w    *coordnet.Weights
	}{{"q_adam", c.QAdam, cfg.QAdam, c.Q}, {"d_adam", c.DAdam, cfg.DAdam, c.D}} {
		if err := a.a.validate(a.cfg, a.w.Params(), steps); err != nil {
			return fmt.Errorf("%s%v", a.name, err)
		}
	}
	if err := new(rand.PCG).UnmarshalBinary(c.RNG); err != nil {
		return fmt.Errorf("rng: %v", err)
	}
	for i, raw := range c.Batches {
		if err := validBatches(raw); err != nil {
			return fmt.Errorf("batches[%d]: %v", i, err)
		}
	}
	if len(c.Rows) != steps {
		return fmt.Errorf("rows has %d rows, want %d (%d losses in each of the %d unrolls before the position)", len(c.Rows), steps, len(losses), steps/max(len(losses), 1))
	}
	for i, r := range c.Rows {
		u := i / len(losses)
		want := Row{Epoch: u/(1+cfg.SubEpochs) + 1, Unroll: u % (1 + cfg.SubEpochs), Loss: losses[i%len(losses)]}
		if r.Epoch != want.Epoch || r.Unroll != want.Unroll || r.Loss != want.Loss {
			return fmt.Errorf("rows[%d] is epoch %d, unroll %d, loss %q; want epoch %d, unroll %d, loss %q", i, r.Epoch, r.Unroll, r.Loss, want.Epoch, want.Unroll, want.Loss)
		}
		if r.GradNorm < 0 || r.Seconds < 0 {
			return fmt.Errorf("rows[%d] has grad_norm %v and seconds %v, want both ≥ 0", i, r.GradNorm, r.Seconds)
		}
	}
	if c.Seconds < 0 {
		return fmt.Errorf("seconds is %v, want ≥ 0", c.Seconds)
	}
	return nil
}

// validate checks a saved optimiser state against its configuration, the
// parameters it steps and the number of steps taken; its errors start with
// the field (".t", ".m[0]").
func (a *Adam) validate(cfg AdamConfig, params [][]float64, steps int) error {
	if a == nil {
		return fmt.Errorf(" is missing")
	}
	if a.Config != cfg {
		return fmt.Errorf(".config is %+v, want config's %+v", a.Config, cfg)
	}
	if a.T != steps {
		return fmt.Errorf(".t is %d, want %d (one step per row)", a.T, steps)
	}
	if len(a.M) != len(params) || len(a.V) != len(params) {
		return fmt.Errorf(" has %d m and %d v tensors, want %d", len(a.M), len(a.V), len(params))
	}
	for i, p := range params {
		if len(a.M[i]) != len(p) || len(a.V[i]) != len(p) {
			return fmt.Errorf(".m[%d] and .v[%d] have %d and %d values, want %d", i, i, len(a.M[i]), len(a.V[i]), len(p))
		}
		for _, v := range a.V[i] {
			if v < 0 {
				return fmt.Errorf(".v[%d] has a negative value %v", i, v)
			}
		}
	}
	return nil
}

// validBatches checks a saved minibatch order on its own.
func validBatches(raw json.RawMessage) error {
	var s struct {
		Perm     []int `json:"perm"`
		Size     int   `json:"size"`
		KeepLast bool  `json:"keep_last"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	b, err := samplers.NewBatchesKeepLast(len(s.Perm), s.Size, s.KeepLast)
	if err != nil {
		return err
	}
	return b.UnmarshalJSON(raw)
}

// Restore puts a checkpoint's state into the trainer, which must have been
// made with the same configuration except, possibly, the number of epochs:
// a run can be extended, or ended early at its checkpoint.
func (t *Trainer) Restore(c *Checkpoint) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	ca, cb := c.Config, t.cfg
	ca.Epochs, cb.Epochs = 0, 0
	if field, was, now := firstDifference(ca, cb); field != "" {
		return fmt.Errorf("the checkpoint was written with another training configuration: its config.%s is %s, this run's %s", field, was, now)
	}
	if err := sameShape(c.Q, t.nn.Q); err != nil {
		return fmt.Errorf("checkpoint f_Q: %w", err)
	}
	if err := sameShape(c.D, t.nn.D); err != nil {
		return fmt.Errorf("checkpoint f_D: %w", err)
	}
	if (c.Theta == nil) != (c.P == nil) || (c.Theta != nil && (len(c.Theta) != t.n || len(c.P) != t.n)) {
		return fmt.Errorf("checkpoint chain state has %d positions and %d momenta, want %d", len(c.Theta), len(c.P), t.n)
	}
	if err := t.pcg.UnmarshalBinary(c.RNG); err != nil {
		return fmt.Errorf("checkpoint random state: %w", err)
	}
	// Checkpoints written before the minibatch orders were saved have none:
	// their targets start a new data epoch.
	if bs := t.batches(); len(c.Batches) > 0 {
		if len(c.Batches) != len(bs) {
			return fmt.Errorf("checkpoint has %d minibatch orders, the targets %d", len(c.Batches), len(bs))
		}
		for i, saved := range c.Batches {
			if err := bs[i].UnmarshalJSON(saved); err != nil {
				return fmt.Errorf("checkpoint minibatch order: %w", err)
			}
		}
	}
	for i, p := range t.nn.Q.Params() {
		copy(p, c.Q.Params()[i])
	}
	for i, p := range t.nn.D.Params() {
		copy(p, c.D.Params()[i])
	}
	t.qAdam, t.dAdam = c.QAdam, c.DAdam
	t.pos, t.theta, t.p = c.Position, clone(c.Theta), clone(c.P)
	if len(c.Theta) == 0 {
		t.theta, t.p = nil, nil
	}
	t.rows, t.seconds = append([]Row(nil), c.Rows...), c.Seconds
	t.ranges, t.lastRanges = c.Ranges[0].clone(), c.Ranges[1].clone()
	return t.sync()
}

func sameShape(a, b *coordnet.Weights) error {
	if a == nil {
		return fmt.Errorf("missing")
	}
	if a.Inputs != b.Inputs || fmt.Sprint(a.Hidden) != fmt.Sprint(b.Hidden) || a.Activation != b.Activation {
		return fmt.Errorf("network %d→%v (%s), want %d→%v (%s)", a.Inputs, a.Hidden, a.Activation, b.Inputs, b.Hidden, b.Activation)
	}
	return nil
}

// firstDifference returns the first field, in the order of their JSON
// names, as a dotted path ("cross_chain.every"), where the JSON forms of a
// and b differ, with its values in each ("absent" where one lacks it); ""
// when they are equal.
func firstDifference(a, b any) (field, av, bv string) {
	var x, y any
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	json.Unmarshal(ja, &x)
	json.Unmarshal(jb, &y)
	return diffJSON("", x, y)
}

// diffJSON is firstDifference on decoded JSON values at path.
func diffJSON(path string, x, y any) (string, string, string) {
	mx, okx := x.(map[string]any)
	my, oky := y.(map[string]any)
	if okx && oky {
		keys := make([]string, 0, len(mx)+len(my))
		for k := range mx {
			keys = append(keys, k)
		}
		for k := range my {
			if _, ok := mx[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if f, a, b := diffJSON(p, mx[k], my[k]); f != "" {
				return f, a, b
			}
		}
		return "", "", ""
	}
	show := func(v any) string {
		if v == nil {
			return "absent"
		}
		j, _ := json.Marshal(v)
		return string(j)
	}
	if sx, sy := show(x), show(y); sx != sy {
		if path == "" {
			path = "(whole)"
		}
		return path, sx, sy
	}
	return "", "", ""
}
