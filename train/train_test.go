package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/graph/graphtest"
	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/bnn"
	"github.com/metasgmcmc/metasgmcmc/tasks/gaussian"
)

// tinyProblem is a 2-D correlated Gaussian for k chains whose dynamics see
// gradient noise and whose losses see the exact gradient, started around
// (2, −2).
func tinyProblem(t *testing.T, k int, d int) Problem {
	t.Helper()
	mean := make([]float64, d)
	cov := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		cov.SetSym(i, i, 1+float64(i))
		if i > 0 {
			cov.SetSym(i, i-1, 0.5)
		}
	}
	g, err := gaussian.New(mean, cov)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := tasks.Compile(g, k, graph.Float64)
	if err != nil {
		t.Fatal(err)
	}
	return Problem{
		Target:     tasks.GradientNoise{Target: ev, Sigma: 0.5},
		LossTarget: ev,
		Init: func(rng *rand.Rand, k int) []float64 {
			x := make([]float64, d*k)
			for i := range x {
				x[i] = 2 + rng.NormFloat64()
				if (i/k)%2 == 1 {
					x[i] -= 4
				}
			}
			return x
		},
	}
}

// smoothNets are tanh networks (smooth, so finite differences are clean)
// with every term of the sampler switched on.
func smoothNets() nnkernel.Config {
	cfg := nnkernel.Config{Settings: nnkernel.Settings{StepSize: 0.05, Alpha: 0.2, Beta: 0.3, C: 0.5, ClampQ: 5, DMax: 50, DScale: 1,
		EnergyScale: 0.5, GradScale: 1, MomentumScale: 1, Gamma: nnkernel.GammaExact}}
	rng := rand.New(rand.NewPCG(12, 34))
	cfg.Q = coordnet.New(2, []int{4}, coordnet.Tanh, rng)
	cfg.D = coordnet.New(3, []int{4}, coordnet.Tanh, rng)
	return cfg
}

func tinyConfig(k int) Config {
	adam := AdamConfig{LR: 1e-3, Beta1: 0.5, Beta2: 0.99, Eps: 1e-8}
	return Config{
		Chains: k, Epochs: 1, SubEpochs: 0, Steps: 7, Window: 3,
		Cross:   &CrossChain{Every: 2, Lambda: 0.05, Weight: 1},
		InChain: &InChain{Burn: 1, Thin: 2, FirstChain: [2]int{0, 0}, Stride: [2]int{2, 2}, Lambda: 0.03, Weight: 1},
		QAdam:   adam, DAdam: adam, MomentumSD: 1,
	}
}

// replay recomputes the surrogate loss of one recorded unroll for networks
// q, d: every window starts from its recorded state, the networks see the
// recorded momenta (as the stop-gradients make them constants), and the
// loss is Σ_j adj_j·θ_j with the recorded adjoints. Its finite differences
// in φ are what the back-propagated gradient must equal.
type replay struct {
	sg   *StepGraph
	prog *graph.Program
	u    *unrolled
	base nnkernel.Config // the networks whose Q_f D_f's α·Q_f² term sees
}

func newReplay(t *testing.T, nn nnkernel.Config, n int, u *unrolled) *replay {
	sg, err := BuildStep(nn, n, graph.Float64, StepOptions{FrozenInputs: true})
	if err != nil {
		t.Fatal(err)
	}
	prog, err := graph.Compile(sg.ThetaNext, sg.PNext)
	if err != nil {
		t.Fatal(err)
	}
	base := nn
	base.Q, base.D = nn.Q.Clone(), nn.D.Clone()
	return &replay{sg: sg, prog: prog, u: u, base: base}
}

