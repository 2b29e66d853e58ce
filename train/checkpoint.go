package train

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// CheckpointVersion is the version of the checkpoint format.
const CheckpointVersion = 1

// Checkpoint is the whole state of a training run at the end of an unroll:
// resuming from it gives the same result, bit for bit, as never stopping.
type Checkpoint struct {
	Version  int               `json:"version"`
	Config   Config            `json:"config"`
	Position Position          `json:"position"`
	Q        *graph.MLPWeights `json:"f_q"`
	D        *graph.MLPWeights `json:"f_d"`
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
	}, nil
}

// batches returns the minibatch orders of the targets, in the order of
// Checkpoint.Batches.
func (t *Trainer) batches() []*tasks.Batches {
	targets := []tasks.Target{t.prob.Target}
	if t.prob.LossTarget != t.prob.Target {
		targets = append(targets, t.prob.LossTarget)
	}
	var bs []*tasks.Batches
	for _, tg := range targets {
		if b, ok := tg.(tasks.Batched); ok && b.Batches() != nil {
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

// ReadCheckpoint reads a checkpoint file.
func ReadCheckpoint(path string) (*Checkpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read checkpoint: %w", err)
	}
	var c Checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("checkpoint %s is not valid: %w", path, err)
	}
	if c.Version != CheckpointVersion {
		return nil, fmt.Errorf("checkpoint %s has version %d; this program reads version %d", path, c.Version, CheckpointVersion)
	}
	return &c, nil
}

// Restore puts a checkpoint's state into the trainer, which must have been
// made with the same configuration except, possibly, the number of epochs:
// a run can be extended, or ended early at its checkpoint.
func (t *Trainer) Restore(c *Checkpoint) error {
	ca, cb := c.Config, t.cfg
	ca.Epochs, cb.Epochs = 0, 0
	a, _ := json.Marshal(ca)
	b, _ := json.Marshal(cb)
	if string(a) != string(b) {
		return fmt.Errorf("the checkpoint was written with another training configuration:\n  checkpoint: %s\n  now:        %s", a, b)
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
	return t.sync()
}

func sameShape(a, b *graph.MLPWeights) error {
	if a == nil {
		return fmt.Errorf("missing")
	}
	if a.Inputs != b.Inputs || fmt.Sprint(a.Hidden) != fmt.Sprint(b.Hidden) || a.Activation != b.Activation {
		return fmt.Errorf("network %d→%v (%s), want %d→%v (%s)", a.Inputs, a.Hidden, a.Activation, b.Inputs, b.Hidden, b.Activation)
	}
	return nil
}
