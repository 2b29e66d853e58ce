package gru

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
)

// segment is the graph of S steps of the GRU for K chains and B sequences
// side by side, compiled into programs: the hidden state only (state), the
// state and the loss (score), and — when built with gradients — the loss and
// the vector-Jacobian product (vjp).
//
// Inputs: the parameters in kernel layout (see kernel); the hidden state hIn
// (K, B, H) entering the segment; the frames x (K, S·B, 88), row t·B + b
// holding frame t of sequence b, repeated for every chain, which are also the
// targets (frame t is predicted from the state before it, then consumed); a
// mask (1, S·B) of the frames that count (0 for the padding after the end of
// a sequence); and for vjp the adjoints adjL (K, B) of the loss and adjH
// (K, B, H) of hOut.
//
// Outputs: hOut (K, B, H), the state after the S frames; loss (K, B), the
// negative log-likelihood −Σ_t mask_t log p(x_t | x_<t) of each chain and
// sequence; and for vjp the adjoints of the parameters (kernel layout) and
// of hIn.
//
// The recurrent and input weights get their adjoints from the stacked
// adjoints dA (K, S·B, 3H) of the gate pre-activations, which the
// vector-Jacobian product gives as the adjoints of each step's input
// projections: dU = Σ_t h_{t−1}ᵀ dA_t and dWx = Xᵀ dA are then one batched
// matrix product each for the whole segment, where Gorgonia's own gradient
// would form and add up an outer product per step.
type segment struct {
	h, k, s, b int
	dt      graph.Dtype
	g       *G.ExprGraph

	params            []*G.Node // kernel layout, in kernel.parts order
	hIn, x, mask      *G.Node
	adjL, adjH        *G.Node
	hOut, loss        *G.Node
	grads             []*G.Node // adjoints of params
	dhIn              *G.Node
	state, score, vjp *graph.Program
}

// newSegment builds and compiles the segment graph; the vjp program only
// when grad is set.
func newSegment(h, k, s, b int, dt graph.Dtype, grad bool) (*segment, error) {
	if h < 1 || k < 1 || s < 1 || b < 1 {
		return nil, fmt.Errorf("gru: segment of %d steps, %d chains, %d sequences, %d hidden units", s, k, b, h)
	}
	sg := &segment{h: h, k: k, s: s, b: b, dt: dt, g: G.NewGraph()}
	if err := sg.build(grad); err != nil {
		return nil, err
	}
	var err error
	if sg.state, err = graph.Compile(sg.hOut); err != nil {
		return nil, err
	}
	if sg.score, err = graph.Compile(sg.loss, sg.hOut); err != nil {
		return nil, err
	}
	if grad {
		outs := append(G.Nodes{sg.loss, sg.dhIn}, sg.grads...)
		if sg.vjp, err = graph.Compile(outs...); err != nil {
			return nil, err
		}
	}
	return sg, nil
}

func (sg *segment) build(grad bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gru: building the segment graph: %v", r)
		}
	}()
	g, dt, H, K, S, B := sg.g, sg.dt, sg.h, sg.k, sg.s, sg.b
	names := []string{"Wx", "b", "Uzr", "Uh", "Wo", "bo"}
	for i, shape := range kernelShapes(H, K) {
		sg.params = append(sg.params, graph.Input(g, dt, names[i], shape...))
	}
	wx, b, uZR, uH, wo, bo := sg.params[0], sg.params[1], sg.params[2], sg.params[3], sg.params[4], sg.params[5]
	sg.hIn = graph.Input(g, dt, "hIn", K, B, H)
	sg.x = graph.Input(g, dt, "frames", K, S*B, Keys)
	sg.mask = graph.Input(g, dt, "mask", 1, S*B)

	must := G.Must
	slice := func(x *G.Node, axis, a, b int) *G.Node { return must(graph.Slice(x, axis, a, b)) }

	// Input projections of all frames for all chains, (K, S·B, 3H).
	p := must(G.BroadcastAdd(must(G.BatchedMatMul(sg.x, wx)), b, nil, []byte{1}))

	h := sg.hIn
	var hPrev, rh, pt G.Nodes
	for t := 0; t < S; t++ {
		p1 := slice(p, 1, t*B, (t+1)*B) // (K, B, 3H)
		az := must(G.Add(slice(p1, 2, 0, 2*H), must(G.BatchedMatMul(h, uZR))))
		zr := must(G.Sigmoid(az))
		z := slice(zr, 2, 0, H)
		r := slice(zr, 2, H, 2*H)
		rht := must(G.HadamardProd(r, h))
		ah := must(G.Add(slice(p1, 2, 2*H, 3*H), must(G.BatchedMatMul(rht, uH))))
		hh := must(G.Tanh(ah))
		hn := must(G.Add(h, must(G.HadamardProd(z, must(G.Sub(hh, h))))))
		hPrev, rh, pt = append(hPrev, h), append(rh, rht), append(pt, p1)
		h = hn
	}
	sg.hOut = h

	// Bernoulli log-likelihood of every frame from the state before it.
	hp := must(graph.Concat(1, hPrev...)) // (K, S·B, H)
	logits := must(G.BroadcastAdd(must(G.BatchedMatMul(hp, wo)), bo, nil, []byte{1}))
	ll := must(G.Sub(must(G.HadamardProd(logits, sg.x)), must(G.Softplus(logits))))
	llt := must(G.Sum(ll, 2)) // (K, S·B)
	masked := must(graph.Reshape(must(G.BroadcastHadamardProd(llt, sg.mask, nil, []byte{0})), K, S, B))
	sg.loss = must(G.Neg(must(G.Sum(masked, 1)))) // (K, B)
	if !grad {
		return nil
	}

	// Vector-Jacobian product seeded with adjL and adjH, with respect to
	// the projected inputs of every step (the adjoints of the gate
	// pre-activations), the incoming state and the output layer.
	sg.adjL = graph.Input(g, dt, "adjLoss", K, B)
	sg.adjH = graph.Input(g, dt, "adjHOut", K, B, H)
	wrt := append(append(G.Nodes{}, pt...), sg.hIn, wo, bo)
	adj, err := graph.VJP(G.Nodes{sg.loss, sg.hOut}, G.Nodes{sg.adjL, sg.adjH}, wrt...)
	if err != nil {
		return err
	}
	dA := must(graph.Concat(1, adj[:S]...)) // (K, S·B, 3H)
	sg.grads = G.Nodes{
		must(G.BatchedMatMul(sg.x, dA, true, false)),                                             // Wx
		must(G.Sum(dA, 1)),                                                                       // b
		must(G.BatchedMatMul(hp, slice(dA, 2, 0, 2*H), true, false)),                             // Uzr
		must(G.BatchedMatMul(must(graph.Concat(1, rh...)), slice(dA, 2, 2*H, 3*H), true, false)), // Uh
		adj[S+1], adj[S+2], // Wo, bo
	}
	sg.dhIn = adj[S]
	return nil
}

// setParams loads the parameters (kernel layout) into the graph.
func (sg *segment) setParams(kn *kernel) error {
	for i, p := range kn.parts() {
		if err := graph.SetValue(sg.params[i], p); err != nil {
			return err
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
