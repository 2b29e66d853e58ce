package gru

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/tasks/music"
)

// DefaultSegment is the default number of steps of the segment graph.
const DefaultSegment = 64

// MaxSegment is the largest allowed segment: longer graphs compile slowly
// and Gorgonia misbehaved on unrolls of more than 256 steps.
const MaxSegment = 128

// Config configures a Model.
type Config struct {
	// Hidden is the number H of hidden units (required).
	Hidden int
	// Chains is the number K of chains evaluated together (required).
	Chains int
	// Segment is the number S of steps of the segment graph (1 to
	// MaxSegment; DefaultSegment when zero).
	Segment int
	// Dtype is the element type of the graphs, graph.Float64 (the default,
	// when zero) or graph.Float32. Positions and results are float64
	// either way.
	Dtype graph.Dtype
	// ActivationMemory bounds the bytes of gate activations a gradient
	// keeps from its forward pass for its backward pass (3·K·S·H float64
	// per segment; DefaultActivationMemory when zero). Segments beyond it
	// are run forward a second time in the backward pass; negative keeps
	// none, for memory O(S) whatever the length.
	ActivationMemory int64
	// InitialState learns the state before the first frame: H more
	// parameters b₀ with h_0 = tanh(b₀) (Layout.InitialState), as in the
	// GRU of Chen et al. 2016, where without it h_0 = 0.
	InitialState bool
	// ResetAfter applies the reset gate after the recurrent product,
	// ĥ = tanh(x_t·W_h + r⊙(h·U_h) + b_h), as in the GRU of Chen et al.
	// 2016 (and cuDNN's), where without it ĥ = tanh(x_t·W_h + (r⊙h)·U_h +
	// b_h) (Cho et al. 2014). The parameters are the same.
	ResetAfter bool
}

// Layout returns the parameter layout of the configured GRU.
func (c Config) Layout() Layout { return Layout{H: c.Hidden, InitialState: c.InitialState} }

// DefaultActivationMemory is the default Config.ActivationMemory: 512 MiB,
// enough for 5,000 frames at K = 20, H = 200.
const DefaultActivationMemory = 512 << 20

func (c Config) withDefaults() (Config, error) {
	if c.Hidden < 1 || c.Chains < 1 {
		return c, fmt.Errorf("gru: %d hidden units and %d chains must be positive", c.Hidden, c.Chains)
	}
	if c.ActivationMemory == 0 {
		c.ActivationMemory = DefaultActivationMemory
	}
	if c.Segment == 0 {
		c.Segment = DefaultSegment
	}
	if c.Segment < 1 || c.Segment > MaxSegment {
		return c, fmt.Errorf("gru: segment of %d steps, want 1 to %d", c.Segment, MaxSegment)
	}
	if c.Dtype == (graph.Dtype{}) {
		c.Dtype = graph.Float64
	}
	if c.Dtype != graph.Float64 && c.Dtype != graph.Float32 {
		return c, fmt.Errorf("gru: dtype %v, want float64 or float32", c.Dtype)
	}
	return c, nil
}

// Model is a GRU 88 → H → 88 with Bernoulli outputs for K chains: it
// computes log-likelihoods of sequences and their gradients with respect to
// the positions θ of the chains (D·K values, coordinate-major, parameters as
// described by Layout) by chaining one compiled segment graph of S steps
// over the sequence.
//
// Frame t of a sequence is predicted from the hidden state h_{t−1} (h_0 =
// 0, or tanh(b₀) with Config.InitialState) by the logits l_t = h_{t−1}·Wo + bo, with log p(x_t | x_<t) =
// Σ_j x_tj·l_tj − softplus(l_tj); then the frame is consumed by the GRU of
// Cho et al. (2014):
//
//	z  = σ(x_t·W_z + h·U_z + b_z)
//	r  = σ(x_t·W_r + h·U_r + b_r)
//	ĥ  = tanh(x_t·W_h + (r⊙h)·U_h + b_h)    (Config.ResetAfter: r⊙(h·U_h))
//	h' = (1−z)⊙h + z⊙ĥ
//
// The gradient runs the segments forward keeping the state entering each
// (and, within Config.ActivationMemory, the gate activations of each
// step), then backward in reverse order carrying the adjoint of the state,
// so any length is exact, with memory bounded whatever the length.
//
// A Model is not safe for concurrent use.
type Model struct {
	cfg      Config
	layout   Layout
	seg      *segment
	kn       kernel // positions in kernel layout
	acc      kernel // gradient accumulator in kernel layout
	x        []float64
	mask     []float64
	hs       [][]float64         // state entering each segment
	rs       [][nGates][]float64 // gate activations of stored segments, last segment first
	rScratch [nGates][]float64
	adj      []float64 // adjoint of the state leaving the current segment
	adjL     []float64
	buf      []float64

	// groups, when there are several, split the chains among Models run in
	// parallel (see chainGroup); this Model then only dispatches.
	groups []*modelGroup
}

