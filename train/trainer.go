package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// Config is a meta-training schedule and its losses.
//
// Training runs Epochs epochs; each starts the chains afresh from the
// problem's initial distribution and runs 1 + SubEpochs unrolls of Steps
// sampler steps, each continuing from where the last stopped (with
// FreshMomentum, from the last positions but the fresh unroll's final
// momentum) and followed by one Adam step per loss. Back-propagation
// through time is truncated every Window steps, where the authors' code
// cuts it: before the steps Window−1, 2·Window−1, … (gradients flow
// through at most Window steps).
//
// The fresh unroll runs the sampler with its own step size η; the
// continuation unrolls run it with ContinueStepSize when that is positive.
// The MNIST evaluations raise η after the first data epoch (to 1.6 times
// the training η), and a sampler trained at one η alone can be unstable at
// the raised one; running the continuations at the raised η trains the
// sampler where the evaluation mostly runs it (experiments/mnist-nt
// measures what it does).
type Config struct {
	Chains     int         `json:"chains"`
	Epochs     int         `json:"epochs"`
	SubEpochs  int         `json:"sub_epochs"`
	Steps      int         `json:"steps"`
	Window     int         `json:"window"`
	Cross      *CrossChain `json:"cross_chain,omitempty"`
	InChain    *InChain    `json:"in_chain,omitempty"`
	QAdam      AdamConfig  `json:"q_adam"` // optimiser of f_Q's weights
	DAdam      AdamConfig  `json:"d_adam"` // optimiser of f_D's weights
	MomentumSD float64     `json:"momentum_sd"`
	// ContinueStepSize is η in the continuation unrolls; 0: the sampler's.
	ContinueStepSize float64 `json:"continue_step_size,omitempty"`
	// FreshMomentum starts every continuation unroll of an epoch from the
	// momentum the epoch's fresh unroll ended with, the positions still
	// continuing from the previous unroll, as the authors' MNIST scripts do
	// (BNN_MNIST/Sampler_Training.py and Sampler_Training_DataGen.py never
	// update state_mom_list in their continuation loops): every
	// continuation puts the momentum of the descent from θ₀ back onto
	// chains that are nearer the posterior. False continues the momentum
	// too (their toy script).
	FreshMomentum bool `json:"fresh_momentum,omitempty"`
	// DataPerUnroll starts every unroll on a fresh data epoch of the
	// target (its minibatch order reset, a new permutation drawn) and has
	// the losses evaluate the energy on the minibatch of the step they
	// follow instead of drawing their own, as the authors' MNIST scripts
	// do: their parallel_sample iterates a DataLoader restarted for each
	// unroll, and grad_ELBO takes the step's minibatch. So the unrolls all
	// meet the data the same way: with an order that keeps the short last
	// batch (samplers.NewBatchesKeepLast), at the same step of every unroll
	// (step 62 of 99 for the Data sampler's 30,596 images in batches of
	// 500). The target must be a tasks.Reevaluator with a minibatch order
	// (samplers.Batched), and the losses' target the same.
	DataPerUnroll bool `json:"data_per_unroll,omitempty"`
	// AuthorsStep unrolls the authors' training-mode step on the
	// Bayesian networks (nnkernel.GammaAuthors: the code's sign of
	// ∂Q_f/∂θ, ∂f_D/∂p kept where D_f's clamp binds, the position update
	// with Q_f at (θ_t, p_t)) instead of the sampler's own step
	// (nnkernel.GammaExact). With it our meta-gradient equals their code's
	// on the same inputs (train's package doc).
	AuthorsStep bool `json:"authors_step,omitempty"`
	// Chunk bounds the coordinates one step graph handles at once
	// (nnkernel.StepChunk when 0).
	Chunk int `json:"chunk,omitempty"`
}

