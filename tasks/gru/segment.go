package gru

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
)

// segment is the graph of S steps of the GRU for K chains and B sequences
// side by side, compiled into programs:
//
//   - state: the state after the segment and the gate activations z, r and ĥ
//     of its steps (the forward pass of a gradient);
//   - score: the state after the segment and the loss (evaluation);
//   - vjp (when built with gradients): the loss and the vector-Jacobian
//     product of the loss and the outgoing state, given the activations
//     that state computed.
//
// Inputs: the parameters in kernel layout (see kernel); the hidden state hIn
// (K, B, H) entering the segment; the frames x (K, S·B, 88), row t·B + b
// holding frame t of sequence b, repeated for every chain, which are also the
// targets (frame t is predicted from the state before it, then consumed); a
// mask (1, S·B) of the frames that count (0 for the padding after the end of
// a sequence); and for vjp the activations rIn (per gate, (K, S·B, H))
// and the adjoints adjL (K, B) of the loss and adjH (K, B, H) of the
// outgoing state.
//
// Outputs: hOut (K, B, H), the state after the S frames; rOut, the gate
// activations act_g(x_t·Wx_g + b_g + (recurrent input)·U_g) of every step
// (σ or tanh, per gate, (K, S·B, H)); loss (K, B), the negative log-likelihood
// −Σ_t mask_t log p(x_t | x_<t) of each chain and sequence; and for vjp the
// adjoints of the parameters (kernel layout) and of hIn.
//
// The input projections of all S frames for all chains are one batched
// product per gate; the recurrence of the S steps is one op (forwardOp),
// and the states entering the steps, which the loss needs, another
// (statesOp). The vjp program is hand-built from the forward pass's
// activations rather than Gorgonia's gradient of S steps (see recur.go):
// statesOp rebuilds the states, Gorgonia differentiates the loss with
// respect to them and the output layer, and backOp runs the recurrence
// backward into the stacked adjoints dA_g (K, S·B, H) of the gate
// pre-activations. The gate weights' adjoints dU_g = Σ_t (recurrent
// input)ᵀ·dA_g,t, dWx_g = Xᵀ·dA_g and db_g = Σ_t dA_g,t are one op each for
// the whole segment.
//
// The forward and the backward pass are two graphs with inputs of their own
// (half).
type segment struct {
	h, k, s, b int
	dt         graph.Dtype
	resetAfter bool // Config.ResetAfter

	fw, bw       *half           // the forward and the backward graph (nil without gradients)
	hOut         *G.Node         // forward recurrence
	rOut         [nGates]*G.Node // its gate activations
	loss         *G.Node         // its loss
	rIn          [nGates]*G.Node // backward pass: the gate activations
	adjL, adjH   *G.Node
	lossV        *G.Node   // loss recomputed by the backward pass
	grads        []*G.Node // adjoints of params
	dhIn         *G.Node
	state, score *graph.Program
	vjp          *graph.Program
}

// half is a graph of the segment with its inputs.
type half struct {
	g            *G.ExprGraph
	params       []*G.Node // kernel layout, in kernel order
	hIn, x, mask *G.Node
	proj         [nGates]*G.Node // input projections, (K, S·B, H) per gate (forward graph)
}

// paramNames names the parameter inputs, in kernel order.
var paramNames = []string{"Wxz", "Wxr", "Wxh", "bz", "br", "bh", "Uz", "Ur", "Uh", "Wo", "bo"}

// newHalf adds the inputs and, with proj, the input projections of all
// frames for all chains to a new graph.
func (sg *segment) newHalf(proj bool) *half {
	H, K, S, B, dt := sg.h, sg.k, sg.s, sg.b, sg.dt
	hf := &half{g: G.NewGraph()}
	for i, shape := range kernelShapes(H, K) {
		hf.params = append(hf.params, graph.Input(hf.g, dt, paramNames[i], shape...))
	}
	hf.hIn = graph.Input(hf.g, dt, "hIn", K, B, H)
	hf.x = graph.Input(hf.g, dt, "frames", K, S*B, Keys)
	hf.mask = graph.Input(hf.g, dt, "mask", 1, S*B)
	for gt := 0; proj && gt < nGates; gt++ {
		xw := G.Must(G.BatchedMatMul(hf.x, hf.params[kWx+gt]))
		hf.proj[gt] = G.Must(G.BroadcastAdd(xw, hf.params[kB+gt], nil, []byte{1}))
	}
	return hf
}

// halves returns the graphs of the segment.
func (sg *segment) halves() []*half {
	if sg.bw == nil {
		return []*half{sg.fw}
	}
	return []*half{sg.fw, sg.bw}
}

// newSegment builds and compiles the segment graph of cfg's GRU (Hidden,
// Chains, Segment, Dtype, ResetAfter) for b sequences side by side; the vjp
// program only when grad is set.
func newSegment(cfg Config, b int, grad bool) (*segment, error) {
	h, k, s := cfg.Hidden, cfg.Chains, cfg.Segment
	if h < 1 || k < 1 || s < 1 || b < 1 {
		return nil, fmt.Errorf("gru: segment of %d steps, %d chains, %d sequences, %d hidden units", s, k, b, h)
	}
	sg := &segment{h: h, k: k, s: s, b: b, dt: cfg.Dtype, resetAfter: cfg.ResetAfter}
	if err := sg.build(grad); err != nil {
		return nil, err
	}
	var err error
	if sg.state, err = graph.Compile(append(G.Nodes{sg.hOut}, sg.rOut[:]...)...); err != nil {
		return nil, err
	}
	if sg.score, err = graph.Compile(sg.loss, sg.hOut); err != nil {
		return nil, err
	}
	if grad {
		outs := append(G.Nodes{sg.lossV, sg.dhIn}, sg.grads...)
		if sg.vjp, err = graph.Compile(outs...); err != nil {
			return nil, err
		}
	}
	return sg, nil
}