// modelGroup is a Model for a group of its parent's chains, with its share
// of the parent's positions, gradient and values.
type modelGroup struct {
	*Model
	chainGroup
	theta, grad, vs []float64
}

// NewModel builds and compiles the segment graph described by cfg. With
// more than one CPU (GOMAXPROCS) and chain, or more chains' recurrent
// weights than the cache budget holds, the chains are split into groups
// evaluated in parallel, each with its own graph (see chainGroups).
func NewModel(cfg Config) (*Model, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	groups := chainGroups(cfg)
	if groups == nil {
		return newModel(cfg)
	}
	m := &Model{cfg: cfg, layout: cfg.Layout()}
	d := m.Dim()
	for _, g := range groups {
		c := cfg
		c.Chains = g.k
		if c.ActivationMemory > 0 { // each group keeps its chains' share
			c.ActivationMemory = max(1, c.ActivationMemory*int64(g.k)/int64(cfg.Chains))
		}
		sub, err := newModel(c)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.groups = append(m.groups, &modelGroup{Model: sub, chainGroup: g,
			theta: make([]float64, d*g.k), grad: make([]float64, d*g.k), vs: make([]float64, g.k)})
	}
	return m, nil
}

// newModel builds one Model evaluating all of cfg's chains in one graph.
func newModel(cfg Config) (*Model, error) {
	seg, err := newSegment(cfg, 1, true)
	if err != nil {
		return nil, err
	}
	h, k, s := cfg.Hidden, cfg.Chains, cfg.Segment
	return &Model{
		cfg: cfg, layout: cfg.Layout(), seg: seg,
		kn: newKernel(h, k), acc: newKernel(h, k),
		x: make([]float64, k*s*Keys), mask: make([]float64, s),
		adj: make([]float64, k*h), adjL: make([]float64, k),
	}, nil
}

// Config returns the model's configuration (with defaults filled in).
func (m *Model) Config() Config { return m.cfg }

// Layout returns the parameter layout of one chain.
func (m *Model) Layout() Layout { return m.layout }

// Dim returns D, the number of parameters of one chain.
func (m *Model) Dim() int { return m.layout.Dim() }

// Chains returns K.
func (m *Model) Chains() int { return m.cfg.Chains }

// Close releases the compiled programs.
func (m *Model) Close() error {
	for _, g := range m.groups {
		g.Close()
	}
	if m.seg != nil {
		return m.seg.Close()
	}
	return nil
}

// inGroups gathers every group's positions from theta (D·K,
// coordinate-major) and runs f on the groups in parallel.
func (m *Model) inGroups(theta []float64, f func(g *modelGroup) error) error {
	if want := m.Dim() * m.cfg.Chains; len(theta) != want {
		return fmt.Errorf("gru: %d positions for %d parameters × %d chains", len(theta), m.Dim(), m.cfg.Chains)
	}
	for _, g := range m.groups {
		g.gather(theta, m.cfg.Chains, g.theta)
	}
	return inParallel(len(m.groups), func(i int) error { return f(m.groups[i]) })
}

// load puts the positions into the graph.
func (m *Model) load(theta []float64) error {
	if want := m.Dim() * m.cfg.Chains; len(theta) != want {
		return fmt.Errorf("gru: %d positions for %d parameters × %d chains", len(theta), m.Dim(), m.cfg.Chains)
	}
	m.layout.toKernel(theta, m.cfg.Chains, m.kn)
	return m.seg.setParams(m.kn)
}