// windowEnd is the end of the truncation window that starts at step a.
// The authors' samplers cut the graph before the steps W−1, 2W−1, …
// (BNN_MNIST/BNN_Sampler.py and Toy Example/NNSGHMC_toy.py detach the state
// when (step+1) % TBPTT_step == 0, before that step's update), so the first
// window has W−1 steps, the others W, and a loss at step W sees one step
// of history: windows [0, W−1), [W−1, 2W−1), … (one step each for W = 1).
func (c *Config) windowEnd(a int) int {
	return min(((a+1)/c.Window+1)*c.Window-1, c.Steps)
}

// Validate reports the first invalid setting for k chains.
func (c *Config) Validate() error {
	switch {
	case c.Chains < 1:
		return fmt.Errorf("train: %d chains", c.Chains)
	case c.Epochs < 1 || c.SubEpochs < 0:
		return fmt.Errorf("train: %d epochs of %d sub-epochs", c.Epochs, c.SubEpochs)
	case c.Steps < 1 || c.Window < 1:
		return fmt.Errorf("train: unrolls of %d steps with windows of %d", c.Steps, c.Window)
	case c.Cross == nil && c.InChain == nil:
		return errors.New("train: no loss (want a cross-chain or an in-chain loss)")
	case !(c.MomentumSD >= 0):
		return fmt.Errorf("train: momentum sd %v", c.MomentumSD)
	case !(c.ContinueStepSize >= 0) || math.IsInf(c.ContinueStepSize, 1):
		return fmt.Errorf("train: continuation step size %v (want a positive finite number, or 0 for the sampler's)", c.ContinueStepSize)
	}
	if c.Cross != nil {
		if err := c.Cross.validate(c.Chains); err != nil {
			return err
		}
		if len(c.Cross.times(c.Steps)) == 0 {
			return fmt.Errorf("train: the cross-chain loss has no evaluation time within %d steps", c.Steps)
		}
	}
	if c.InChain != nil {
		if err := c.InChain.validate(c.Chains); err != nil {
			return err
		}
		if len(c.InChain.times(c.Steps)) == 0 {
			return fmt.Errorf("train: the in-chain loss has no time within %d steps", c.Steps)
		}
	}
	if err := c.QAdam.Validate(); err != nil {
		return err
	}
	return c.DAdam.Validate()
}

// Problem is what the sampler is trained on.
type Problem struct {
	// Target gives the stochastic gradients that drive the sampler, for
	// Config.Chains chains.
	Target samplers.Target
	// LossTarget gives the energy gradients of the losses; nil means
	// Target. (The toy's losses use the exact gradient, its dynamics a
	// noisy one.)
	LossTarget samplers.Target
	// Init draws fresh positions of k chains.
	Init func(rng *rand.Rand, k int) []float64
}

// sameBatch is the losses' target under Config.DataPerUnroll: the
// dynamics' target, evaluated on the minibatch of its last step.
type sameBatch struct{ tasks.Reevaluator }

// Evaluate implements samplers.Target, drawing no minibatch.
func (s sameBatch) Evaluate(_ *rand.Rand, theta []float64, e *samplers.Eval) error {
	return s.EvaluateAgain(theta, e)
}

// Row is one optimiser step of training.
type Row struct {
	Epoch    int     `json:"epoch"`
	Unroll   int     `json:"unroll"`
	Loss     string  `json:"loss"`
	Energy   float64 `json:"energy"`    // mean Ũ over the loss's samples
	GradNorm float64 `json:"grad_norm"` // Euclidean norm of the φ-gradient
	Seconds  float64 `json:"seconds"`   // training time so far
}

// Position is where a training run is in its schedule: the next unroll.
type Position struct {
	Epoch  int `json:"epoch"`
	Unroll int `json:"unroll"`
}

// ErrInterrupted is returned by Run when its context is cancelled; the
// trainer is then at the end of the last completed unroll.
var ErrInterrupted = errors.New("training interrupted")

// DivergenceError reports a non-finite state, energy or gradient.
type DivergenceError struct {
	Position Position
	Step     int
	What     string
}

