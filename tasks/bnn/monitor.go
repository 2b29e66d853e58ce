package bnn

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// Names of the metrics a Monitor reports.
const (
	MetricError       = "test_error"         // error of the ensemble of the K chains at the latest step
	MetricNLL         = "test_nll"           // summed NLL of that ensemble
	MetricErrorChain  = "test_error_chain"   // mean over the chains of each chain's own error
	MetricNLLChain    = "test_nll_chain"     // mean over the chains of each chain's own summed NLL
	MetricNLLChainMax = "test_nll_chain_max" // the largest chain's own summed NLL: the worst chain
	// MetricWeightRMS followed by a layer number l = 1, 2, … names the
	// root mean square of layer l's weights (not its biases) over all K
	// chains: under a ReLU network's rescaling symmetry a chain may grow
	// one layer and shrink the next at the same fit, while growth of every
	// layer makes each chain's predictive more confident.
	MetricWeightRMS = "weight_rms_"
)

// MonitorConfig configures a Monitor.
type MonitorConfig struct {
	// Batch is the number of test examples the predictive graph
	// evaluates at a time (when zero, DefaultPredictBatch or the test
	// set's size if smaller).
	Batch int
	// Float32 evaluates the predictive graph in float32 instead of
	// float64.
	Float32 bool
}

// Monitor measures K chains sampling a Bayesian MLP by the authors' MNIST
// protocol; it implements tasks.Monitor. Observe keeps the latest
// positions; Metrics evaluates the ensemble predictive of the K chains at
// those positions on the test set and reports test_error (1 − accuracy of
// the argmax of the mean predictive probability) and test_nll (the negative
// log of the mean predictive probability of the true label, summed over the
// test set); test_error_chain and test_nll_chain, the chains' own error
// and NLL averaged over the chains, test_nll_chain_max, the worst
// chain's NLL (a chain gone wrong raises it while the ensemble's error
// barely moves), and weight_rms_1, weight_rms_2, … of the layers. As in
// the authors' protocol, nothing is averaged over time, so the monitor
// implements tasks.Resumer: a run stopped and resumed restores it from the
// positions alone. It implements tasks.Blocker with the layers' weights,
// whose kinetic temperatures cmd/sample then reports.
type Monitor struct {
	net  MLP
	k    int
	test Dataset
	pred *Predictor

	theta    []float64
	step     int // step of the latest observation; 0 before the first
	last     *Prediction
	lastStep int // step of last

	metrics     []tasks.Metric
	metricsStep int
}

var (
	_ tasks.Resumer = (*Monitor)(nil)
	_ tasks.Blocker = (*Monitor)(nil)
)

// Blocks implements tasks.Blocker: the weights of each layer l = 1, 2, …,
// named "w1", "w2", … (the biases in no block).
func (m *Monitor) Blocks() []tasks.Block {
	bs := make([]tasks.Block, m.net.Layers())
	for l := range bs {
		w, b := m.net.Offsets(l)
		bs[l] = tasks.Block{Name: fmt.Sprintf("w%d", l+1), Lo: w, Hi: b}
	}
	return bs
}

// NewMonitor returns a monitor of k chains of net evaluated on test.
func NewMonitor(net MLP, k int, test Dataset, cfg MonitorConfig) (*Monitor, error) {
	if err := net.Validate(); err != nil {
		return nil, err
	}
	if test.Len() < 1 {
		return nil, fmt.Errorf("bnn: monitor on an empty test set")
	}
	if cfg.Batch < 0 {
		return nil, fmt.Errorf("bnn: monitor config with batch %d, want ≥ 0", cfg.Batch)
	}
	if cfg.Batch == 0 {
		cfg.Batch = min(DefaultPredictBatch, test.Len())
	}
	dt := graph.Float64
	if cfg.Float32 {
		dt = graph.Float32
	}
	if test.Inputs() != net.Inputs() || test.Classes() != net.Classes() {
		return nil, fmt.Errorf("bnn: a %v network for test data of %d inputs and %d classes", net.Sizes, test.Inputs(), test.Classes())
	}
	p, err := NewPredictor(net, k, cfg.Batch, dt)
	if err != nil {
		return nil, err
	}
	return &Monitor{net: p.net, k: k, test: test, pred: p, theta: make([]float64, p.net.Dim()*k)}, nil
}