// loadFrames puts frames s·S … s·S+S−1 of seq (zeros and mask 0 past its
// end) into the graph hf.
func (m *Model) loadFrames(hf *half, seq music.Sequence, s int) error {
	S, K := m.cfg.Segment, m.cfg.Chains
	one := m.x[:S*Keys]
	clear(one)
	t0 := s * S
	for t := 0; t < S; t++ {
		m.mask[t] = 0
		if t0+t < seq.T {
			m.mask[t] = 1
			for j, v := range seq.Frame(t0 + t) {
				one[t*Keys+j] = float64(v)
			}
		}
	}
	for k := 1; k < K; k++ {
		copy(m.x[k*S*Keys:(k+1)*S*Keys], one)
	}
	if err := graph.SetValue(hf.x, m.x); err != nil {
		return err
	}
	return graph.SetValue(hf.mask, m.mask)
}

func checkSequence(seq music.Sequence) error {
	if seq.T < 1 || len(seq.Roll) < seq.T*Keys {
		return fmt.Errorf("gru: sequence of %d frames with %d roll values", seq.T, len(seq.Roll))
	}
	return nil
}

// segments returns the number of segments of a sequence of T frames.
func (m *Model) segments(T int) int { return (T + m.cfg.Segment - 1) / m.cfg.Segment }

// LogLik writes log p(seq | θ_k) for each chain k into ll (length K), for
// the positions theta (D·K, coordinate-major).
func (m *Model) LogLik(theta []float64, seq music.Sequence, ll []float64) error {
	if len(ll) != m.cfg.Chains {
		return fmt.Errorf("gru: %d log-likelihoods for %d chains", len(ll), m.cfg.Chains)
	}
	if err := checkSequence(seq); err != nil {
		return err
	}
	if m.groups != nil {
		err := m.inGroups(theta, func(g *modelGroup) error { return g.LogLik(g.theta, seq, g.vs) })
		for _, g := range m.groups {
			g.scatter(g.vs, m.cfg.Chains, ll)
		}
		return err
	}
	if err := m.load(theta); err != nil {
		return err
	}
	clear(ll)
	m.startStates(theta, m.adj) // the state, here
	for s := 0; s < m.segments(seq.T); s++ {
		if err := m.loadFrames(m.seg.fw, seq, s); err != nil {
			return err
		}
		if err := graph.SetValue(m.seg.fw.hIn, m.adj); err != nil {
			return err
		}
		if err := m.seg.score.Run(); err != nil {
			return err
		}
		var err error
		if m.buf, err = graph.Value(m.seg.loss, m.buf); err != nil {
			return err
		}
		for k, v := range m.buf {
			ll[k] -= v
		}
		if m.adj, err = graph.Value(m.seg.hOut, m.adj); err != nil {
			return err
		}
	}
	return nil
}