func (e *DivergenceError) Error() string {
	return fmt.Sprintf("training diverged in epoch %d, unroll %d, step %d: %s is not finite (try a smaller step size or learning rate)",
		e.Position.Epoch+1, e.Position.Unroll, e.Step, e.What)
}

// Trainer meta-trains NNSGHMC's networks.
type Trainer struct {
	cfg  Config
	prob Problem
	nn   nnkernel.Config

	d, k, n      int
	fwd          *nnkernel.Kernel // the forward pass of the unrolls
	vjp          *graph.Chunked
	graphs       []*StepGraph
	nq           int // number of f_Q parameter tensors
	qAdam, dAdam *Adam

	pcg *rand.PCG
	rng *rand.Rand

	pos      Position
	theta, p []float64 // chain state at pos; nil at the start of an epoch
	// the networks' input ranges over the epoch under way's complete
	// unrolls, and over the last complete epoch
	ranges, lastRanges *InputRanges
	unrollRanges       InputRanges // of the unroll under way
	eta                float64     // the step size of the unroll under way
	rows               []Row
	seconds            float64   // training time before the current Run
	running            time.Time // start of the current Run (zero outside Run)

	spare [][]float64 // vectors of length n that finished windows gave back

	// buffers allocated once and reused from step to step and unroll to
	// unroll: the losses' (Stein's workspace, the rows), the backward pass's,
	// and the forward pass's that the records do not keep
	stein           steinWork
	rowPos, rowGrad mat.Dense      // samples' positions and gradients as rows
	back            [4][]float64   // the backward pass's adjoints, allocated once
	feat            [2][]float64   // a step's full u and gradient feature
	noise           []float64      // a step's noise ξ_t
	eval            *samplers.Eval // the targets' evaluations

	frozen bool            // test hook: network inputs fed from the record
	record func(*unrolled) // test hook: sees every finished unroll
}

// vector returns a vector of length n with undefined contents: a spare one
// when there is one. An unroll's records take four per step; reusing them
// spares the garbage collector gigabytes per unroll on the GRU.
func (t *Trainer) vector() []float64 {
	if len(t.spare) == 0 {
		return make([]float64, t.n)
	}
	v := t.spare[len(t.spare)-1]
	t.spare = t.spare[:len(t.spare)-1]
	return v
}

// copyOf returns a copy of x (length n) in a vector from t.vector, copied
// span by span among the cores.
func (t *Trainer) copyOf(x []float64) []float64 {
	v := t.vector()
	spans.For(len(x), func(a, b int) { copy(v[a:b], x[a:b]) })
	return v
}

// giveBack returns a finished window's vectors for reuse.
func (t *Trainer) giveBack(w window) {
	for _, r := range w.recs {
		t.spare = append(t.spare, r.theta, r.p, r.du, r.grad)
	}
	t.spare = append(t.spare, w.pEnd)
}

// New returns a trainer of the networks of start (copied) on prob, with the
// sampler's settings s, η = s.StepSize(1) in the unrolls (and
// Config.ContinueStepSize in the continuations, when set) and Γ the exact
// one (or the authors' training step, Config.AuthorsStep), and with all
// randomness drawn from a PCG generator seeded with seed. Trained returns
// the result.
func New(cfg Config, prob Problem, start *nnsghmc.Trained, s nnsghmc.Settings, seed uint64) (*Trainer, error) {
	if start == nil || s.StepSize == nil {
		return nil, errors.New("train: New needs starting networks and settings with a step size")
	}
	if err := start.Validate(); err != nil {
		return nil, err
	}
	nn := nnkernel.Config{
		Settings: nnkernel.Settings{
			StepSize: s.StepSize(1), Alpha: s.Alpha, Beta: s.Beta, C: s.C, ClampQ: s.ClampQ, DMax: s.DMax, DScale: start.DScale,
			EnergyScale: start.Inputs.EnergyScale, GradScale: start.Inputs.GradScale, MomentumScale: start.Inputs.MomentumScale,
			Friction: s.Friction,
		},
		Nets: nnkernel.Nets{Q: start.Q, D: start.D},
	}
	return newTrainer(cfg, prob, nn, seed, false)
}

