package coordnet

import "fmt"

// Kind is what a Spec computes on the n rows x_i of X (n × in), the
// network's parameters θ and, for the derivatives, a weight g_i and a
// direction H_i (1 × in) per row:
//
//	Value      f(x_i)                         (n)
//	InputGrad  g_i·∇ₓf(x_i)                   (n × in)
//	ParamGrad  Σ_i g_i·∂f(x_i)/∂θ             (NumParams, flat)
//	JVP        ∇ₓf(x_i)·H_i                   (n)
//	InputHVP   g_i·∇ₓ²f(x_i)·H_i              (n × in)
//	Mixed      Σ_i g_i·∂(∇ₓf(x_i)·H_i)/∂θ     (NumParams, flat)
//
// These are the value of the network on rows and its derivatives to
// second order: the derivative of each of Value, InputGrad and JVP with
// respect to every input is one of the others (see package
// coordnet/netgraph, whose fused op has one kind per Kind).
type Kind int

// The kinds of Spec.
const (
	Value Kind = iota
	InputGrad
	ParamGrad
	JVP
	InputHVP
	Mixed
)

// Spec is one computation on rows of a network in → hidden… → 1: its kind,
// the widths of its layers and the activation of its hidden layers. The
// kernels need nothing else; Weights.Spec gives a network's.
type Spec struct {
	Kind  Kind
	Sizes []int // in, hidden…, 1
	Act   Activation
}

// Spec returns the spec of the given kind for w's network.
func (w *Weights) Spec(kind Kind) Spec {
	return Spec{Kind: kind, Sizes: w.sizes(), Act: w.Activation}
}

// layers is the number of layers, hidden and output.
func (op Spec) layers() int { return len(op.Sizes) - 1 }

// ParamShape is the shape of parameter j, in the order of Weights.Params:
// W_l (Sizes[l] × Sizes[l+1], row-major) for j = 2l and B_l
// (1 × Sizes[l+1]) for j = 2l+1.
func (op Spec) ParamShape(j int) []int {
	l := j / 2
	if j%2 == 0 {
		return []int{op.Sizes[l], op.Sizes[l+1]}
	}
	return []int{1, op.Sizes[l+1]}
}

// NumParams is the number of weights and biases: the length of the flat
// parameter gradient of ParamGrad and Mixed, which holds the parameters'
// gradients one after the other in the order and shapes of ParamShape.
func (op Spec) NumParams() int {
	n := 0
	for l := 0; l < op.layers(); l++ {
		n += (op.Sizes[l] + 1) * op.Sizes[l+1]
	}
	return n
}

// paramOffset is the offset of parameter j (W_l for even j, B_l for odd) in
// the flat parameter gradient.
func (op Spec) paramOffset(j int) int {
	off := 0
	for i := 0; i < j; i++ {
		s := op.ParamShape(i)
		off += s[0] * s[1]
	}
	return off
}

// Compute sets out to what op computes (see Kind) from data: X (n × in,
// row-major), the parameters W0, B0, W1, B1, … in the order and shapes of
// ParamShape (as Weights.Params holds them), and then g (n) for InputGrad
// and ParamGrad, H (n × in) for JVP, g and H for InputHVP and Mixed. out
// has the length of the kind's result: n, n·in or NumParams.
//
// Compute runs the kernels Eval and InputGrad run, on blocks of rows in
// parallel over fixed spans; ParamGrad and Mixed add the spans' partial
// sums in span order, so that the result does not depend on the number of
// workers. It panics if the lengths do not fit op.
func (op Spec) Compute(data [][]float64, out []float64) {
	if err := op.check(data, out); err != nil {
		panic("coordnet: Spec.Compute: " + err.Error())
	}
	clear(out) // the reductions add into it
	op.compute(data, out, nil)
}

// check reports whether op is a network the kernels take and data and out
// have the lengths Compute needs.
func (op Spec) check(data [][]float64, out []float64) error {
	if op.Kind < Value || op.Kind > Mixed {
		return fmt.Errorf("unknown kind %d", op.Kind)
	}
	if op.Act != ReLU && op.Act != Tanh {
		return fmt.Errorf("unknown activation %q", op.Act)
	}
	if len(op.Sizes) < 2 || op.Sizes[len(op.Sizes)-1] != 1 {
		return fmt.Errorf("layer sizes %v, want in, hidden…, 1", op.Sizes)
	}
	for _, s := range op.Sizes {
		if s < 1 {
			return fmt.Errorf("layer sizes %v", op.Sizes)
		}
	}
	np := 2 * op.layers()
	extra := 0
	switch op.Kind {
	case InputGrad, ParamGrad, JVP:
		extra = 1
	case InputHVP, Mixed:
		extra = 2
	}
	if len(data) != 1+np+extra {
		return fmt.Errorf("%d inputs, want %d", len(data), 1+np+extra)
	}
	in := op.Sizes[0]
	n := len(data[0]) / in
	if len(data[0]) != n*in {
		return fmt.Errorf("X has %d entries, not rows of %d", len(data[0]), in)
	}
	for j := 0; j < np; j++ {
		if s := op.ParamShape(j); len(data[1+j]) != s[0]*s[1] {
			return fmt.Errorf("parameter %d has %d entries, want %d", j, len(data[1+j]), s[0]*s[1])
		}
	}
	gLen, hLen := n, n*in
	if op.Kind == JVP {
		gLen = hLen // its one extra input is H
	}
	if extra >= 1 && len(data[1+np]) != gLen {
		return fmt.Errorf("%d entries of g or H for %d rows", len(data[1+np]), n)
	}
	if extra == 2 && len(data[2+np]) != hLen {
		return fmt.Errorf("%d entries of H for %d rows", len(data[2+np]), n)
	}
	want := n
	switch op.Kind {
	case InputGrad, InputHVP:
		want = n * in
	case ParamGrad, Mixed:
		want = op.NumParams()
	}
	if len(out) != want {
		return fmt.Errorf("%d outputs, want %d", len(out), want)
	}
	return nil
}