// unpack splits the output (K, 3·S·B + B, H) of forwardOp or backOp into
// its three per-gate stacks (K, S·B, H) and its last B rows (K, B, H).
func (sg *segment) unpack(packed *G.Node) (stacks [nGates]*G.Node, last *G.Node) {
	sb := sg.s * sg.b
	for gt := range stacks {
		stacks[gt] = G.Must(graph.Slice(packed, 1, gt*sb, (gt+1)*sb))
	}
	return stacks, G.Must(graph.Slice(packed, 1, nGates*sb, nGates*sb+sg.b))
}

// stepStates returns the states (K, S·B, H) entering the steps of hf, from the
// gate activations y of the steps.
func stepStates(hf *half, y [nGates]*G.Node) *G.Node {
	return G.Must(G.ApplyOp(newStatesOp(), hf.hIn, y[gateZ], y[gateH]))
}

// nll returns the negative log-likelihood (K, B) of the frames of hf
// predicted from the states hp entering the steps (stacked, (K, S·B, H)).
func (sg *segment) nll(hf *half, hp *G.Node) *G.Node {
	K, S, B := sg.k, sg.s, sg.b
	must := G.Must
	logits := must(G.BroadcastAdd(must(G.BatchedMatMul(hp, hf.params[kWo])), hf.params[kBo], nil, []byte{1}))
	llt := must(G.ApplyOp(newBernoulliOp(false), logits, hf.x)) // Σ_keys x·l − softplus(l), (K, S·B)
	masked := must(graph.Reshape(must(G.BroadcastHadamardProd(llt, hf.mask, nil, []byte{0})), K, S, B))
	return graph.Neg(must(G.Sum(masked, 1))) // (K, B)
}

func (sg *segment) build(grad bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gru: building the segment graph: %v", r)
		}
	}()
	dt, H, K, S, B := sg.dt, sg.h, sg.k, sg.s, sg.b
	must := G.Must

	// The forward recurrence.
	fh := sg.newHalf(true)
	sg.fw = fh
	in := append(append(G.Nodes{}, fh.proj[:]...), fh.params[kU:kU+nGates]...)
	sg.rOut, sg.hOut = sg.unpack(must(G.ApplyOp(newForwardOp(sg.resetAfter), append(in, fh.hIn)...)))
	sg.loss = sg.nll(fh, stepStates(fh, sg.rOut))
	if !grad {
		return nil
	}

	// The backward pass, seeded with adjL and adjH: the states entering the
	// steps, rebuilt from the activations; the loss's vector-Jacobian
	// product with respect to them and the output layer; and the
	// recurrence's (backOp).
	bw := sg.newHalf(false)
	sg.bw = bw
	for gt := range sg.rIn {
		sg.rIn[gt] = graph.Input(bw.g, dt, fmt.Sprintf("Y%s", paramNames[kU+gt][1:]), K, S*B, H)
	}
	sg.adjL = graph.Input(bw.g, dt, "adjLoss", K, B)
	sg.adjH = graph.Input(bw.g, dt, "adjHOut", K, B, H)
	hp := stepStates(bw, sg.rIn) // (K, S·B, H)
	sg.lossV = sg.nll(bw, hp)
	adj, err := graph.VJP(G.Nodes{sg.lossV}, G.Nodes{sg.adjL}, hp, bw.params[kWo], bw.params[kBo])
	if err != nil {
		return err
	}
	in = append(G.Nodes{adj[0], sg.adjH, hp}, sg.rIn[:]...)
	dAs, dhIn := sg.unpack(must(G.ApplyOp(newBackOp(sg.resetAfter), append(in, bw.params[kU:kU+nGates]...)...)))
	// Stacked pre-activation adjoints dA_g (K, S·B, H) give the gate
	// weights' adjoints: dWx_g = Xᵀ·dA_g, db_g = Σ_t dA_g, dU_g = Hᵀ·dA_g with
	// H the states entering the steps (for z and r) or r⊙h (for ĥ); with
	// resetAfter dU_h = Hᵀ·(dA_h⊙r).
	sg.grads = make(G.Nodes, kParts)
	for gt := 0; gt < nGates; gt++ {
		dA := dAs[gt]
		sg.grads[kWx+gt] = must(G.BatchedMatMul(bw.x, dA, true, false))
		sg.grads[kB+gt] = must(G.Sum(dA, 1))
		in, out := hp, dA
		switch {
		case gt == gateH && sg.resetAfter:
			out = must(G.HadamardProd(dA, sg.rIn[gateR]))
		case gt == gateH:
			in = must(G.HadamardProd(sg.rIn[gateR], hp))
		}
		sg.grads[kU+gt] = must(G.BatchedMatMul(in, out, true, false))
	}
	sg.dhIn = dhIn
	sg.grads[kWo], sg.grads[kBo] = adj[1], adj[2]
	return nil
}

// setParams loads the parameters (kernel layout) into the graphs.
func (sg *segment) setParams(kn kernel) error {
	for _, hf := range sg.halves() {
		for i, p := range kn {
			if err := graph.SetValue(hf.params[i], p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close releases the compiled programs.
func (sg *segment) Close() error {
	sg.state.Close()
	sg.score.Close()
	if sg.vjp != nil {
		sg.vjp.Close()
	}
	return nil
}
