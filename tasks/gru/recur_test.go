package gru

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/graph/graphtest"
)

// tinyGRU is a plain forward pass of S steps of the GRU for K chains and B
// sequences, from the pre-activation inputs p (per gate, (K, S·B, H)), the
// recurrent weights u (per gate, (K, H, H)) and the state h0 (K, B, H). It
// returns the activations (per gate, stacked like p), the states entering
// the steps (stacked) and the state after the last. With resetAfter the
// candidate is tanh(p_h + r⊙(h·U_h)), else tanh(p_h + (r⊙h)·U_h).
func tinyGRU(k, s, b, h int, p, u [nGates][]float64, h0 []float64, resetAfter bool) (y [nGates][]float64, hp, hOut []float64) {
	for g := range y {
		y[g] = make([]float64, k*s*b*h)
	}
	hp = make([]float64, k*s*b*h)
	hOut = append([]float64(nil), h0...)
	for c := 0; c < k; c++ {
		for t := 0; t < s; t++ {
			for r := 0; r < b; r++ {
				row := (c*s*b + t*b + r) * h
				cur := hOut[(c*b+r)*h : (c*b+r+1)*h]
				copy(hp[row:row+h], cur)
				prod := func(g int, x []float64, j int) float64 { // (x·U_g)_j
					a := 0.0
					for i, v := range x {
						a += v * u[g][(c*h+i)*h+j]
					}
					return a
				}
				pre := func(g int, x []float64, j int) float64 { return p[g][row+j] + prod(g, x, j) }
				rh := make([]float64, h)
				for j := 0; j < h; j++ {
					y[gateZ][row+j] = sigm(pre(gateZ, cur, j))
					y[gateR][row+j] = sigm(pre(gateR, cur, j))
					rh[j] = y[gateR][row+j] * cur[j]
				}
				for j := 0; j < h; j++ {
					if resetAfter {
						y[gateH][row+j] = math.Tanh(p[gateH][row+j] + y[gateR][row+j]*prod(gateH, cur, j))
					} else {
						y[gateH][row+j] = math.Tanh(pre(gateH, rh, j))
					}
				}
				for j := 0; j < h; j++ {
					cur[j] += y[gateZ][row+j] * (y[gateH][row+j] - cur[j])
				}
			}
		}
	}
	return y, hp, hOut
}

// forwardOp gives the activations and the state after the segment of a
// plain forward pass, statesOp rebuilds its states, and backOp's adjoints of
// the pre-activations and of the entering state are the derivatives of
// F = ⟨dHp, states entering the steps⟩ + ⟨adjH, state after the segment⟩
// by central differences (the pre-activation inputs enter the
// pre-activations additively), with several chains and sequences, in float64;
// for both placements of the reset gate.
func TestRecurrenceOps(t *testing.T) {
	for _, resetAfter := range []bool{false, true} {
		t.Run(map[bool]string{false: "reset-before", true: "reset-after"}[resetAfter], func(t *testing.T) { checkRecurrenceOps(t, resetAfter) })
	}
}

func checkRecurrenceOps(t *testing.T, resetAfter bool) {
	const k, s, b, h = 2, 3, 2, 4
	sin := func(n, seed int, scale float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = scale * math.Sin(float64(7*i+3*seed+1))
		}
		return x
	}
	var p, u [nGates][]float64
	for g := range p {
		p[g], u[g] = sin(k*s*b*h, g, 1), sin(k*h*h, 10+g, 0.8)
	}
	h0, dHp, adjH := sin(k*b*h, 20, 0.9), sin(k*s*b*h, 21, 1), sin(k*b*h, 22, 1)
	f := func() (float64, error) {
		_, hp, hOut := tinyGRU(k, s, b, h, p, u, h0, resetAfter)
		v := 0.0
		for i := range hp {
			v += dHp[i] * hp[i]
		}
		for i := range hOut {
			v += adjH[i] * hOut[i]
		}
		return v, nil
	}
	y, hp, hOut := tinyGRU(k, s, b, h, p, u, h0, resetAfter)

	g := G.NewGraph()
	input := func(name string, data []float64, shape ...int) *G.Node {
		n := graph.Input(g, graph.Float64, name, shape...)
		copy(graphtest.Data(n), data)
		return n
	}
	in := G.Nodes{input("dHp", dHp, k, s*b, h), input("adjH", adjH, k, b, h), input("states", hp, k, s*b, h)}
	for gt := range y {
		in = append(in, input(paramNames[kU+gt]+"y", y[gt], k, s*b, h))
	}
	for gt := range u {
		in = append(in, input(paramNames[kU+gt], u[gt], k, h, h))
	}
	hIn := input("h0", h0, k, b, h)
	fwIn := G.Nodes{}
	for gt := range p {
		fwIn = append(fwIn, input(paramNames[kB+gt]+"p", p[gt], k, s*b, h))
	}
	fwd := G.Must(G.ApplyOp(newForwardOp(resetAfter), append(append(fwIn, in[backU:]...), hIn)...))
	states := G.Must(G.ApplyOp(newStatesOp(), hIn, in[backY+gateZ], in[backY+gateH]))
	back := G.Must(G.ApplyOp(newBackOp(resetAfter), in...))
	prog, err := graph.Compile(fwd, states, back)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	if got, _ := graph.Value(states, nil); relErr(got, hp) != 0 {
		t.Errorf("statesOp: states %v, want %v", got, hp)
	}
	fout, err := graph.Value(fwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	stacks, last := unpackValue(fout, k, s*b, b, h)
	for gt := range y {
		if e := relErr(stacks[gt], y[gt]); e > 1e-15 {
			t.Errorf("forwardOp: activations of gate %d: error %.3g", gt, e)
		}
	}
	if e := relErr(last, hOut); e > 1e-15 {
		t.Errorf("forwardOp: state after the segment: error %.3g", e)
	}
	out, err := graph.Value(back, nil)
	if err != nil {
		t.Fatal(err)
	}
	dA, dh0 := unpackValue(out, k, s*b, b, h)
	grads := append(dA[:], dh0)
	res, err := graphtest.CheckGradient(f, [][]float64{p[gateZ], p[gateR], p[gateH], h0}, grads, 1e-6, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Worst > 1e-8 {
		t.Errorf("backOp: %v", res)
	}
}

// unpackValue splits the value of forwardOp or backOp, (K, 3·rows + B, H),
// into its per-gate stacks (K, rows, H) and its last B rows (K, B, H).
func unpackValue(v []float64, k, rows, b, h int) (stacks [nGates][]float64, last []float64) {
	for c := 0; c < k; c++ {
		at := c * (nGates*rows + b) * h
		for gt := range stacks {
			stacks[gt] = append(stacks[gt], v[at+gt*rows*h:at+(gt+1)*rows*h]...)
		}
		last = append(last, v[at+nGates*rows*h:at+(nGates*rows+b)*h]...)
	}
	return stacks, last
}