func (r *replay) loss(l int) (float64, error) {
	if err := r.sg.QNet.Sync(); err != nil {
		return 0, err
	}
	if err := r.sg.DNet.Sync(); err != nil {
		return 0, err
	}
	total := 0.0
	for _, w := range r.u.windows {
		theta, p := clone(w.recs[0].theta), clone(w.recs[0].p)
		for s := w.a; s < w.b; s++ {
			rec := w.recs[s-w.a]
			pNext := w.pEnd
			if s+1 < w.b {
				pNext = w.recs[s+1-w.a].p
			}
			f := rec.features(&r.base, r.u.dataSize, make([]float64, len(rec.p)), make([]float64, len(rec.p)))
			noise := make([]float64, len(rec.p))
			rec.noiseInto(noise)
			if err := r.sg.Feed(theta, p, f, rec.grad, noise); err != nil {
				return 0, err
			}
			graph.SetValue(r.sg.PIn, rec.p)
			graph.SetValue(r.sg.PNextIn, pNext)
			qd := make([]float64, len(rec.p))
			r.base.QF(f.U, rec.p, qd)
			graph.SetValue(r.sg.QDIn, qd)
			if err := r.prog.Run(); err != nil {
				return 0, err
			}
			graph.Value(r.sg.ThetaNext, theta)
			graph.Value(r.sg.PNext, p)
			if a := r.u.adj[l][s+1]; a != nil {
				for i := range a {
					total += a[i] * theta[i]
				}
			}
		}
	}
	return total, nil
}

// TestUnrolledLossGradientMatchesFiniteDifferences back-propagates both
// losses through a 7-step unroll in windows of 3 and checks the φ-gradient
// of each against central finite differences of the replayed loss: the
// fresh unroll, and a continuation unroll run at its own step size
// (Config.ContinueStepSize; Adam's learning rate is then negligible, so the
// networks stay those the replay is given).
func TestUnrolledLossGradientMatchesFiniteDifferences(t *testing.T) {
	const k, d = 4, 2
	for _, tc := range []struct {
		name      string
		subEpochs int
		contEta   float64
		authors   bool
	}{
		{"fresh", 0, 0, false},
		{"continuation", 1, 0.08, false},
		// the authors' training-mode step, with a negative energy scale
		// and D_f's clamp binding on some coordinates
		{"authors step", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nn := smoothNets()
			cfg := tinyConfig(k)
			cfg.Chunk = 5 // several blocks, with a remainder, to test the chunking too
			cfg.SubEpochs, cfg.ContinueStepSize = tc.subEpochs, tc.contEta
			if tc.authors {
				cfg.AuthorsStep = true
				nn.EnergyScale, nn.DMax = -0.5, 1.2
			}
			if tc.subEpochs > 0 {
				cfg.QAdam.LR, cfg.DAdam.LR = 1e-300, 1e-300
			}
			tr, err := newTrainer(cfg, tinyProblem(t, k, d), nn, 7, true)
			if err != nil {
				t.Fatal(err)
			}
			var got *unrolled // the last unroll
			tr.record = func(u *unrolled) { got = u }
			before := tr.networks()
			if tc.authors {
				before.Gamma = nnkernel.GammaAuthors
			}
			if tc.contEta > 0 {
				before.StepSize = tc.contEta
			}
			if err := tr.Run(context.Background(), nil, nil); err != nil {
				t.Fatal(err)
			}
			if got == nil || len(got.windows) != 3 {
				t.Fatalf("recorded %v", got)
			}
			if tc.authors {
				// D_f's clamp must bind on some coordinates of some steps
				clamped, all := 0, 0
				for _, w := range got.windows {
					for _, rec := range w.recs {
						m := len(rec.p)
						f := rec.features(&before, got.dataSize, make([]float64, m), make([]float64, m))
						q, x, fd := make([]float64, m), make([]float64, 3*m), make([]float64, m)
						before.QF(f.U, rec.p, q)
						for i := range rec.p {
							x[3*i], x[3*i+1], x[3*i+2] = f.U[i], before.MomentumScale*rec.p[i], f.GFeat[i]
						}
						before.D.Eval(x, fd)
						for i := range q {
							if before.Alpha*q[i]*q[i]+before.DScale*math.Abs(fd[i])+before.C >= before.DMax {
								clamped++
							}
							all++
						}
					}
				}
				t.Logf("D_f's clamp binds on %d of %d recorded coordinates", clamped, all)
				if clamped == 0 || clamped == all {
					t.Fatalf("D_f's clamp binds on %d of %d recorded coordinates: the case needs some of each", clamped, all)
				}
			}
			for l, name := range []string{"cross-chain", "in-chain"} {
				rp := newReplay(t, before, d*k, got)
				params := append(rp.sg.QNet.Weights.Params(), rp.sg.DNet.Weights.Params()...)
				res, err := graphtest.CheckGradient(func() (float64, error) { return rp.loss(l) }, params, got.grads[l], 1e-6, 0)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: %v", name, res)
				if res.Worst > 1e-6 {
					t.Errorf("%s loss: back-propagated φ-gradient disagrees with finite differences: %v", name, res)
				}
				norm := 0.0
				for _, g := range got.grads[l] {
					for _, v := range g {
						norm += v * v
					}
				}
				if norm == 0 {
					t.Errorf("%s loss: zero gradient", name)
				}
			}
		})
	}
}

