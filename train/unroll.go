package train

import (
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
)

type graphNodes = G.Nodes

// buildVJP builds, for a block of rows, the step graph and its
// vector-Jacobian product: with adjoints a_θ, a_p of (θ_{t+1}, p_{t+1}) fed
// in, it outputs the adjoints of (θ_t, p_t) and, summed over blocks, the
// gradient w.r.t. every network weight.
func (t *Trainer) buildVJP(rows int) (in, out, sum G.Nodes, err error) {
	sg, err := samplers.BuildStep(t.nn, rows, graph.Float64, samplers.StepOptions{FrozenInputs: t.frozen})
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
	aTheta, aP := make([]float64, t.n), make([]float64, t.n)
	gTheta, gP := make([]float64, t.n), make([]float64, t.n)
	qd := make([]float64, t.n) // the Q_f that D_f sees, on the frozen path
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
		in := [][]float64{r.theta, r.p, r.u, r.du, r.gfeat, r.grad, r.noise, aTheta, aP}
		if t.frozen {
			pNext := w.pEnd
			if s+1 < w.b {
				pNext = w.recs[s+1-w.a].p
			}
			t.nn.QF(r.u, r.p, qd)
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
// (chains × D) from coordinate-major vectors.
func (t *Trainer) rowsOf(theta, grad []float64, chains []int) (*mat.Dense, *mat.Dense) {
	pos := mat.NewDense(len(chains), t.d, nil)
	g := mat.NewDense(len(chains), t.d, nil)
	for r, c := range chains {
		for i := 0; i < t.d; i++ {
			pos.Set(r, i, theta[i*t.k+c])
			g.Set(r, i, grad[i*t.k+c])
		}
	}
	return pos, g
}

// coordMajor scatters rows (chains × D) back into a coordinate-major vector.
func (t *Trainer) coordMajor(rows *mat.Dense, chains []int) []float64 {
	v := make([]float64, t.n)
	for r, c := range chains {
		for i := 0; i < t.d; i++ {
			v[i*t.k+c] = rows.At(r, i)
		}
	}
	return v
}

func allChains(k int) []int {
	cs := make([]int, k)
	for i := range cs {
		cs[i] = i
	}
	return cs
}

func clone(x []float64) []float64 { return append([]float64(nil), x...) }
