package bnn

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
)

// DefaultPredictBatch is the number of test examples a Predictor made by
// Predict runs through its graph at a time.
const DefaultPredictBatch = 500

// Prediction is the ensemble predictive of K chains on a data set, as the
// authors evaluate their samplers: p̂(c|x) = (1/K)·Σ_k softmax(f(x; θ_k))[c].
type Prediction struct {
	// LogProbs holds log p̂(c|x_n) for every example n and class c
	// (N × classes, row-major).
	LogProbs []float64
	// LogLik holds log p̂(y_n|x_n) of every example's true label y_n.
	LogLik []float64
	// Error is the test error: the fraction of examples whose true label
	// is not the argmax of p̂(·|x_n) (ties go to the smallest class).
	Error float64
	// NLL is −Σ_n log p̂(y_n|x_n): a sum over the data set, not a mean.
	NLL float64
	// ChainError and ChainNLL hold each chain's own test error and summed
	// NLL (of softmax(f(x; θ_k)) alone), length K: a chain gone wrong
	// shows here while the ensemble's error hides it.
	ChainError, ChainNLL []float64
}

// Predictor computes ensemble predictions of K chains of one network with
// a forward graph compiled once: the log-softmax of the logits of all
// chains on a fixed number of examples at a time (the last, partial batch
// of a data set is padded with zero rows whose outputs are ignored).
type Predictor struct {
	net      MLP
	k, batch int
	theta, x *G.Node
	out      *G.Node // (K, batch, classes) log-probabilities
	prog     *graph.Program
	xb, lp   []float64
}

// NewPredictor compiles the forward graph of net for k chains on batches of
// batch examples, in dtype dt (graph.Float64 or graph.Float32).
func NewPredictor(net MLP, k, batch int, dt graph.Dtype) (*Predictor, error) {
	if err := net.Validate(); err != nil {
		return nil, err
	}
	if k < 1 || batch < 1 {
		return nil, fmt.Errorf("bnn: predictor for %d chains and batches of %d", k, batch)
	}
	if dt != graph.Float64 && dt != graph.Float32 {
		return nil, fmt.Errorf("bnn: unsupported dtype %v", dt)
	}
	net.Sizes = append([]int(nil), net.Sizes...)
	g := G.NewGraph()
	theta := graph.Input(g, dt, "bnn.theta", net.Dim(), k)
	x := graph.Input(g, dt, "bnn.X", batch, net.Inputs())
	out, err := net.logProbs(g, theta, x, k)
	if err != nil {
		return nil, err
	}
	prog, err := graph.Compile(out)
	if err != nil {
		return nil, err
	}
	return &Predictor{
		net: net, k: k, batch: batch, theta: theta, x: x, out: out, prog: prog,
		xb: make([]float64, batch*net.Inputs()),
	}, nil
}

// Chains returns the number K of chains the predictor was compiled for.
func (p *Predictor) Chains() int { return p.k }

// Batch returns the number of examples the graph evaluates at a time.
func (p *Predictor) Batch() int { return p.batch }

// Close releases the compiled graph.
func (p *Predictor) Close() error { return p.prog.Close() }

// Predict returns the ensemble predictive of the K chains at positions
// theta (length D·K, coordinate-major) on every example of data, with its
// test error and summed negative log-likelihood.
func (p *Predictor) Predict(theta []float64, data Dataset) (*Prediction, error) {
	net, k := p.net, p.k
	if len(theta) != net.Dim()*k {
		return nil, fmt.Errorf("bnn: %d positions for %d parameters × %d chains", len(theta), net.Dim(), k)
	}
	if data.Inputs() != net.Inputs() || data.Classes() != net.Classes() {
		return nil, fmt.Errorf("bnn: a %v network for data of %d inputs and %d classes", net.Sizes, data.Inputs(), data.Classes())
	}
	if err := graph.SetValue(p.theta, theta); err != nil {
		return nil, err
	}
	n, c, in := data.Len(), net.Classes(), net.Inputs()
	pr := &Prediction{LogProbs: make([]float64, n*c), LogLik: make([]float64, n), ChainError: make([]float64, k), ChainNLL: make([]float64, k)}
	labels := make([]int, p.batch)
	logK := math.Log(float64(k))
	wrong := 0
	for start := 0; start < n; start += p.batch {
		rows := min(p.batch, n-start)
		for r := 0; r < rows; r++ {
			labels[r] = data.Example(start+r, p.xb[r*in:(r+1)*in])
		}
		clear(p.xb[rows*in:])
		if err := graph.SetValue(p.x, p.xb); err != nil {
			return nil, err
		}
		if err := p.prog.Run(); err != nil {
			return nil, err
		}
		var err error
		if p.lp, err = graph.Value(p.out, p.lp); err != nil {
			return nil, err
		}
		// p.lp[(chain·batch + r)·c + class]
		for r := 0; r < rows; r++ {
			dst := pr.LogProbs[(start+r)*c : (start+r+1)*c]
			best := 0
			for j := 0; j < c; j++ {
				mx := math.Inf(-1)
				for ch := 0; ch < k; ch++ {
					mx = math.Max(mx, p.lp[(ch*p.batch+r)*c+j])
				}
				s := 0.0
				if !math.IsInf(mx, -1) {
					for ch := 0; ch < k; ch++ {
						s += math.Exp(p.lp[(ch*p.batch+r)*c+j] - mx)
					}
				}
				dst[j] = mx + math.Log(s) - logK
				if dst[j] > dst[best] {
					best = j
				}
			}
			y := labels[r]
			pr.LogLik[start+r] = dst[y]
			pr.NLL -= dst[y]
			if best != y {
				wrong++
			}
			for ch := 0; ch < k; ch++ {
				row := p.lp[(ch*p.batch+r)*c : (ch*p.batch+r+1)*c]
				pr.ChainNLL[ch] -= row[y]
				if floats.MaxIdx(row) != y {
					pr.ChainError[ch]++
				}
			}
		}
	}
	pr.Error = float64(wrong) / float64(n)
	for ch := range pr.ChainError {
		pr.ChainError[ch] /= float64(n)
	}
	return pr, nil
}

// Predict returns the ensemble predictive of the K chains of net at
// positions theta (length D·K, coordinate-major) on data, computed in
// float64 by a Predictor compiled for the call. Compile one Predictor and
// reuse it to evaluate many positions.
func Predict(net MLP, theta []float64, k int, data Dataset) (*Prediction, error) {
	p, err := NewPredictor(net, k, min(DefaultPredictBatch, max(data.Len(), 1)), graph.Float64)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.Predict(theta, data)
}