// TestContinueStepSizeRunsTheContinuations checks that the continuation
// unrolls, and only they, run at Config.ContinueStepSize: the fresh
// unroll's chains end where they end without it, the continuation's do
// not, and a ContinueStepSize equal to the sampler's changes nothing.
func TestContinueStepSizeRunsTheContinuations(t *testing.T) {
	const k, d = 4, 2
	ends := func(contEta float64) [][]float64 {
		cfg := tinyConfig(k)
		cfg.SubEpochs, cfg.ContinueStepSize = 1, contEta
		tr, err := newTrainer(cfg, tinyProblem(t, k, d), smoothNets(), 7, false)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]float64
		tr.record = func(u *unrolled) { out = append(out, clone(u.windows[len(u.windows)-1].pEnd)) }
		if err := tr.Run(context.Background(), nil, nil); err != nil {
			t.Fatal(err)
		}
		return out
	}
	plain, same, other := ends(0), ends(smoothNets().StepSize), ends(0.08)
	if len(plain) != 2 {
		t.Fatalf("%d unrolls recorded, want 2", len(plain))
	}
	equal := slices.Equal[[]float64]
	for i := range plain {
		if !equal(plain[i], same[i]) {
			t.Errorf("unroll %d: ContinueStepSize equal to the step size changed the chains", i)
		}
	}
	if !equal(plain[0], other[0]) {
		t.Error("ContinueStepSize changed the fresh unroll")
	}
	if equal(plain[1], other[1]) {
		t.Error("ContinueStepSize did not change the continuation unroll")
	}
}

// TestFreshMomentumRestartsTheContinuations checks Config.FreshMomentum on
// an epoch of three unrolls: the first continuation starts from the fresh
// unroll's end either way; the second starts from the first's positions,
// and from the fresh unroll's final momentum with FreshMomentum but from
// the first continuation's without.
func TestFreshMomentumRestartsTheContinuations(t *testing.T) {
	const k, d = 4, 2
	type start struct{ theta, p, pEnd []float64 }
	starts := func(fresh bool) []start {
		cfg := tinyConfig(k)
		cfg.SubEpochs, cfg.FreshMomentum = 2, fresh
		tr, err := newTrainer(cfg, tinyProblem(t, k, d), smoothNets(), 7, false)
		if err != nil {
			t.Fatal(err)
		}
		var out []start
		tr.record = func(u *unrolled) {
			first, last := u.windows[0].recs[0], u.windows[len(u.windows)-1]
			out = append(out, start{clone(first.theta), clone(first.p), clone(last.pEnd)})
		}
		if err := tr.Run(context.Background(), nil, nil); err != nil {
			t.Fatal(err)
		}
		if len(out) != 3 {
			t.Fatalf("%d unrolls recorded, want 3", len(out))
		}
		return out
	}
	equal := slices.Equal[[]float64]
	carry, fresh := starts(false), starts(true)
	for i := range 2 {
		if !equal(carry[i].theta, fresh[i].theta) || !equal(carry[i].p, fresh[i].p) {
			t.Errorf("unroll %d starts differently with FreshMomentum", i)
		}
	}
	if !equal(carry[1].p, carry[0].pEnd) {
		t.Error("the first continuation does not start from the fresh unroll's final momentum")
	}
	if !equal(carry[2].theta, fresh[2].theta) {
		t.Error("FreshMomentum changed where the second continuation's positions start")
	}
	if !equal(fresh[2].p, fresh[0].pEnd) {
		t.Error("with FreshMomentum, the second continuation does not start from the fresh unroll's final momentum")
	}
	if !equal(carry[2].p, carry[1].pEnd) || equal(carry[2].p, carry[0].pEnd) {
		t.Error("without FreshMomentum, the second continuation does not continue the first's momentum")
	}
}

