package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/internal/ctxtest"
	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// batchedTarget is a target that visits "data" in minibatches: every
// evaluation takes the next batch of a samplers.Batches order and shifts the
// gradient by the batch's items, so the result depends on the position in
// the order, as with MNIST and the GRUs.
type batchedTarget struct {
	samplers.Target
	b *samplers.Batches
}

func (bt *batchedTarget) Batches() *samplers.Batches { return bt.b }

func (bt *batchedTarget) Evaluate(rng *rand.Rand, theta []float64, e *samplers.Eval) error {
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
	b, err := samplers.NewBatches(10, 3)
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
	for _, fresh := range []bool{false, true} {
		t.Run(fmt.Sprintf("FreshMomentum=%v", fresh), func(t *testing.T) { interruptAndResume(t, fresh) })
	}
}

func interruptAndResume(t *testing.T, freshMomentum bool) {
	const k = 4
	cfg := tinyConfig(k)
	cfg.Epochs, cfg.SubEpochs = 3, 2 // 9 unrolls of 7 steps
	cfg.FreshMomentum = freshMomentum
	straight, err := newTrainer(cfg, batchedProblem(t, k), smoothNets(), 5, false)
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
			first, err := newTrainer(cfg, prob, smoothNets(), 5, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := first.Run(ctxtest.CancelAfter(tc.steps), nil, nil); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("want an interruption, got %v", err)
			}
			if pos := first.Position(); pos != tc.at {
				t.Fatalf("interrupted at %+v, want %+v", pos, tc.at)
			}
			resumeMatches(t, straight, first, cfg, batchedProblem(t, k))
		})
	}
}