func newTrainer(cfg Config, prob Problem, nn nnkernel.Config, seed uint64, frozen bool) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if prob.Target == nil || prob.Init == nil {
		return nil, errors.New("train: the problem needs a target and an initial distribution")
	}
	if cfg.DataPerUnroll {
		b, batched := prob.Target.(samplers.Batched)
		again, ok := prob.Target.(tasks.Reevaluator)
		if !batched || b.Batches() == nil || !ok || (prob.LossTarget != nil && prob.LossTarget != prob.Target) {
			return nil, errors.New("train: data per unroll needs a target that has a minibatch order and evaluates again on a minibatch, and serves the losses too")
		}
		prob.LossTarget = sameBatch{again}
	}
	if prob.LossTarget == nil {
		prob.LossTarget = prob.Target
	}
	nn.Gamma = nnkernel.GammaExact
	if cfg.AuthorsStep {
		nn.Gamma = nnkernel.GammaAuthors
	}
	nn.Q, nn.D = nn.Q.Clone(), nn.D.Clone()
	if err := nn.Validate(); err != nil {
		return nil, err
	}
	t := &Trainer{cfg: cfg, prob: prob, nn: nn, frozen: frozen, eta: nn.StepSize}
	t.d, t.k = prob.Target.Dim(), prob.Target.Chains()
	t.n = t.d * t.k
	if t.k != cfg.Chains || prob.LossTarget.Chains() != t.k || prob.LossTarget.Dim() != t.d {
		return nil, fmt.Errorf("train: the targets hold %d and %d chains of dimension %d and %d, the config %d chains",
			t.k, prob.LossTarget.Chains(), t.d, prob.LossTarget.Dim(), cfg.Chains)
	}
	chunk := cfg.Chunk
	if chunk <= 0 {
		chunk = nnkernel.StepChunk
	}
	var err error
	// the unrolls run forward without a graph; NNSGHMC shares t.nn's
	// networks, which Adam and checkpoints update in place
	if t.fwd, err = nnkernel.New(prob.Target, t.nn); err != nil {
		return nil, err
	}
	t.vjp, err = graph.NewChunked(t.n, chunk, t.buildVJP)
	if err != nil {
		return nil, err
	}
	t.nq = len(t.nn.Q.Params())
	t.qAdam = NewAdam(cfg.QAdam, t.nn.Q.Params())
	t.dAdam = NewAdam(cfg.DAdam, t.nn.D.Params())
	t.pcg = rand.NewPCG(seed, 0x747261696e) // "train"
	t.rng = rand.New(t.pcg)
	return t, nil
}

// Trained returns the trained sampler as it stands: the current networks
// (copies), their input scalings and s_D, and the domain they were trained
// on: the target's dimension and data size, the unrolls' step sizes and the
// networks' input ranges over the last complete epoch (InputRanges).
func (t *Trainer) Trained() *nnsghmc.Trained {
	nn := t.nn
	tr := &nnsghmc.Trained{
		Q: nn.Q.Clone(), D: nn.D.Clone(),
		Inputs: nnsghmc.Inputs{EnergyScale: nn.EnergyScale, GradScale: nn.GradScale, MomentumScale: nn.MomentumScale},
		DScale: nn.DScale,
		Domain: nnsghmc.Domain{Dim: t.d, DataSize: t.prob.Target.DataSize(), StepSize: nnsghmc.Range{Min: nn.StepSize, Max: nn.StepSize},
			Friction: nnsghmc.FrictionExponential},
	}
	if nn.Friction != "" {
		tr.Domain.Friction = nn.Friction
	}
	if c := t.cfg.ContinueStepSize; c > 0 {
		tr.Domain.StepSize.Add(c)
	}
	if r := t.InputRanges(); r != nil {
		tr.Domain.Energy, tr.Domain.Momentum, tr.Domain.Gradient = r.Energy, r.Momentum, r.Gradient
	}
	return tr
}

