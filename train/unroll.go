package train

import (
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
)

type graphNodes = G.Nodes

// buildVJP builds, for a block of rows, the step graph and its
// vector-Jacobian product: with adjoints a_θ, a_p of (θ_{t+1}, p_{t+1}) fed
// in, it outputs the adjoints of (θ_t, p_t) and, summed over blocks, the
// gradient w.r.t. every network weight.
func (t *Trainer) buildVJP(rows int) (in, out, sum G.Nodes, err error) {
	nn := t.nn
	nn.StepSize = t.eta
	sg, err := BuildStep(nn, rows, graph.Float64, StepOptions{FrozenInputs: t.frozen})
	if err != nil {
		return nil, nil, nil, err
	}
	t.graphs = append(t.graphs, sg)
	aTheta := graph.Input(sg.Graph, graph.Float64, "adj.theta", rows)
	aP := graph.Input(sg.Graph, graph.Float64, "adj.p", rows)
	params := append(sg.QNet.Params(), sg.DNet.Params()...)
	wrt := append(G.Nodes{sg.Theta, sg.P}, params...)
	grads, err := graph.VJP(G.Nodes{sg.ThetaNext, sg.PNext}, G.Nodes{aTheta, aP}, wrt...)
	if err != nil {
		return nil, nil, nil, err
	}
	in = append(sg.Inputs(), aTheta, aP)
	if t.frozen {
		in = append(in, sg.PIn, sg.PNextIn, sg.QDIn)
	}
	return in, grads[:2], grads[2:], nil
}

// backward back-propagates the adjoints adj (∂L/∂θ_j for states j in
// (w.a, w.b]) through the window's steps and adds ∂L/∂φ to grad. The state
// at the window's start is cut: nothing flows past it.
func (t *Trainer) backward(w window, adj map[int][]float64, grad [][]float64) error {
	any := false
	for j := w.a + 1; j <= w.b; j++ {
		any = any || adj[j] != nil
	}
	if !any {
		return nil
	}
	if t.back[0] == nil {
		for i := range t.back {
			t.back[i] = make([]float64, t.n)
		}
	}
	for _, v := range t.back {
		clear(v)
	}
	aTheta, aP, gTheta, gP := t.back[0], t.back[1], t.back[2], t.back[3]
	var qd []float64 // the Q_f that D_f sees, on the frozen path
	if t.frozen {
		qd = make([]float64, t.n)
	}
	u, gfeat := t.feat[0], t.feat[1] // the forward pass is done with them
	step := make([][]float64, len(grad))
	for i := range grad {
		step[i] = make([]float64, len(grad[i]))
	}
	for s := w.b - 1; s >= w.a; s-- {
		if v := adj[s+1]; v != nil {
			for i := range aTheta {
				aTheta[i] += v[i]
			}
		}
		r := w.recs[s-w.a]
		f := r.features(&t.nn, t.prob.Target.DataSize(), u, gfeat)
		r.noiseInto(t.noise)
		in := [][]float64{r.theta, r.p, f.U, f.DU, f.GFeat, r.grad, t.noise, aTheta, aP}
		if t.frozen {
			pNext := w.pEnd
			if s+1 < w.b {
				pNext = w.recs[s+1-w.a].p
			}
			t.nn.QF(f.U, r.p, qd)
			in = append(in, r.p, pNext, qd)
		}
		if err := t.vjp.Run(in, [][]float64{gTheta, gP}, step); err != nil {
			return err
		}
		for i := range grad {
			for j, v := range step[i] {
				grad[i][j] += v
			}
		}
		aTheta, gTheta = gTheta, aTheta
		aP, gP = gP, aP
	}
	return nil
}

// sync copies the trained weights into every step graph.
func (t *Trainer) sync() error {
	for _, sg := range t.graphs {
		if err := sg.QNet.Sync(); err != nil {
			return err
		}
		if err := sg.DNet.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// rowsOf returns the positions and gradients of the given chains as rows
// (chains × D) from coordinate-major vectors, in the trainer's two row
// buffers (valid until the next call).
func (t *Trainer) rowsOf(theta, grad []float64, chains []int) (*mat.Dense, *mat.Dense) {
	reuse(&t.rowPos, len(chains), t.d)
	reuse(&t.rowGrad, len(chains), t.d)
	for r, c := range chains {
		pos, g := t.rowPos.RawRowView(r), t.rowGrad.RawRowView(r)
		for i := range pos {
			pos[i] = theta[i*t.k+c]
			g[i] = grad[i*t.k+c]
		}
	}
	return &t.rowPos, &t.rowGrad
}

// coordMajor scatters rows (chains × D) into a coordinate-major vector from
// t.vector, zero at the chains not given.
func (t *Trainer) coordMajor(rows *mat.Dense, chains []int) []float64 {
	v := t.vector()
	if len(chains) < t.k {
		clear(v)
	}
	for r, c := range chains {
		row := rows.RawRowView(r)
		for i, x := range row {
			v[i*t.k+c] = x
		}
	}
	return v
}

// release gives the adjoints of the states in (a, b] back for reuse and
// forgets them, unless a test records the unroll.
func (t *Trainer) release(adj map[int][]float64, a, b int) {
	if t.record != nil {
		return
	}
	for j := a + 1; j <= b; j++ {
		if v := adj[j]; v != nil {
			t.spare = append(t.spare, v)
			delete(adj, j)
		}
	}
}

func allChains(k int) []int {
	cs := make([]int, k)
	for i := range cs {
		cs[i] = i
	}
	return cs
}

func clone(x []float64) []float64 { return append([]float64(nil), x...) }
