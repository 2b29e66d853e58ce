package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// afterSteps is a context whose Err turns to context.Canceled on its n+1-th
// call: the trainer asks once per sampler step, so it interrupts a run at a
// chosen step, in the middle of an unroll as a signal would.
type afterSteps struct {
	context.Context
	n, calls atomic.Int64
}

func newAfterSteps(n int) *afterSteps {
	c := &afterSteps{Context: context.Background()}
	c.n.Store(int64(n))
	return c
}

func (c *afterSteps) Err() error {
	if c.calls.Add(1) > c.n.Load() {
		return context.Canceled
	}
	return nil
}

// batchedTarget is a target that visits "data" in minibatches: every
// evaluation takes the next batch of a tasks.Batches order and shifts the
// gradient by the batch's items, so the result depends on the position in
// the order, as with MNIST and the GRUs.
type batchedTarget struct {
	tasks.Target
	b *tasks.Batches
}

func (bt *batchedTarget) Batches() *tasks.Batches { return bt.b }

func (bt *batchedTarget) Evaluate(rng *rand.Rand, theta []float64, e *tasks.Eval) error {
	idx := bt.b.Next(rng)
	if err := bt.Target.Evaluate(rng, theta, e); err != nil {
		return err
	}
	shift := 0.0
	for _, i := range idx {
		shift += 0.05 * float64(i-4)
	}
	for i := range e.Grad {
		e.Grad[i] += shift
	}
	for c := range e.U {
		e.U[c] += shift
	}
	return nil
}

// batchedProblem is tinyProblem whose sampler sees minibatches of 3 from 10
// items: a data epoch lasts 3 evaluations, so an unroll of 7 steps reshuffles
// twice or more.
func batchedProblem(t *testing.T, k int) Problem {
	t.Helper()
	p := tinyProblem(t, k, 2)
	b, err := tasks.NewBatches(10, 3)
	if err != nil {
		t.Fatal(err)
	}
	p.Target = &batchedTarget{Target: p.Target, b: b}
	return p
}

// TestInterruptMidUnrollResumesExactly interrupts training at several steps,
// in the middle of unrolls and at their boundaries, on a target that draws
// minibatches, writes the checkpoint to JSON, resumes from it in a fresh
// trainer and requires the networks and rows of an uninterrupted run bit for
// bit: the abandoned unroll must leave neither the random generator nor the
// minibatch order advanced.
func TestInterruptMidUnrollResumesExactly(t *testing.T) {
	const k = 4
	cfg := tinyConfig(k)
	cfg.Epochs, cfg.SubEpochs = 3, 2 // 9 unrolls of 7 steps
	straight, err := New(cfg, batchedProblem(t, k), smoothNets(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := straight.Run(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		steps int // steps run before the interruption
		at    Position
	}{
		{"first step", 0, Position{}},
		{"mid first unroll", 4, Position{}},
		{"start of the second unroll", 7, Position{Unroll: 1}},
		{"mid second unroll", 10, Position{Unroll: 1}},
		{"mid second epoch", 26, Position{Epoch: 1}},
		{"last step of the second epoch", 41, Position{Epoch: 1, Unroll: 2}},
		{"mid last unroll", 60, Position{Epoch: 2, Unroll: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prob := batchedProblem(t, k)
			first, err := New(cfg, prob, smoothNets(), 5)
			if err != nil {
				t.Fatal(err)
			}
			if err := first.Run(newAfterSteps(tc.steps), nil, nil); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("want an interruption, got %v", err)
			}
			if pos := first.Position(); pos != tc.at {
				t.Fatalf("interrupted at %+v, want %+v", pos, tc.at)
			}
			cp, err := first.Checkpoint()
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := cp.Encode(&buf); err != nil {
				t.Fatal(err)
			}
			var back Checkpoint
			if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
				t.Fatal(err)
			}
			resumed, err := New(cfg, batchedProblem(t, k), smoothNets(), 999)
			if err != nil {
				t.Fatal(err)
			}
			if err := resumed.Restore(&back); err != nil {
				t.Fatal(err)
			}
			if err := resumed.Run(context.Background(), nil, nil); err != nil {
				t.Fatal(err)
			}
			sameNetworks(t, straight, resumed)
			ra, rb := straight.Rows(), resumed.Rows()
			if len(ra) != len(rb) {
				t.Fatalf("%d rows straight, %d resumed", len(ra), len(rb))
			}
			for i := range ra {
				ra[i].Seconds, rb[i].Seconds = 0, 0
				if ra[i] != rb[i] {
					t.Fatalf("row %d: %+v straight, %+v resumed", i, ra[i], rb[i])
				}
			}
		})
	}
}

// sameNetworks fails unless a's and b's networks agree bit for bit.
func sameNetworks(t *testing.T, a, b *Trainer) {
	t.Helper()
	na, nb := a.Networks(), b.Networks()
	q := append(nb.Q.Params(), nb.D.Params()...)
	for i, p := range append(na.Q.Params(), na.D.Params()...) {
		for j := range p {
			if math.Float64bits(p[j]) != math.Float64bits(q[i][j]) {
				t.Fatalf("weights differ at param %d[%d]: %v vs %v", i, j, p[j], q[i][j])
			}
		}
	}
}
