package train

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/coordnet/netgraph"
	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
)

// StepGraph is one NNSGHMC step over n = D·K coordinates as a Gorgonia
// graph: the inputs of f_Q and f_D pass through stop-gradients, and Γ comes
// from differentiating the graph (GammaExact) or is left out (GammaNone).
// Meta-training differentiates ThetaNext and PNext with respect to the
// networks' weights and the incoming state.
//
// As in the authors' code (BNN_Q_D.py, parallel_D_eff), Q_f enters D_f's
// α·Q_f² term through a stop-gradient: the meta-gradient reaches f_Q's
// weights through the drift, the position update and Γ, but not through
// the friction and the noise that α·Q_f² adds. Γ_p's term
// (∂D_f/∂Q_f)·(∂Q_f/∂p) = 2α·Q_f·∂Q_f/∂p is built explicitly, with Q_f a
// constant and ∂Q_f/∂p a function of f_Q's weights. Without the stop, f_Q
// learns to act as a friction through α·Q_f², growing with |p|, and the
// position update η·Q_f·p then throws chains out (experiments/mnist-data).
type StepGraph struct {
	Graph *G.ExprGraph
	Cfg   nnkernel.Config

	// Inputs, each of shape (n).
	Theta, P *G.Node // θ_t, p_t
	U        *G.Node // u per coordinate
	DU       *G.Node // ∂u/∂θ_i
	GFeat    *G.Node // gradient feature of f_D
	Grad     *G.Node // ∇Ũ(θ_t) for the drift
	Noise    *G.Node // ξ_t ~ N(0, I)
	Eta      *G.Node // the step size η, a scalar input (set to Cfg.StepSize)

	// PIn, PNextIn and QDIn exist only in a graph built with FrozenInputs:
	// the momenta the networks see at z_t and z'_t, fed in instead of p_t
	// and p_{t+1}, and the value of Q_f that D_f's α·Q_f² term sees.
	PIn, PNextIn, QDIn *G.Node

	QNet, DNet *netgraph.Net

	// Intermediate results, each (n).
	Q, D, GammaP     *G.Node // Q_f, D_f, Γ_p at (θ_t, p_t)
	QNext, GammaThet *G.Node // Q'_f and Γ'_θ at (θ_t, p_{t+1})

	// Outputs, each (n).
	ThetaNext, PNext *G.Node
}

// StepOptions are variants of the step graph.
type StepOptions struct {
	// FrozenInputs makes the momenta that the networks see, and the Q_f
	// that D_f sees, inputs of the graph (PIn, PNextIn, QDIn) instead of
	// stop-gradients of p_t, p_{t+1} and Q_f. The derivatives are the same;
	// a finite-difference check of meta-gradients uses this to hold those
	// values fixed, as the stop-gradients do analytically.
	FrozenInputs bool
}