// NLLGrad computes, for the positions theta (D·K, coordinate-major), the
// negative log-likelihood nll_k = −log p(seq | θ_k) of each chain (into nll,
// length K) and the gradient of Σ_k scale·nll_k (into grad, length D·K,
// coordinate-major).
func (m *Model) NLLGrad(theta []float64, seq music.Sequence, scale float64, nll, grad []float64) error {
	K, H := m.cfg.Chains, m.cfg.Hidden
	if len(nll) != K || len(grad) != m.Dim()*K {
		return fmt.Errorf("gru: %d values and %d gradient entries for %d parameters × %d chains", len(nll), len(grad), m.Dim(), K)
	}
	if err := checkSequence(seq); err != nil {
		return err
	}
	if m.groups != nil {
		err := m.inGroups(theta, func(g *modelGroup) error { return g.NLLGrad(g.theta, seq, scale, g.vs, g.grad) })
		for _, g := range m.groups {
			g.scatter(g.vs, m.cfg.Chains, nll)
			g.scatter(g.grad, m.cfg.Chains, grad)
		}
		return err
	}
	if err := m.load(theta); err != nil {
		return err
	}
	n := m.segments(seq.T)
	for len(m.hs) < n {
		m.hs = append(m.hs, make([]float64, K*H))
	}
	stored := min(n, m.storable())
	for len(m.rs) < stored {
		m.rs = append(m.rs, [nGates][]float64{})
	}
	// Forward: the state entering every segment, and the activations
	// of the last segments (those the backward pass meets first)
	// as far as the memory budget allows.
	m.startStates(theta, m.hs[0])
	for s := 0; s < n; s++ {
		keep := s >= n-stored
		if s+1 == n && !keep {
			break
		}
		if err := m.runState(seq, s); err != nil {
			return err
		}
		if s+1 < n {
			if err := m.read(m.seg.hOut, &m.hs[s+1]); err != nil {
				return err
			}
		}
		if keep {
			if err := m.readProducts(&m.rs[n-1-s]); err != nil {
				return err
			}
		}
	}
	// Backward, carrying the adjoint of the state.
	for k := range m.adjL {
		m.adjL[k] = scale
	}
	if err := graph.SetValue(m.seg.adjL, m.adjL); err != nil {
		return err
	}
	clear(m.adj)
	clear(nll)
	m.acc.zero()
	for s := n - 1; s >= 0; s-- {
		r := &m.rScratch
		if s >= n-stored {
			r = &m.rs[n-1-s]
		} else {
			if err := m.runState(seq, s); err != nil { // recompute
				return err
			}
			if err := m.readProducts(r); err != nil {
				return err
			}
		}
		if err := m.loadFrames(m.seg.bw, seq, s); err != nil {
			return err
		}
		if err := graph.SetValue(m.seg.bw.hIn, m.hs[s]); err != nil {
			return err
		}
		for g, node := range m.seg.rIn {
			if err := graph.SetValue(node, r[g]); err != nil {
				return err
			}
		}
		if err := graph.SetValue(m.seg.adjH, m.adj); err != nil {
			return err
		}
		if err := m.seg.vjp.Run(); err != nil {
			return err
		}
		if err := m.read(m.seg.lossV, &m.buf); err != nil {
			return err
		}
		for k, v := range m.buf {
			nll[k] += v
		}
		for i, node := range m.seg.grads {
			if err := addValue(node, m.acc[i]); err != nil {
				return err
			}
		}
		if err := m.read(m.seg.dhIn, &m.adj); err != nil {
			return err
		}
	}
	m.layout.fromKernel(m.acc, K, 1, grad)
	m.layout.startStateGrad(theta, K, m.adj, grad) // m.adj: the adjoint of h_0
	return nil
}

// startStates writes the states h_0 of the chains at theta into h (K·H,
// chain-major).
func (m *Model) startStates(theta, h []float64) {
	H := m.cfg.Hidden
	for k := 0; k < m.cfg.Chains; k++ {
		m.layout.startState(theta, m.cfg.Chains, k, h[k*H:(k+1)*H])
	}
}

// storable returns the number of segments whose activations fit in the
// memory budget.
func (m *Model) storable() int {
	if m.cfg.ActivationMemory < 0 {
		return 0
	}
	per := int64(8 * nGates * m.cfg.Chains * m.cfg.Segment * m.cfg.Hidden)
	return int(m.cfg.ActivationMemory / per)
}

// runState runs the forward program on segment s of seq from the state
// m.hs[s].
func (m *Model) runState(seq music.Sequence, s int) error {
	if err := m.loadFrames(m.seg.fw, seq, s); err != nil {
		return err
	}
	if err := graph.SetValue(m.seg.fw.hIn, m.hs[s]); err != nil {
		return err
	}
	return m.seg.state.Run()
}

// readProducts copies the gate activations of the last state run into r.
func (m *Model) readProducts(r *[nGates][]float64) error {
	for g, node := range m.seg.rOut {
		if err := m.read(node, &r[g]); err != nil {
			return err
		}
	}
	return nil
}

// read copies the value of node into *dst (grown as needed).
func (m *Model) read(node *G.Node, dst *[]float64) error {
	v, err := graph.Value(node, *dst)
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// addValue adds the value of node (of len(dst) entries) to dst.
func addValue(node *G.Node, dst []float64) error {
	t, ok := node.Value().(tensor.Tensor)
	if !ok {
		return fmt.Errorf("gru: node %v holds %T, not a tensor", node, node.Value())
	}
	if t.Shape().TotalSize() != len(dst) {
		return fmt.Errorf("gru: node %v has %d values, want %d", node, t.Shape().TotalSize(), len(dst))
	}
	if !t.IsNativelyAccessible() || t.RequiresIterator() {
		t = tensor.Materialize(t)
	}
	switch d := t.Data().(type) {
	case []float64:
		for i, v := range d[:len(dst)] {
			dst[i] += v
		}
	case []float32:
		for i, v := range d[:len(dst)] {
			dst[i] += float64(v)
		}
	default:
		return fmt.Errorf("gru: node %v has data %T", node, d)
	}
	return nil
}