// networks returns the sampler's settings with the current networks.
func (t *Trainer) networks() nnkernel.Config {
	c := t.nn
	c.Q, c.D = c.Q.Clone(), c.D.Clone()
	c.Gamma = nnkernel.GammaExact // the trained networks sample with the valid step
	return c
}

// elapsed is the training time so far, including the current Run.
func (t *Trainer) elapsed() float64 {
	if t.running.IsZero() {
		return t.seconds
	}
	return t.seconds + time.Since(t.running).Seconds()
}

// Rows returns the optimiser steps so far.
func (t *Trainer) Rows() []Row { return append([]Row(nil), t.rows...) }

// Position returns the next unroll to run.
func (t *Trainer) Position() Position { return t.pos }

// Done reports whether the schedule is complete.
func (t *Trainer) Done() bool { return t.pos.Epoch >= t.cfg.Epochs }

// Epochs is the number of epochs completed.
func (t *Trainer) Epochs() int { return t.pos.Epoch }

// Unrolls is the total number of unrolls in the schedule.
func (t *Trainer) Unrolls() int { return t.cfg.Epochs * (1 + t.cfg.SubEpochs) }

// Completed is the number of unrolls done.
func (t *Trainer) Completed() int { return t.pos.Epoch*(1+t.cfg.SubEpochs) + t.pos.Unroll }

