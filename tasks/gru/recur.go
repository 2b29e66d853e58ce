package gru

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph"
)

// The recurrence of a segment is one op forward (forwardOp) and two
// backward, hand-built from the gate activations the forward pass kept
// rather than Gorgonia's gradient of S steps: statesOp rebuilds the states
// entering the steps (element-wise, no matrix product), and backOp runs the
// recurrence backward. Both forwardOp and backOp run chain by chain, so that
// a chain's recurrent weights stay in the cache for all S steps, and run no
// op per step. None has derivatives: backOp is the derivative.

// forwardOp runs the S steps of a segment. Inputs: the input projections
// x_t·Wx_g + b_g of the steps (per gate, (K, S·B, H)), the recurrent weights
// U_z, U_r, U_h (K, H, H) and the state entering the segment (K, B, H).
// Output (K, 3·S·B + B, H): the activations z, r and ĥ of all steps (S·B
// rows each), then the state after the segment (B rows). Each step's
// recurrent products are chainProducts of one chain. With resetAfter the
// reset gate applies after the recurrent product (Config.ResetAfter).
type forwardOp struct {
	graph.OpBase
	resetAfter bool
}

func newForwardOp(resetAfter bool) forwardOp {
	return forwardOp{graph.NewOpBase(opNamespace, opName("Forward", resetAfter), 7), resetAfter}
}

// opName is the name of a recurrence op: name, or name and "ResetAfter"
// (which the op's hash then includes).
func opName(name string, resetAfter bool) string {
	if resetAfter {
		return name + "ResetAfter"
	}
	return name
}

// Inputs of forwardOp: the projections (+ gate), the recurrent weights (+
// gate), the state.
const (
	fwdP      = 0
	fwdU      = fwdP + nGates
	fwdH      = fwdU + nGates
	fwdInputs = fwdH + 1
)

// statesOp returns the states entering the S steps of a segment, (K, S·B,
// H), row block t holding h_t, from the state h_0 entering it (K, B, H) and
// the stacked activations z and ĥ of its steps (K, S·B, H): h_{t+1} = h_t +
// z_t⊙(ĥ_t − h_t), as forwardOp computes them, bit for bit.
type statesOp struct{ graph.OpBase }

func newStatesOp() statesOp { return statesOp{graph.NewOpBase(opNamespace, "States", 3)} }

// DiffWRT is false for every input: the segment takes derivatives with
// respect to the states themselves, which Gorgonia allows only for a
// differentiable op's output.
func (op statesOp) DiffWRT(n int) []bool { return make([]bool, n) }

// SymDiff returns no derivative (see DiffWRT).
func (op statesOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return make(G.Nodes, len(inputs)), nil
}

// backOp is the vector-Jacobian product of a segment's recurrence. Inputs:
// the adjoint dHp (K, S·B, H) of the states entering the
// steps from the loss, the adjoint (K, B, H) of the state leaving the
// segment, the states entering the steps (statesOp), the stacked
// activations z, r and ĥ, and the recurrent weights U_z, U_r, U_h (K, H, H).
// Output (K, 3·S·B + B, H): the adjoints dA_z, dA_r and dA_h of the gate
// pre-activations of all steps (S·B rows each), then the adjoint of the
// state entering the segment (B rows). Per step, with g the adjoint of the
// state the step leaves and h the state it enters:
//
//	dA_z = g⊙(ĥ − h)⊙z(1−z)     dA_h = g⊙z⊙(1−ĥ²)
//	d(r⊙h) = U_h·dA_h           dA_r = d(r⊙h)⊙h⊙r(1−r)
//	dh = g⊙(1−z) + d(r⊙h)⊙r + U_z·dA_z + U_r·dA_r + dHp_t
//
// With resetAfter (ĥ = tanh(p_h + r⊙(h·U_h))), q = h·U_h recomputed:
//
//	dA_r = dA_h⊙q⊙r(1−r)
//	dh = g⊙(1−z) + U_h·(dA_h⊙r) + U_z·dA_z + U_r·dA_r + dHp_t
type backOp struct {
	graph.OpBase
	resetAfter bool
}