// BuildStep builds the step graph for n coordinates in dtype dt.
func BuildStep(cfg nnkernel.Config, n int, dt tensor.Dtype, opts ...StepOptions) (*StepGraph, error) {
	var opt StepOptions
	if len(opts) > 0 {
		opt = opts[0]
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Gamma == nnkernel.GammaFD {
		return nil, fmt.Errorf("samplers: the step graph computes Γ exactly or not at all; finite differences are computed without a graph")
	}
	g := G.NewGraph()
	s := &StepGraph{Graph: g, Cfg: cfg}
	in := func(name string) *G.Node { return graph.Input(g, dt, "nnsghmc."+name, n) }
	s.Theta, s.P, s.U, s.DU = in("theta"), in("p"), in("u"), in("du")
	s.GFeat, s.Grad, s.Noise = in("gfeat"), in("grad"), in("noise")
	var err error
	if s.QNet, err = netgraph.NewNet(g, dt, "fQ", cfg.Q); err != nil {
		return nil, err
	}
	if s.DNet, err = netgraph.NewNet(g, dt, "fD", cfg.D); err != nil {
		return nil, err
	}
	b := builder{g: g, dt: dt, n: n}
	sc := func(v float64) *G.Node { return graph.Scalar(g, dt, v) }

	uIn := graph.StopGradient(s.U)
	pIn := graph.StopGradient(s.P)
	gIn := graph.StopGradient(s.GFeat)
	if opt.FrozenInputs {
		s.PIn, s.PNextIn = in("p_in"), in("pnext_in")
		pIn = graph.StopGradient(s.PIn)
	}
	s.Q = b.qf(s, uIn, pIn)
	qd := graph.StopGradient(s.Q)
	if opt.FrozenInputs {
		s.QDIn = in("qd_in")
		qd = graph.StopGradient(s.QDIn)
	}
	var dGate, dNet *G.Node // 1 where D_f's clamp does not bind; s_D·|f_D|
	s.D, dGate, dNet = b.df(s, uIn, pIn, gIn, qd)
	authors := cfg.Gamma == nnkernel.GammaAuthors

	s.Eta = graph.Input(g, dt, "nnsghmc.eta")
	if err := graph.SetValue(s.Eta, []float64{cfg.StepSize}); err != nil {
		return nil, err
	}
	eta := s.Eta
	// explicit: p_{t+1} = p − η(Q⊙∇Ũ + D⊙p) + ηΓ_p + √(2ηD)⊙ξ;
	// exponential: p_{t+1} = p + e⊙p − η·Q⊙∇Ũ + ηΓ_p + √(−2e)⊙ξ
	// with e = e^{−ηD} − 1 (nnkernel's nextMomentum, term for term)
	explicit := cfg.Friction == nnkernel.FrictionExplicit
	var pn, decay *G.Node
	if explicit {
		drift := b.add(b.mul(s.Q, s.Grad), b.mul(s.D, s.P))
		pn = b.add(s.P, b.elem(graph.Neg, b.scale(eta, drift))) // p − η·drift; see graph.Neg
	} else {
		decay = b.elem(graph.Expm1, b.elem(graph.Neg, b.scale(eta, s.D)))
		pn = b.add(b.add(s.P, b.mul(decay, s.P)), b.elem(graph.Neg, b.scale(eta, b.mul(s.Q, s.Grad))))
	}
	if cfg.Gamma == nnkernel.GammaExact || authors {
		dQdu := b.grad(b.sum(s.Q), uIn)
		var dDdp *G.Node
		if authors {
			dDdp = b.grad(b.sum(dNet), pIn) // s_D·∂|f_D|/∂p, clamp or not
		} else {
			dDdp = b.grad(b.sum(s.D), pIn) // s_D·∂|f_D|/∂p where D_f's clamp does not bind
		}
		if cfg.Alpha != 0 {
			// + (∂D_f/∂Q_f)·(∂Q_f/∂p) = 2α·Q_f·∂Q_f/∂p, gated by the clamp
			dQdp := b.grad(b.sum(s.Q), pIn)
			chain := b.mul(b.scale(sc(2*cfg.Alpha), qd), dQdp)
			if dGate != nil {
				chain = b.mul(chain, dGate)
			}
			dDdp = b.add(dDdp, chain)
		}
		if !explicit {
			// the exponential step runs with D_eff = −e/η: ∂D_eff/∂p =
			// e^{−ηD}·∂D/∂p (nnkernel's friction)
			dDdp = b.mul(b.add(decay, sc(1)), dDdp)
		}
		du := s.DU
		if authors && cfg.EnergyScale < 0 {
			du = b.scale(sc(-1), du) // the code's sign (nnkernel's authorsDU)
		}
		s.GammaP = b.add(b.mul(dQdu, du), dDdp)
		pn = b.add(pn, b.scale(eta, s.GammaP))
	}
	var sd *G.Node
	if explicit {
		sd = b.elem(graph.Sqrt, b.scale(b.scale(sc(2), eta), s.D))
	} else {
		sd = b.elem(graph.Sqrt, b.scale(sc(-2), decay))
	}
	s.PNext = b.add(pn, b.mul(sd, s.Noise))

	// θ_{t+1} = θ + η(Q'⊙p_{t+1} + Γ'_θ), with Q' at the new momentum
	pNextIn := graph.StopGradient(s.PNext)
	if opt.FrozenInputs {
		pNextIn = graph.StopGradient(s.PNextIn)
	}
	s.QNext = b.qf(s, uIn, pNextIn)
	qPos := s.QNext
	if authors {
		qPos = s.Q // Q_f at (θ_t, p_t), as the authors' training does
	}
	move := b.mul(qPos, s.PNext)
	if cfg.Gamma == nnkernel.GammaExact || authors {
		s.GammaThet = b.scale(sc(-1), b.grad(b.sum(s.QNext), pNextIn))
		move = b.add(move, s.GammaThet)
	}
	s.ThetaNext = b.add(s.Theta, b.scale(eta, move))
	if b.err != nil {
		return nil, b.err
	}
	return s, nil
}

// Inputs returns the step's per-coordinate inputs in the order of Feed.
func (s *StepGraph) Inputs() G.Nodes {
	return G.Nodes{s.Theta, s.P, s.U, s.DU, s.GFeat, s.Grad, s.Noise}
}

// Feed sets the step's inputs: positions, momenta, features, the energy
// gradient and the noise, each of length n.
func (s *StepGraph) Feed(theta, p []float64, f *nnkernel.Features, grad, noise []float64) error {
	for i, v := range [][]float64{theta, p, f.U, f.DU, f.GFeat, grad, noise} {
		if err := graph.SetValue(s.Inputs()[i], v); err != nil {
			return err
		}
	}
	return nil
}

// builder chains graph operations, keeping the first error.
type builder struct {
	g   *G.ExprGraph
	dt  tensor.Dtype
	n   int
	err error
}

func (b *builder) must(x *G.Node, err error) *G.Node {
	if err != nil && b.err == nil {
		b.err = err
	}
	return x
}

func (b *builder) ok() bool { return b.err == nil }

func (b *builder) add(x, y *G.Node) *G.Node {
	if !b.ok() {
		return nil
	}
	return b.must(G.Add(x, y))
}

// elem applies one of graph's element-wise ops (Neg, Abs, Sqrt) to x.
func (b *builder) elem(op func(*G.Node) *G.Node, x *G.Node) *G.Node {
	if !b.ok() {
		return nil
	}
	return op(x)
}

func (b *builder) mul(x, y *G.Node) *G.Node {
	if !b.ok() {
		return nil
	}
	return b.must(G.HadamardProd(x, y))
}

// scale multiplies x by the scalar node c.
func (b *builder) scale(c, x *G.Node) *G.Node {
	if !b.ok() {
		return nil
	}
	return b.must(G.Mul(x, c))
}

func (b *builder) sum(x *G.Node) *G.Node {
	if !b.ok() {
		return nil
	}
	return b.must(G.Sum(x))
}

// grad is ∂cost/∂w for a per-coordinate cost Σ_i f_i: each f_i depends on
// coordinate i alone, so this is the vector of ∂f_i/∂w_i.
func (b *builder) grad(cost, w *G.Node) *G.Node {
	if !b.ok() {
		return nil
	}
	d, err := graph.Grad(cost, w)
	if err != nil {
		b.must(nil, err)
		return nil
	}
	return d[0]
}

// column reshapes an (n) vector to (n, 1).
func (b *builder) column(x *G.Node) *G.Node {
	if !b.ok() {
		return nil
	}
	return b.must(graph.Reshape(x, b.n, 1))
}

// qf is Q_f = β + clamp(f_Q(u, m·p), ±ClampQ).
func (b *builder) qf(s *StepGraph, u, p *G.Node) *G.Node {
	cfg := s.Cfg
	if !b.ok() {
		return nil
	}
	pm := b.scale(graph.Scalar(b.g, b.dt, cfg.MomentumScale), p)
	x := b.must(graph.Concat(1, b.column(u), b.column(pm)))
	if !b.ok() {
		return nil
	}
	f := b.must(s.QNet.Forward(x))
	if !b.ok() {
		return nil
	}
	if cfg.ClampQ > 0 {
		f = graph.Clamp(f, -cfg.ClampQ, cfg.ClampQ)
	}
	if cfg.Beta != 0 {
		f = b.add(f, graph.Scalar(b.g, b.dt, cfg.Beta))
	}
	return f
}

// df is D_f = clamp(α·Q_f² + s_D·|f_D(u, m·p, g)| + c, 0, DMax) for the
// given Q_f, the clamp's gate (nil when D_f is not clamped above) and the
// network part s_D·|f_D|.
func (b *builder) df(s *StepGraph, u, p, g, q *G.Node) (d, gate, net *G.Node) {
	cfg := s.Cfg
	if !b.ok() {
		return nil, nil, nil
	}
	pm := b.scale(graph.Scalar(b.g, b.dt, cfg.MomentumScale), p)
	x := b.must(graph.Concat(1, b.column(u), b.column(pm), b.column(g)))
	if !b.ok() {
		return nil, nil, nil
	}
	f := b.must(s.DNet.Forward(x))
	if !b.ok() {
		return nil, nil, nil
	}
	d = b.scale(graph.Scalar(b.g, b.dt, cfg.DScale), b.elem(graph.Abs, f))
	net = d
	if cfg.Alpha != 0 {
		d = b.add(d, b.scale(graph.Scalar(b.g, b.dt, cfg.Alpha), b.mul(q, q)))
	}
	if cfg.C != 0 {
		d = b.add(d, graph.Scalar(b.g, b.dt, cfg.C))
	}
	if cfg.DMax > 0 && b.ok() {
		gate = graph.ClampGate(d, 0, cfg.DMax)
		d = graph.Clamp(d, 0, cfg.DMax)
	}
	return d, gate, net
}