// Observe implements tasks.Monitor: it keeps a copy of the positions.
func (m *Monitor) Observe(step int, theta []float64) error {
	if len(theta) != len(m.theta) {
		return fmt.Errorf("bnn monitor: %d positions for %d parameters × %d chains", len(theta), m.net.Dim(), m.k)
	}
	spans.For(len(theta), func(lo, hi int) { copy(m.theta[lo:hi], theta[lo:hi]) })
	m.step = step
	m.last = nil
	return nil
}

// Resume implements tasks.Resumer: the monitor keeps only the latest
// positions, so observing the positions a run stopped at restores it.
func (m *Monitor) Resume(step int, theta []float64) error {
	m.metrics = nil
	return m.Observe(step, theta)
}

// latest returns the prediction at the latest positions, computing it once
// per observation.
func (m *Monitor) latest() (*Prediction, error) {
	if m.last != nil && m.lastStep == m.step {
		return m.last, nil
	}
	pr, err := m.pred.Predict(m.theta, m.test)
	if err != nil {
		return nil, err
	}
	m.last, m.lastStep = pr, m.step
	return pr, nil
}

// Metrics implements tasks.Monitor: test_error and test_nll of the ensemble
// at the latest positions, test_error_chain, test_nll_chain and
// test_nll_chain_max of its chains, then weight_rms_l of each layer l.
func (m *Monitor) Metrics() ([]tasks.Metric, error) {
	if m.step == 0 {
		return nil, fmt.Errorf("bnn monitor: no positions observed yet")
	}
	pr, err := m.latest()
	if err != nil {
		return nil, err
	}
	ms := []tasks.Metric{
		{Name: MetricError, Value: pr.Error}, {Name: MetricNLL, Value: pr.NLL},
		{Name: MetricErrorChain, Value: stat.Mean(pr.ChainError, nil)},
		{Name: MetricNLLChain, Value: stat.Mean(pr.ChainNLL, nil)},
		{Name: MetricNLLChainMax, Value: floats.Max(pr.ChainNLL)},
	}
	ms = append(ms, m.weightRMS()...)
	m.metrics, m.metricsStep = ms, m.step
	return append([]tasks.Metric(nil), ms...), nil
}

// weightRMS returns the weight_rms_l metrics of the latest positions.
func (m *Monitor) weightRMS() []tasks.Metric {
	var ms []tasks.Metric
	for l, b := range m.Blocks() {
		// coordinate-major: the K chains' values of coordinate i are
		// theta[i·K : (i+1)·K], so a layer's weights are one span
		w := m.theta[b.Lo*m.k : b.Hi*m.k]
		ms = append(ms, tasks.Metric{Name: fmt.Sprintf("%s%d", MetricWeightRMS, l+1), Value: math.Sqrt(floats.Dot(w, w) / float64(len(w)))})
	}
	return ms
}

// Summary implements tasks.Monitor: the metrics at the latest positions (the
// last ones Metrics returned if no step was observed since).
func (m *Monitor) Summary() ([]tasks.Metric, error) {
	if m.metrics != nil && m.metricsStep == m.step {
		return append([]tasks.Metric(nil), m.metrics...), nil
	}
	return m.Metrics()
}

// Prediction returns the ensemble prediction at the latest observed
// positions.
func (m *Monitor) Prediction() (*Prediction, error) {
	if m.step == 0 {
		return nil, fmt.Errorf("bnn monitor: no positions observed yet")
	}
	return m.latest()
}

// Close releases the compiled predictive graph.
func (m *Monitor) Close() error { return m.pred.Close() }