func newBackOp(resetAfter bool) backOp {
	return backOp{graph.NewOpBase(opNamespace, opName("Backward", resetAfter), 9), resetAfter}
}

// Inputs of backOp.
const (
	backDHp = iota
	backAdjH
	backStates
	backY                       // + gate: the activations
	backU      = backY + nGates // + gate: the recurrent weights
	backInputs = backU + nGates
)

// rank3Type is the type of an op of arity rank-3 tensors to one.
func rank3Type(arity int) hm.Type {
	ts := make([]hm.Type, arity+1)
	for i := range ts {
		ts[i] = G.TensorType{Dims: 3, Of: hm.TypeVariable('a')}
	}
	return hm.NewFnType(ts...)
}

func (op forwardOp) Type() hm.Type { return rank3Type(fwdInputs) }
func (op statesOp) Type() hm.Type  { return rank3Type(3) }
func (op backOp) Type() hm.Type    { return rank3Type(backInputs) }

// shapes returns the shapes of in, checking that they are rank 3 with the
// leading (chain) and trailing (hidden) sizes of the first.
func shapes(op fmt.Stringer, in []G.DimSizer) ([]tensor.Shape, error) {
	ss := make([]tensor.Shape, len(in))
	for i, d := range in {
		s, ok := d.(tensor.Shape)
		if !ok || len(s) != 3 || (i > 0 && (s[0] != ss[0][0] || s[2] != ss[0][2])) {
			return nil, fmt.Errorf("%v: input %d of shape %v", op, i, d)
		}
		ss[i] = s
	}
	return ss, nil
}

func (op forwardOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return packedShape(op, in, []int{fwdP + gateR, fwdP + gateH}, fwdU, fwdH)
}

func (op statesOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 3 {
		return nil, fmt.Errorf("%v: %d inputs, want 3", op, len(in))
	}
	ss, err := shapes(op, in)
	if err != nil {
		return nil, err
	}
	if !ss[1].Eq(ss[2]) || ss[1][1]%ss[0][1] != 0 {
		return nil, fmt.Errorf("%v: shapes %v, %v and %v", op, ss[0], ss[1], ss[2])
	}
	return ss[1].Clone(), nil
}

func (op backOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return packedShape(op, in, []int{backStates, backY + gateZ, backY + gateR, backY + gateH}, backU, backAdjH)
}

// packedShape returns the output shape (K, 3·rows + B, H) of forwardOp or
// backOp for the input shapes in, checking them: in[0] and the inputs
// stacks of shape (K, rows, H), the recurrent weights in[u … u+2] of shape
// (K, H, H), and input b of shape (K, B, H) with B dividing rows.
func packedShape(op G.Op, in []G.DimSizer, stacks []int, u, b int) (tensor.Shape, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(in), op.Arity())
	}
	ss, err := shapes(op, in)
	if err != nil {
		return nil, err
	}
	k, rows, h, nb := ss[0][0], ss[0][1], ss[0][2], ss[b][1]
	for _, i := range stacks {
		if !ss[i].Eq(ss[0]) {
			return nil, fmt.Errorf("%v: input %d of shape %v, want %v", op, i, ss[i], ss[0])
		}
	}
	for i := u; i < u+nGates; i++ {
		if ss[i][1] != h {
			return nil, fmt.Errorf("%v: recurrent weights of shape %v", op, ss[i])
		}
	}
	if rows%nb != 0 {
		return nil, fmt.Errorf("%v: %d rows for %d sequences", op, rows, nb)
	}
	return tensor.Shape{k, nGates*rows + nb, h}, nil
}

func (op forwardOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }
func (op statesOp) Do(vals ...G.Value) (G.Value, error)  { return op.UsePreallocDo(nil, vals...) }
func (op backOp) Do(vals ...G.Value) (G.Value, error)    { return op.UsePreallocDo(nil, vals...) }