// Run trains from the current position to the end of the schedule. After
// every unroll it calls onRow for each optimiser step, and after every
// epoch onEpoch (to write a checkpoint). When ctx is cancelled it abandons
// the unroll in progress and returns ErrInterrupted: the trainer then stands
// at the end of the last completed unroll, ready for Checkpoint.
func (t *Trainer) Run(ctx context.Context, onRow func(Row), onEpoch func() error) error {
	start := time.Now()
	t.running = start
	defer func() {
		t.seconds += time.Since(start).Seconds()
		t.running = time.Time{}
	}()
	for !t.Done() {
		// an abandoned unroll has drawn random numbers and minibatches: both
		// go back to where the unroll started, so that the trainer's state is
		// exactly that at the end of the last completed unroll
		snapshot, err := t.pcg.MarshalBinary()
		if err != nil {
			return err
		}
		orders, err := t.saveBatches()
		if err != nil {
			return err
		}
		rows, theta, p, err := t.unroll(ctx, start)
		if err != nil {
			if uerr := t.pcg.UnmarshalBinary(snapshot); uerr != nil {
				return uerr
			}
			if uerr := t.restoreBatches(orders); uerr != nil {
				return uerr
			}
			if ctx.Err() != nil {
				return ErrInterrupted
			}
			return err
		}
		t.rows = append(t.rows, rows...)
		if t.ranges == nil {
			t.ranges = &InputRanges{}
		}
		t.ranges.merge(&t.unrollRanges)
		for _, r := range rows {
			if onRow != nil {
				onRow(r)
			}
		}
		t.theta = theta
		if t.pos.Unroll == 0 || !t.cfg.FreshMomentum {
			t.p = p // with FreshMomentum, t.p keeps the fresh unroll's
		}
		t.pos.Unroll++
		if t.pos.Unroll > t.cfg.SubEpochs {
			t.pos = Position{Epoch: t.pos.Epoch + 1}
			t.theta, t.p = nil, nil
			t.lastRanges, t.ranges = t.ranges, nil
			if onEpoch != nil {
				if err := onEpoch(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// record holds the inputs of one sampler step. Of the networks' inputs it
// keeps u once per chain (nnkernel.Features repeats it over the chain's
// coordinates) and not the gradient feature, a multiple of grad: features
// rebuilds both. Of the noise it keeps the generator's state that drew it:
// noiseInto draws it again. That spares three vectors of length n per step.
type record struct {
	theta, p, du, grad []float64
	u                  []float64 // u per chain (length K)
	noise              rand.PCG  // the generator before drawing ξ_t
}

// normals fills v with standard normal draws from rng.
func normals(v []float64, rng *rand.Rand) {
	for i := range v {
		v[i] = rng.NormFloat64()
	}
}

// noiseInto writes the step's noise ξ_t into v (length n).
func (r *record) noiseInto(v []float64) {
	src := r.noise
	normals(v, rand.New(&src))
}

// features rebuilds the step's network inputs, with u and gfeat (length n)
// to hold the full u and gradient feature, for a target of data size n.
func (r *record) features(nn *nnkernel.Config, n float64, u, gfeat []float64) *nnkernel.Features {
	k := len(r.u)
	for j := range u {
		u[j] = r.u[j%k]
	}
	nn.GradFeatures(gfeat, r.grad, n)
	return &nnkernel.Features{U: u, DU: r.du, GFeat: gfeat}
}

// window is a stretch of steps [a, b) between two cuts of the gradient.
type window struct {
	a, b int
	recs []record
	pEnd []float64 // p_b
}

// unrolled is everything one unroll produced, for tests.
type unrolled struct {
	dataSize float64 // the target's, for record.features
	windows  []window
	adj      []map[int][]float64 // per loss: ∂L/∂θ_j
	grads    [][][]float64       // per loss: ∂L/∂φ
}

// useStepSize runs the following unrolls with step size eta, forward and
// in the step graphs of the backward pass (those built later take t.eta).
func (t *Trainer) useStepSize(eta float64) error {
	if err := t.fwd.SetStepSize(eta); err != nil {
		return err
	}
	for _, g := range t.graphs {
		if err := graph.SetValue(g.Eta, []float64{eta}); err != nil {
			return err
		}
	}
	t.eta = eta
	return nil
}

// unroll runs one unroll from the trainer's state, back-propagates the
// losses, takes the optimiser steps and returns the rows and the new state.
func (t *Trainer) unroll(ctx context.Context, start time.Time) ([]Row, []float64, []float64, error) {
	cfg := &t.cfg
	rng := t.rng
	var theta, p []float64
	eta := t.nn.StepSize
	if t.theta != nil && cfg.ContinueStepSize > 0 {
		eta = cfg.ContinueStepSize
	}
	if err := t.useStepSize(eta); err != nil {
		return nil, nil, nil, err
	}
	t.unrollRanges = InputRanges{}
	if cfg.DataPerUnroll {
		t.prob.Target.(samplers.Batched).Batches().Reset()
	}
	if t.theta == nil {
		theta = t.prob.Init(rng, t.k)
		if len(theta) != t.n {
			return nil, nil, nil, fmt.Errorf("train: the initial distribution gave %d positions, want %d", len(theta), t.n)
		}
		p = make([]float64, t.n)
		for i := range p {
			p[i] = cfg.MomentumSD * rng.NormFloat64()
		}
	} else {
		theta, p = append([]float64(nil), t.theta...), append([]float64(nil), t.p...)
	}

	// the losses: their times, and the in-chain loss's chains
	var losses []*lossState
	newLoss := func(name string, ts []int) *lossState {
		l := &lossState{name: name, times: map[int]bool{}, adj: map[int][]float64{}}
		for _, j := range ts {
			l.times[j] = true
		}
		for _, w := range append(t.nn.Q.Params(), t.nn.D.Params()...) {
			l.grad = append(l.grad, make([]float64, len(w)))
		}
		losses = append(losses, l)
		return l
	}
	var cross, in *lossState
	var inChains []int
	crossTimes := 0
	if cfg.Cross != nil {
		ts := cfg.Cross.times(cfg.Steps)
		crossTimes = len(ts)
		cross = newLoss("cross-chain", ts)
	}
	if cfg.InChain != nil {
		in = newLoss("in-chain", cfg.InChain.times(cfg.Steps))
		inChains = cfg.InChain.chains(rng, t.k)
	}
	inPos := map[int][]float64{}  // θ_j at in-chain times
	inGrad := map[int][]float64{} // ∇Ũ(θ_j) at in-chain times

	// a step is done with the dynamics' evaluation before the losses' one
	// starts: one Eval serves both
	if t.eval == nil {
		t.eval = samplers.NewEval(t.d, t.k)
	}
	eval, leval := t.eval, t.eval
	var kept []window
	out := &unrolled{dataSize: t.prob.Target.DataSize()}
	for a, b := 0, cfg.windowEnd(0); a < cfg.Steps; a, b = b, cfg.windowEnd(b) {
		w := window{a: a, b: b}
		for s := a; s < b; s++ {
			if ctx.Err() != nil {
				return nil, nil, nil, ctx.Err()
			}
			rec := record{theta: t.copyOf(theta), p: t.copyOf(p)}
			if err := t.prob.Target.Evaluate(rng, theta, eval); err != nil {
				return nil, nil, nil, err
			}
			if !tasks.Finite(eval.U) || !tasks.Finite(eval.Grad) {
				return nil, nil, nil, &DivergenceError{Position: t.pos, Step: s, What: "the energy or its gradient"}
			}
			feat := nnkernel.Features{U: t.feat[0], DU: t.vector(), GFeat: t.feat[1]}
			t.nn.Features(eval, t.d, t.k, t.prob.Target.DataSize(), &feat)
			t.feat[0], t.feat[1] = feat.U, feat.GFeat
			t.observeInputs(feat.U[:t.k], p, feat.GFeat)
			rec.u, rec.du = clone(feat.U[:t.k]), feat.DU
			rec.grad = t.copyOf(eval.Grad)
			if t.noise == nil {
				t.noise = make([]float64, t.n)
			}
			rec.noise = *t.pcg // rng's source
			normals(t.noise, rng)
			if err := t.fwd.Update(theta, p, &feat, rec.grad, t.noise); err != nil {
				return nil, nil, nil, err
			}
			if !samplers.Bounded(theta) || !samplers.Bounded(p) {
				return nil, nil, nil, &DivergenceError{Position: t.pos, Step: s + 1, What: "the chains' state"}
			}
			w.recs = append(w.recs, rec)

			j := s + 1
			isCross, isIn := cross != nil && cross.times[j], in != nil && in.times[j]
			if !isCross && !isIn {
				continue
			}
			if err := t.prob.LossTarget.Evaluate(rng, theta, leval); err != nil {
				return nil, nil, nil, err
			}
			if !tasks.Finite(leval.U) || !tasks.Finite(leval.Grad) {
				return nil, nil, nil, &DivergenceError{Position: t.pos, Step: j, What: "the loss's energy"}
			}
			if isCross {
				pos, grad := t.rowsOf(theta, leval.Grad, allChains(t.k))
				adj, err := steinAdjoints(&t.stein, pos, grad, cfg.Cross.Lambda, cfg.Cross.Weight/float64(t.k*crossTimes))
				if err != nil {
					return nil, nil, nil, fmt.Errorf("train: cross-chain loss at step %d: %w", j, err)
				}
				cross.adj[j] = t.coordMajor(adj, allChains(t.k))
				for _, u := range leval.U {
					cross.energy += u
				}
				cross.nSamples += t.k
			}
			if isIn {
				inPos[j], inGrad[j] = t.copyOf(theta), t.copyOf(leval.Grad)
				for _, c := range inChains {
					in.energy += leval.U[c]
					in.nSamples++
				}
			}
		}
		w.pEnd = t.copyOf(p)
		if cross != nil {
			if err := t.backward(w, cross.adj, cross.grad); err != nil {
				return nil, nil, nil, err
			}
			t.release(cross.adj, a, b)
		}
		keep := in != nil && in.hasTime(a, b)
		if keep {
			kept = append(kept, w)
		}
		if t.record != nil {
			out.windows = append(out.windows, w)
		} else if !keep {
			t.giveBack(w)
		}
	}

	if in != nil {
		// one Stein estimate on the pooled, thinned samples of the chosen chains
		var ts []int
		for j := 1; j <= cfg.Steps; j++ {
			if in.times[j] {
				ts = append(ts, j)
			}
		}
		np := len(ts) * len(inChains)
		reuse(&t.rowPos, np, t.d)
		reuse(&t.rowGrad, np, t.d)
		for a, j := range ts {
			for b, c := range inChains {
				pos, grad := t.rowPos.RawRowView(a*len(inChains)+b), t.rowGrad.RawRowView(a*len(inChains)+b)
				for i := range pos {
					pos[i] = inPos[j][i*t.k+c]
					grad[i] = inGrad[j][i*t.k+c]
				}
			}
			if t.record == nil {
				t.spare = append(t.spare, inPos[j], inGrad[j])
			}
		}
		adj, err := steinAdjoints(&t.stein, &t.rowPos, &t.rowGrad, cfg.InChain.Lambda, cfg.InChain.Weight/float64(np))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("train: in-chain loss: %w", err)
		}
		for a, j := range ts {
			rows := adj.Slice(a*len(inChains), (a+1)*len(inChains), 0, t.d).(*mat.Dense)
			in.adj[j] = t.coordMajor(rows, inChains)
		}
		for _, w := range kept {
			if err := t.backward(w, in.adj, in.grad); err != nil {
				return nil, nil, nil, err
			}
			if t.record == nil {
				t.giveBack(w)
			}
		}
		t.release(in.adj, 0, cfg.Steps)
	}

	// one optimiser step per loss, in order
	var rows []Row
	for _, l := range losses {
		norm := 0.0
		for _, g := range l.grad {
			for _, v := range g {
				norm += v * v
			}
		}
		norm = math.Sqrt(norm)
		if math.IsNaN(norm) || math.IsInf(norm, 0) {
			return nil, nil, nil, &DivergenceError{Position: t.pos, Step: cfg.Steps, What: "the " + l.name + " gradient"}
		}
		t.qAdam.Step(t.nn.Q.Params(), l.grad[:t.nq])
		t.dAdam.Step(t.nn.D.Params(), l.grad[t.nq:])
		rows = append(rows, Row{Epoch: t.pos.Epoch + 1, Unroll: t.pos.Unroll, Loss: l.name,
			Energy: l.energy / float64(max(l.nSamples, 1)), GradNorm: norm, Seconds: t.seconds + time.Since(start).Seconds()})
		out.adj = append(out.adj, l.adj)
		out.grads = append(out.grads, l.grad)
	}
	if err := t.sync(); err != nil {
		return nil, nil, nil, err
	}
	if t.record != nil {
		t.record(out)
	}
	return rows, theta, p, nil
}

// lossState is one loss during an unroll.
type lossState struct {
	name     string
	times    map[int]bool
	adj      map[int][]float64 // ∂L/∂θ_j, coordinate-major
	grad     [][]float64       // ∂L/∂φ, per parameter tensor
	energy   float64
	nSamples int
}

// hasTime reports whether the loss looks at a state in (a, b].
func (l *lossState) hasTime(a, b int) bool {
	for j := a + 1; j <= b; j++ {
		if l.times[j] {
			return true
		}
	}
	return false
}

// observeInputs widens the unroll's input ranges by a step's energy input
// u (one per chain), momenta p (before the momentum scale) and gradient
// input gfeat.
func (t *Trainer) observeInputs(u, p, gfeat []float64) {
	r := &t.unrollRanges
	widen(&r.Energy, u, 1)
	widen(&r.Momentum, p, t.nn.MomentumScale)
	widen(&r.Gradient, gfeat, 1)
}