// TestOneAdamStepLowersTheLoss takes one optimiser step on a 1-D toy and
// checks that the surrogate loss of the recorded unroll, which the step
// descends, went down.
func TestOneAdamStepLowersTheLoss(t *testing.T) {
	const k = 8
	nn := smoothNets()
	cfg := tinyConfig(k)
	cfg.InChain = nil
	tr, err := newTrainer(cfg, tinyProblem(t, k, 1), nn, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	var got *unrolled
	tr.record = func(u *unrolled) { got = u }
	before := tr.networks()
	if err := tr.Run(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	rp := newReplay(t, before, k, got)
	l0, err := rp.loss(0)
	if err != nil {
		t.Fatal(err)
	}
	after := tr.networks()
	for i, p := range rp.sg.QNet.Weights.Params() {
		copy(p, after.Q.Params()[i])
	}
	for i, p := range rp.sg.DNet.Weights.Params() {
		copy(p, after.D.Params()[i])
	}
	l1, err := rp.loss(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loss before %.10g, after %.10g", l0, l1)
	if !(l1 < l0) {
		t.Errorf("one Adam step did not lower the loss: %v → %v", l0, l1)
	}
}

// TestResumeEqualsUninterruptedRun trains three epochs straight, and again
// with an interruption in the middle of the second epoch followed by a
// resume from the checkpoint written to JSON: the networks and the rows must
// agree bit for bit.
func TestResumeEqualsUninterruptedRun(t *testing.T) {
	const k = 4
	cfg := tinyConfig(k)
	cfg.Epochs, cfg.SubEpochs = 3, 2
	prob := tinyProblem(t, k, 2)

	straight, err := newTrainer(cfg, prob, smoothNets(), 5, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := straight.Run(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}

	first, err := newTrainer(cfg, prob, smoothNets(), 5, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rows := 0
	err = first.Run(ctx, func(Row) {
		if rows++; rows == 9 { // after the second unroll of the second epoch
			cancel()
		}
	}, nil)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want an interruption, got %v", err)
	}
	if pos := first.Position(); pos != (Position{Epoch: 1, Unroll: 2}) {
		t.Fatalf("interrupted at %+v", pos)
	}
	if rows := resumeMatches(t, straight, first, cfg, prob); len(rows) != 3*3*2 {
		t.Fatalf("%d rows, want %d", len(rows), 3*3*2)
	}
}

func TestRestoreAcceptsAnotherNumberOfEpochs(t *testing.T) {
	const k = 4
	cfg := tinyConfig(k)
	cfg.Epochs = 2
	tr, err := newTrainer(cfg, tinyProblem(t, k, 2), smoothNets(), 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	cp, _ := tr.Checkpoint()
	cfg.Epochs = 1 // end early: nothing left to run
	early, _ := newTrainer(cfg, tinyProblem(t, k, 2), smoothNets(), 1, false)
	if err := early.Restore(cp); err != nil {
		t.Fatal(err)
	}
	if !early.Done() || early.Epochs() != 2 {
		t.Errorf("restored with fewer epochs: done %v after %d epochs", early.Done(), early.Epochs())
	}
	cfg.Epochs = 3 // extend
	more, _ := newTrainer(cfg, tinyProblem(t, k, 2), smoothNets(), 1, false)
	if err := more.Restore(cp); err != nil {
		t.Fatal(err)
	}
	if err := more.Run(context.Background(), nil, nil); err != nil || more.Epochs() != 3 {
		t.Errorf("extended run: %v after %d epochs", err, more.Epochs())
	}
}

func TestRestoreRefusesAnotherConfiguration(t *testing.T) {
	const k = 4
	cfg := tinyConfig(k)
	tr, err := newTrainer(cfg, tinyProblem(t, k, 2), smoothNets(), 1, false)
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := tr.Checkpoint()
	cfg.Steps++
	other, err := newTrainer(cfg, tinyProblem(t, k, 2), smoothNets(), 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Restore(cp); err == nil {
		t.Error("a checkpoint of another configuration was accepted")
	}
}

func TestDivergenceStopsTraining(t *testing.T) {
	const k = 4
	nn := smoothNets()
	nn.StepSize = 40
	cfg := tinyConfig(k)
	cfg.Steps, cfg.Window = 60, 20
	tr, err := newTrainer(cfg, tinyProblem(t, k, 2), nn, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	err = tr.Run(context.Background(), nil, nil)
	var de *DivergenceError
	if !errors.As(err, &de) {
		t.Fatalf("want a divergence error, got %v", err)
	}
	if tr.Completed() != 0 {
		t.Errorf("the diverged unroll was committed")
	}
}

// TestReusedVectorsChangeNothing trains twice, once reusing finished
// windows' vectors (the default) and once keeping every window (the record
// hook switches reuse off), and requires the same networks bit for bit: a
// vector given back while still in use would change them.
func TestReusedVectorsChangeNothing(t *testing.T) {
	const k = 4
	cfg := tinyConfig(k)
	cfg.Epochs, cfg.SubEpochs = 2, 2
	prob := tinyProblem(t, k, 2)
	train := func(keep bool) (*Trainer, int) {
		tr, err := newTrainer(cfg, prob, smoothNets(), 5, false)
		if err != nil {
			t.Fatal(err)
		}
		if keep {
			tr.record = func(*unrolled) {}
		}
		if err := tr.Run(context.Background(), nil, nil); err != nil {
			t.Fatal(err)
		}
		return tr, len(tr.spare)
	}
	reused, spare := train(false)
	kept, none := train(true)
	if spare == 0 || none != 0 {
		t.Fatalf("%d spare vectors with reuse (want some), %d without (want none)", spare, none)
	}
	sameNetworks(t, reused, kept, "reusing vectors", "keeping them")
}

// encodedCheckpoint is tr's checkpoint encoded as JSON.
func encodedCheckpoint(t *testing.T, tr *Trainer) []byte {
	t.Helper()
	cp, err := tr.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := cp.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkpointRoundTrip is tr's checkpoint after encoding it to JSON and
// decoding it back, as a resumed run reads it.
func checkpointRoundTrip(t *testing.T, tr *Trainer) *Checkpoint {
	t.Helper()
	var back Checkpoint
	if err := json.Unmarshal(encodedCheckpoint(t, tr), &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// TestDataPerUnrollRestartsTheData trains two unrolls of 4 steps on a tiny
// Bayesian MLP whose 11 examples make 6 batches of 2 an epoch, the last of
// one: with Config.DataPerUnroll each unroll starts a data epoch (the order
// restarts, and the losses draw no minibatch of their own), so the order
// ends in epoch 2 after its first 4 batches (8 examples); without, the
// losses' draws and the carried-over order put it elsewhere.
func TestDataPerUnrollRestartsTheData(t *testing.T) {
	const k, n, batch = 3, 11, 2
	net := bnn.MLP{Sizes: []int{3, 2, 2}, Activation: bnn.ReLU}
	rng := rand.New(rand.NewPCG(8, 9))
	x, y := make([]float64, n*3), make([]int, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range y {
		y[i] = rng.IntN(2)
	}
	data, err := bnn.NewMatrix(x, y, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	e, err := bnn.New(net, data, batch)
	if err != nil {
		t.Fatal(err)
	}
	type where struct {
		Pos   int `json:"pos"`
		Epoch int `json:"epoch"`
	}
	end := func(perUnroll bool) where {
		ev, err := tasks.Compile(e.KeepLast(), k, graph.Float64)
		if err != nil {
			t.Fatal(err)
		}
		defer ev.Close()
		cfg := tinyConfig(k)
		cfg.Steps, cfg.SubEpochs, cfg.InChain, cfg.DataPerUnroll = 4, 1, nil, perUnroll
		prob := Problem{Target: ev, Init: func(rng *rand.Rand, k int) []float64 { return net.Init(rng, k, 0.2) }}
		nn := smoothNets()
		nn.StepSize = 0.01
		tr, err := newTrainer(cfg, prob, nn, 7, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Run(context.Background(), nil, nil); err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(ev.Batches())
		if err != nil {
			t.Fatal(err)
		}
		var w where
		if err := json.Unmarshal(raw, &w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	if got := end(true); got != (where{Pos: 8, Epoch: 2}) {
		t.Errorf("with DataPerUnroll the order ends at %+v, want %+v", got, where{Pos: 8, Epoch: 2})
	}
	if got := end(false); got == (where{Pos: 8, Epoch: 2}) {
		t.Errorf("without DataPerUnroll the order ends at %+v too", got)
	}
	// a target without a minibatch order is refused
	if _, err := newTrainer(Config{DataPerUnroll: true, Chains: 4, Epochs: 1, Steps: 7, Window: 3,
		Cross: &CrossChain{Every: 2, Lambda: 0.05, Weight: 1}, QAdam: tinyConfig(4).QAdam, DAdam: tinyConfig(4).DAdam},
		tinyProblem(t, 4, 2), smoothNets(), 7, false); err == nil {
		t.Error("DataPerUnroll accepted a target without a minibatch order")
	}
}

// TestWindowsCutWhereTheAuthorsDo checks where back-propagation through time
// is truncated: the authors' samplers detach the state before the steps
// W−1, 2W−1, … (when (step+1) % TBPTT_step == 0), so a 7-step unroll in
// windows of 3 is cut into [0, 2), [2, 5), [5, 7); cutting before the
// steps W, 2W, … ([0, 3), [3, 6), [6, 7)) gives each loss at a multiple of W
// W steps of history where theirs sees one.
func TestWindowsCutWhereTheAuthorsDo(t *testing.T) {
	for _, tc := range []struct {
		steps, window int
		want          [][2]int
	}{
		{7, 3, [][2]int{{0, 2}, {2, 5}, {5, 7}}},
		{99, 15, [][2]int{{0, 14}, {14, 29}, {29, 44}, {44, 59}, {59, 74}, {74, 89}, {89, 99}}},
		{4, 1, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}}},
		{5, 5, [][2]int{{0, 4}, {4, 5}}},
	} {
		const k, d = 3, 2
		cfg := tinyConfig(k)
		cfg.Steps, cfg.Window = tc.steps, tc.window
		cfg.InChain = nil
		tr, err := newTrainer(cfg, tinyProblem(t, k, d), smoothNets(), 7, false)
		if err != nil {
			t.Fatal(err)
		}
		var got [][2]int
		tr.record = func(u *unrolled) {
			for _, w := range u.windows {
				got = append(got, [2]int{w.a, w.b})
				if len(w.recs) != w.b-w.a {
					t.Errorf("window [%d, %d) holds %d steps", w.a, w.b, len(w.recs))
				}
			}
		}
		if err := tr.Run(context.Background(), nil, nil); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%d steps in windows of %d: cut into %v, want %v", tc.steps, tc.window, got, tc.want)
		}
	}
}