// denses returns the values as contiguous tensors (see dense).
func denses(vals []G.Value) ([]tensor.Tensor, error) {
	ts := make([]tensor.Tensor, len(vals))
	for i, v := range vals {
		t, err := dense(v)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// datas returns the data of the tensors as []T, or false if one is not.
func datas[T float32 | float64](ts []tensor.Tensor) ([][]T, bool) {
	ds := make([][]T, len(ts))
	for i, t := range ts {
		d, ok := t.Data().([]T)
		if !ok {
			return nil, false
		}
		ds[i] = d
	}
	return ds, true
}

// recurDo runs an op of this file: checks the inputs and their dtype, gets
// the output tensor of the shape that InferShape gives, and calls f64 or f32
// with the inputs' data and the output's.
func recurDo(op G.Op, prealloc G.Value, vals []G.Value, f64 func(in [][]float64, s []tensor.Shape, out []float64), f32 func(in [][]float32, s []tensor.Shape, out []float32)) (G.Value, error) {
	if len(vals) != op.Arity() {
		return nil, fmt.Errorf("%v: %d inputs, want %d", op, len(vals), op.Arity())
	}
	ts, err := denses(vals)
	if err != nil {
		return nil, err
	}
	ss := make([]tensor.Shape, len(ts))
	ds := make([]G.DimSizer, len(ts))
	for i, t := range ts {
		ss[i], ds[i] = t.Shape(), t.Shape()
	}
	shape, err := op.InferShape(ds...)
	if err != nil {
		return nil, err
	}
	if in, ok := datas[float64](ts); ok {
		t, out := graph.Output[float64](prealloc, shape, vals...)
		f64(in, ss, out)
		return t, nil
	}
	if in, ok := datas[float32](ts); ok {
		t, out := graph.Output[float32](prealloc, shape, vals...)
		f32(in, ss, out)
		return t, nil
	}
	return nil, fmt.Errorf("%v: unsupported or mixed dtypes", op)
}

// UsePreallocDo computes the op into prealloc where graph.Output allows.
func (op forwardOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return recurDo(op, prealloc, vals,
		func(in [][]float64, s []tensor.Shape, out []float64) { forward(in, s, out, op.resetAfter) },
		func(in [][]float32, s []tensor.Shape, out []float32) { forward(in, s, out, op.resetAfter) })
}

// UsePreallocDo computes the op into prealloc where graph.Output allows.
func (op statesOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return recurDo(op, prealloc, vals, states[float64], states[float32])
}

// UsePreallocDo computes the op into prealloc where graph.Output allows.
func (op backOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return recurDo(op, prealloc, vals,
		func(in [][]float64, s []tensor.Shape, out []float64) { backward(in, s, out, op.resetAfter) },
		func(in [][]float32, s []tensor.Shape, out []float32) { backward(in, s, out, op.resetAfter) })
}

// forward computes forwardOp's output out from its inputs in.
func forward[T float32 | float64](in [][]T, s []tensor.Shape, out []T, resetAfter bool) {
	k, rows, h, b := s[0][0], s[0][1], s[0][2], s[fwdH][1]
	stack := rows * h
	cur := make([]T, b*h) // the state
	rh := make([]T, b*h)  // r⊙h, or r⊙(h·U_h) with resetAfter
	for c := 0; c < k; c++ {
		o := out[c*(nGates*rows+b)*h : (c+1)*(nGates*rows+b)*h]
		u := func(gt int) []T { return in[fwdU+gt][c*h*h : (c+1)*h*h] }
		copy(cur, in[fwdH][c*b*h:(c+1)*b*h])
		// a = p + x·U into the rows of step t of gate gt (x nil: a = p +
		// rh, rh the products already made), then act(a).
		gate := func(gt, t int, x []T) []T {
			blk := o[gt*stack+t*b*h : gt*stack+(t+1)*b*h]
			copy(blk, in[fwdP+gt][c*stack+t*b*h:])
			if x != nil {
				chainProducts(blas.NoTrans, 1, b, h, h, x, u(gt), 1, blk)
			} else {
				for i, v := range rh {
					blk[i] += v
				}
			}
			if gt == gateH {
				for i, v := range blk {
					blk[i] = T(math.Tanh(float64(v)))
				}
			} else {
				for i, v := range blk {
					blk[i] = T(sigm(float64(v)))
				}
			}
			return blk
		}
		for t := 0; t < rows/b; t++ {
			z := gate(gateZ, t, cur)
			r := gate(gateR, t, cur)
			var hh []T
			if resetAfter {
				chainProducts(blas.NoTrans, 1, b, h, h, cur, u(gateH), 0, rh)
				for i, v := range rh {
					rh[i] = r[i] * v
				}
				hh = gate(gateH, t, nil)
			} else {
				for i, v := range cur {
					rh[i] = r[i] * v
				}
				hh = gate(gateH, t, rh)
			}
			for i, v := range cur {
				cur[i] = v + z[i]*(hh[i]-v)
			}
		}
		copy(o[nGates*stack:], cur)
	}
}

// states computes statesOp's output out from in = (h_0, z, ĥ).
func states[T float32 | float64](in [][]T, s []tensor.Shape, out []T) {
	k, b, h, rows := s[0][0], s[0][1], s[0][2], s[1][1]
	cur := make([]T, b*h)
	for c := 0; c < k; c++ {
		copy(cur, in[0][c*b*h:(c+1)*b*h])
		z, hh, hp := in[1][c*rows*h:(c+1)*rows*h], in[2][c*rows*h:(c+1)*rows*h], out[c*rows*h:(c+1)*rows*h]
		for t := 0; t < rows/b; t++ {
			blk := t * b * h
			copy(hp[blk:blk+b*h], cur)
			for i, v := range cur {
				cur[i] = v + z[blk+i]*(hh[blk+i]-v)
			}
		}
	}
}

// backward computes backOp's output out from its inputs in.
func backward[T float32 | float64](in [][]T, s []tensor.Shape, out []T, resetAfter bool) {
	k, rows, h, b := s[0][0], s[0][1], s[0][2], s[backAdjH][1]
	g := make([]T, b*h) // adjoint of the state leaving the step
	drh := make([]T, h)
	dh := make([]T, h)
	q, e := make([]T, h), make([]T, h) // with resetAfter: h·U_h and dA_h⊙r
	stack := rows * h
	for c := 0; c < k; c++ {
		part := func(i int) []T { return in[i][c*stack : (c+1)*stack] }
		dHp, hp := part(backDHp), part(backStates)
		z, r, hh := part(backY+gateZ), part(backY+gateR), part(backY+gateH)
		u := func(gt int) []T { return in[backU+gt][c*h*h : (c+1)*h*h] }
		uz, ur, uh := u(gateZ), u(gateR), u(gateH)
		o := out[c*(nGates*rows+b)*h : (c+1)*(nGates*rows+b)*h]
		copy(g, in[backAdjH][c*b*h:(c+1)*b*h])
		for row := rows - 1; row >= 0; row-- {
			gr := g[(row%b)*h : (row%b+1)*h]
			at := row * h
			daz, dar, dah := o[at:at+h], o[stack+at:stack+at+h], o[2*stack+at:2*stack+at+h]
			for i, gi := range gr {
				zi, hhi := z[at+i], hh[at+i]
				daz[i] = gi * (hhi - hp[at+i]) * zi * (1 - zi)
				dah[i] = gi * zi * (1 - hhi*hhi)
			}
			if resetAfter {
				gemv(blas.Trans, h, h, uh, hp[at:at+h], 0, q)
				for i, v := range dah {
					ri := r[at+i]
					e[i] = v * ri
					dar[i] = v * q[i] * ri * (1 - ri)
				}
				gemv(blas.NoTrans, h, h, uh, e, 0, drh)
				for i, gi := range gr {
					dh[i] = gi*(1-z[at+i]) + drh[i] + dHp[at+i]
				}
			} else {
				gemv(blas.NoTrans, h, h, uh, dah, 0, drh)
				for i, gi := range gr {
					ri, hi := r[at+i], hp[at+i]
					dar[i] = drh[i] * hi * ri * (1 - ri)
					dh[i] = gi*(1-z[at+i]) + drh[i]*ri + dHp[at+i]
				}
			}
			gemv(blas.NoTrans, h, h, uz, daz, 1, dh)
			gemv(blas.NoTrans, h, h, ur, dar, 1, dh)
			copy(gr, dh)
		}
		copy(o[nGates*stack:], g)
	}
}
