package bnn

import (
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// Energy is the minibatch energy of a Bayesian MLP classifier on a training
// set, for K chains at once; it implements tasks.Energy. Every model built
// from it draws its own sequence of minibatches of a fixed size, shuffled
// once per data epoch with the random source passed to Model.Next.
type Energy struct {
	net      MLP
	data     Dataset
	batch    int
	keepLast bool
}

var _ tasks.Energy = (*Energy)(nil)

// New returns the energy of net on data in minibatches of batch examples.
// The network's input width and number of classes must match the data.
func New(net MLP, data Dataset, batch int) (*Energy, error) {
	if err := net.Validate(); err != nil {
		return nil, err
	}
	if net.Inputs() != data.Inputs() || net.Classes() != data.Classes() {
		return nil, fmt.Errorf("bnn: a %v network for data of %d inputs and %d classes", net.Sizes, data.Inputs(), data.Classes())
	}
	if batch < 1 || batch > data.Len() {
		return nil, fmt.Errorf("bnn: batch size %d not in 1..%d (the data set's size)", batch, data.Len())
	}
	net.Sizes = append([]int(nil), net.Sizes...)
	return &Energy{net: net, data: data, batch: batch}, nil
}

// KeepLast returns the energy whose data epochs end with the N mod M
// examples left over as a short batch, as the authors' PyTorch loaders do
// (drop_last=False), instead of dropping them: the short batch's M' examples
// carry the weight N/M' each, so its Ũ is the usual unbiased estimate (with
// a larger variance). Models built from e itself are unchanged.
func (e *Energy) KeepLast() *Energy {
	c := *e
	c.keepLast = true
	return &c
}

// Dim implements tasks.Energy.
func (e *Energy) Dim() int { return e.net.Dim() }

// Net returns the network.
func (e *Energy) Net() MLP { return e.net }

// Batch returns the minibatch size M.
func (e *Energy) Batch() int { return e.batch }

// DataSize returns N, the number of training examples.
func (e *Energy) DataSize() int { return e.data.Len() }

// Build implements tasks.Energy. theta is the (D, K) input node of positions.
// The model's Lik is −(N/M)·Σ_m log softmax(f(x_m; θ_k))[y_m] and its Prior
// Σ_i [θ_ik²/(2σ²) + ½·log(2πσ²)], both of shape (K); its Next loads the
// next minibatch into the graph's data inputs, X of shape (M, inputs) and
// the one-hot labels of shape (1, M, classes).
func (e *Energy) Build(g *G.ExprGraph, theta *G.Node) (*tasks.Model, error) {
	net := e.net
	s := theta.Shape()
	if len(s) != 2 || s[0] != net.Dim() {
		return nil, fmt.Errorf("bnn: positions of shape %v, want (%d, K)", s, net.Dim())
	}
	dt := theta.Dtype()
	k, m, c := s[1], e.batch, net.Classes()
	x := graph.Input(g, dt, freeName(g, "bnn.X"), m, net.Inputs())
	y := graph.Input(g, dt, freeName(g, "bnn.Y"), m, c)
	logits, err := net.logits(g, theta, x, k)
	if err != nil {
		return nil, err
	}
	n := float64(e.data.Len())
	// −(N/M)·Σ_m log softmax[y_m] per chain, the labels one-hot
	lik, err := logLikelihood(logits, y, -n/float64(m))
	if err != nil {
		return nil, err
	}
	prior, err := graph.GaussianPrior(theta, net.Sigma())
	if err != nil {
		return nil, err
	}

	b, err := newBatcher(e.data, m, e.keepLast)
	if err != nil {
		return nil, err
	}
	xb := make([]float64, m*net.Inputs())
	yb := make([]int, m)
	oneHot := make([]float64, m*c)
	next := func(rng *rand.Rand) error {
		rows, err := b.next(rng, xb, yb)
		if err != nil {
			return err
		}
		// a short batch of rows < M examples: the rows after them are
		// zero and their labels too, so they add nothing, and the labels
		// of the rows weigh M/rows, so that −(N/M)·Σ becomes −(N/rows)·Σ
		clear(xb[rows*net.Inputs():])
		clear(oneHot)
		w := float64(m) / float64(rows)
		for r, l := range yb[:rows] {
			oneHot[r*c+l] = w
		}
		if err := graph.SetValue(x, xb); err != nil {
			return err
		}
		return graph.SetValue(y, oneHot)
	}
	return &tasks.Model{Lik: lik, Prior: prior, DataSize: n, Next: next, Batches: b.order}, nil
}

// logProbs builds the log-softmax of the network's logits for the K chains
// of theta (D, K) on the rows of x (M, inputs): shape (K, M, classes).
func (m MLP) logProbs(g *G.ExprGraph, theta, x *G.Node, k int) (*G.Node, error) {
	logits, err := m.logits(g, theta, x, k)
	if err != nil {
		return nil, err
	}
	return graph.LogSoftmax(logits, 2)
}

// logits builds f(x; θ_k) for the K chains: shape (K, M, classes).
//
// Layer 0 of all chains is one matrix product: the rows of θ that hold W_0
// are, row-major, the (fan_in, fan_out·K) matrix W0all whose column j·K + k
// is unit j of chain k, so X·W0all holds every chain's first layer side by
// side. Adding the biases and the activation turns it chain-first (one
// fused op, biasActOp), and the later layers are batched matrix products
// over the chains with their weights as (K, fan_in, fan_out).
func (m MLP) logits(g *G.ExprGraph, theta, x *G.Node, k int) (*G.Node, error) {
	// θ is cut in two row blocks, W_0 and everything after it, and the
	// smaller parameters are cut from the second: the gradient of every
	// slice is a zero-padded copy of the sliced node, so slicing each
	// parameter from θ itself would cost a (D, K) pad and add per
	// parameter.
	out := m.Sizes[1]
	_, ob0 := m.Offsets(0)
	w, err := graph.Slice(theta, 0, 0, ob0) // the (in, out·K) matrix W0all
	if err != nil {
		return nil, err
	}
	rest, err := graph.Slice(theta, 0, ob0, m.Dim())
	if err != nil {
		return nil, err
	}
	// block returns rows [start, end) of θ from rest.
	block := func(start, end int) (*G.Node, error) {
		if start == ob0 && end == m.Dim() {
			return rest, nil
		}
		return graph.Slice(rest, 0, start-ob0, end-ob0)
	}
	// the biases b_l of all chains: rows (out, K) of θ, as biasActOp takes them
	b, err := block(ob0, ob0+out)
	if err != nil {
		return nil, err
	}
	z, err := dataMatMul(x, w)
	if err != nil {
		return nil, err
	}
	if z, err = applyBiasAct(z, b, true, m.layerAct(0), k); err != nil {
		return nil, err
	}

	for l := 1; l < m.Layers(); l++ {
		in, out := m.Sizes[l], m.Sizes[l+1]
		ow, ob := m.Offsets(l)
		// W_l of all chains: rows (in·out, K)
		w, err := block(ow, ob)
		if err != nil {
			return nil, err
		}
		b, err := block(ob, ob+out)
		if err != nil {
			return nil, err
		}
		if z, err = applyChainMatMul(z, w, k, in, out); err != nil {
			return nil, err
		}
		if z, err = applyBiasAct(z, b, false, m.layerAct(l), k); err != nil {
			return nil, err
		}
	}
	return z, nil
}

// freeName returns base, or base#n for the first n that no node of g uses.
func freeName(g *G.ExprGraph, base string) string {
	name := base
	for n := 2; len(g.ByName(name)) > 0; n++ {
		name = fmt.Sprintf("%s#%d", base, n)
	}
	return name
}