// resumeMatches resumes the interrupted run first from its checkpoint (after
// a JSON round trip) on a new trainer of cfg and prob, runs it to the end,
// and fails unless its networks and rows are those of the uninterrupted run
// straight, bit for bit (but the rows' timings). It returns the rows.
func resumeMatches(t *testing.T, straight, first *Trainer, cfg Config, prob Problem) []Row {
	t.Helper()
	back := checkpointRoundTrip(t, first)
	resumed, err := newTrainer(cfg, prob, smoothNets(), 999, false) // the seed is overridden by the checkpoint
	if err != nil {
		t.Fatal(err)
	}
	if err := resumed.Restore(back); err != nil {
		t.Fatal(err)
	}
	if err := resumed.Run(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	sameNetworks(t, straight, resumed, "straight", "resumed")
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
	return ra
}

// sameNetworks fails unless a's and b's networks agree bit for bit; the
// message names them aName and bName.
func sameNetworks(t *testing.T, a, b *Trainer, aName, bName string) {
	t.Helper()
	na, nb := a.networks(), b.networks()
	q := append(nb.Q.Params(), nb.D.Params()...)
	for i, p := range append(na.Q.Params(), na.D.Params()...) {
		for j := range p {
			if math.Float64bits(p[j]) != math.Float64bits(q[i][j]) {
				t.Fatalf("weights differ at param %d[%d]: %v %s, %v %s", i, j, p[j], aName, q[i][j], bName)
			}
		}
	}
}

// TestReadCheckpointRefusesABadField damages one field at a time of a
// checkpoint written in the middle of an epoch and requires ReadCheckpoint
// to refuse it in one line that names the file and the field and says what
// to do.
func TestReadCheckpointRefusesABadField(t *testing.T) {
	const k = 4
	cfg := tinyConfig(k)
	cfg.Epochs, cfg.SubEpochs = 3, 2
	tr, err := newTrainer(cfg, batchedProblem(t, k), smoothNets(), 5, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(ctxtest.CancelAfter(7*4+3), nil, nil); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want an interruption, got %v", err)
	}
	good := encodedCheckpoint(t, tr)
	dir := t.TempDir()
	path := filepath.Join(dir, "checkpoint.json")
	// edit applies a change to the checkpoint's JSON as a tree of maps
	edit := func(change func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		change(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	get := func(m map[string]any, keys ...string) map[string]any {
		for _, key := range keys {
			m = m[key].(map[string]any)
		}
		return m
	}
	tests := []struct {
		name   string
		change func(m map[string]any)
		want   string // in the error, after the file's name
	}{
		{"negative epoch", func(m map[string]any) { get(m, "position")["epoch"] = -5 }, "position.epoch is -5"},
		{"epoch past the schedule", func(m map[string]any) { get(m, "position")["epoch"] = 4 }, "position.epoch is 4"},
		{"negative unroll", func(m map[string]any) { get(m, "position")["unroll"] = -1 }, "position.unroll is -1"},
		{"unroll past the epoch", func(m map[string]any) { get(m, "position")["unroll"] = 3 }, "position.unroll is 3"},
		{"unroll at the end", func(m map[string]any) { get(m, "position")["epoch"], get(m, "config")["epochs"] = 1, 1 }, "position.unroll is 1"},
		{"bad config", func(m map[string]any) { get(m, "config")["chains"] = 0 }, "config: train: 0 chains"},
		{"bad learning rate", func(m map[string]any) { get(m, "config", "q_adam")["lr"] = -1 }, "config: adam"},
		{"no f_Q", func(m map[string]any) { delete(m, "f_q") }, "f_q is missing"},
		{"f_D of the wrong shape", func(m map[string]any) { get(m, "f_d")["inputs"] = 7 }, "f_d: mlp: layer 0 has 12 weights"},
		{"no Adam of f_D", func(m map[string]any) { delete(m, "d_adam") }, "d_adam is missing"},
		{"Adam steps", func(m map[string]any) { get(m, "q_adam")["t"] = 3 }, "q_adam.t is 3"},
		{"Adam config", func(m map[string]any) { get(m, "q_adam", "config")["lr"] = 1 }, "q_adam.config"},
		{"Adam moments", func(m map[string]any) { get(m, "d_adam")["m"] = []any{} }, "d_adam has 0 m"},
		{"negative Adam variance", func(m map[string]any) { get(m, "d_adam")["v"].([]any)[0].([]any)[0] = -1.0 }, "d_adam.v[0] has a negative value"},
		{"no random state", func(m map[string]any) { delete(m, "rng") }, "rng is missing"},
		{"no position", func(m map[string]any) { delete(m, "position") }, "position is missing"},
		{"null position", func(m map[string]any) { m["position"] = nil }, "position is missing"},
		{"no chain state mid-epoch", func(m map[string]any) { delete(m, "theta"); delete(m, "p") }, "theta has 0 values in the middle of an epoch"},
		{"momenta missing", func(m map[string]any) { delete(m, "p") }, "theta has 8 values and p 0"},
		{"chain state at an epoch's start", func(m map[string]any) { get(m, "position")["unroll"] = 0 }, "theta and p are given at the start"},
		{"batch position", func(m map[string]any) { m["batches"].([]any)[0].(map[string]any)["pos"] = -3 }, "batches[0]"},
		{"batch epoch", func(m map[string]any) { m["batches"].([]any)[0].(map[string]any)["epoch"] = -1 }, "batches[0]"},
		{"batch order", func(m map[string]any) { m["batches"].([]any)[0].(map[string]any)["perm"].([]any)[0] = 99 }, "batches[0]: samplers: saved batch order is not a permutation"},
		{"a row missing", func(m map[string]any) { m["rows"] = m["rows"].([]any)[1:] }, "rows has 7 rows, want 8"},
		{"a row out of place", func(m map[string]any) { m["rows"].([]any)[2].(map[string]any)["unroll"] = 2 }, "rows[2] is epoch 1, unroll 2"},
		{"negative time", func(m map[string]any) { m["seconds"] = -1 }, "seconds is -1"},
		{"version", func(m map[string]any) { m["version"] = 2 }, "has version 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, edit(tc.change), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadCheckpoint(path)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.Contains(msg, path) || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("got %q; want one line naming %s and %q", msg, path, tc.want)
			}
			if tc.name != "version" && !strings.Contains(msg, "restore it from a copy, or start the run afresh") {
				t.Errorf("got %q; want what to do", msg)
			}
		})
	}
	for _, raw := range []struct{ content, want string }{
		{"null", "it holds JSON null, not an object"},
		{"[1, 2]", "it holds a JSON array, not an object"},
		{"{}", "version is missing"},
	} {
		t.Run(raw.content, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(raw.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadCheckpoint(path)
			if err == nil || !strings.Contains(err.Error(), path+" is not valid: "+raw.want) {
				t.Errorf("%s: %v; want %q", raw.content, err, raw.want)
			}
		})
	}
	t.Run("not JSON", func(t *testing.T) {
		if err := os.WriteFile(path, good[:len(good)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadCheckpoint(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "damaged") {
			t.Errorf("a truncated checkpoint: %v", err)
		}
	})
	t.Run("unchanged", func(t *testing.T) {
		if err := os.WriteFile(path, edit(func(map[string]any) {}), 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := ReadCheckpoint(path)
		if err != nil {
			t.Fatal(err)
		}
		again, err := newTrainer(cfg, batchedProblem(t, k), smoothNets(), 5, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := again.Restore(back); err != nil {
			t.Fatal(err)
		}
		// a trainer of another configuration is refused, naming the field
		other := cfg
		other.Window++
		again, err = newTrainer(other, batchedProblem(t, k), smoothNets(), 5, false)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("its config.window is %d, this run's %d", cfg.Window, other.Window)
		if err := again.Restore(back); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Restore with another window: %v; want one line with %q", err, want)
		}
	})
}
