package gru

import (
	"fmt"

	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/music"
)

// Names of the metrics a Monitor reports, in nats per frame.
const (
	MetricTestNLL      = "test_nll"       // NLL of the ensemble predictive of the K chains on the test split
	MetricTestNLLChain = "test_nll_chain" // mean over the chains of each chain's NLL on the test split
	MetricValidNLL     = "valid_nll"      // NLL of the ensemble predictive on the validation split
)

// Monitor measures K chains sampling a Bayesian GRU: Observe keeps the
// latest positions, and Metrics scores them (see Score) on the test split —
// test_nll, the negative log-likelihood per frame of the ensemble predictive
// of the K chains, and test_nll_chain, that of the chains on average — and,
// when the monitor has a validation split, valid_nll, the ensemble's on it.
// It implements tasks.Monitor and tasks.Resumer.
//
// Scoring a split runs the whole split forward for every chain (with a
// Scorer), so Metrics costs seconds; Observe costs a copy.
type Monitor struct {
	sc          *Scorer
	k, d        int
	test, valid music.Split
	theta       []float64
	step        int
	metrics     []tasks.Metric
	metricsStep int
}

var _ tasks.Resumer = (*Monitor)(nil)

// NewMonitor returns a monitor of the chains of a GRU configured by cfg
// (Hidden, Chains, Segment, Dtype), scored on test and, unless valid is
// empty, valid, with a Scorer running batch sequences side by side
// (DefaultScoreBatch when zero).
func NewMonitor(cfg Config, test, valid music.Split, batch int) (*Monitor, error) {
	if len(test) == 0 {
		return nil, fmt.Errorf("gru: monitor with no test sequences")
	}
	sc, err := NewScorer(cfg, batch)
	if err != nil {
		return nil, err
	}
	d, k := sc.layout.Dim(), sc.cfg.Chains
	return &Monitor{sc: sc, k: k, d: d, test: test, valid: valid, theta: make([]float64, d*k)}, nil
}

// Observe implements tasks.Monitor: it keeps a copy of the positions.
func (m *Monitor) Observe(step int, theta []float64) error {
	if len(theta) != len(m.theta) {
		return fmt.Errorf("gru monitor: %d positions for %d parameters × %d chains", len(theta), m.d, m.k)
	}
	copy(m.theta, theta)
	m.step = step
	return nil
}

// Resume implements tasks.Resumer: the monitor keeps only the latest
// positions, so observing the positions a run stopped at restores it.
func (m *Monitor) Resume(step int, theta []float64) error {
	m.metrics = nil
	return m.Observe(step, theta)
}

// Metrics implements tasks.Monitor: test_nll, test_nll_chain and, with a
// validation split, valid_nll at the latest positions.
func (m *Monitor) Metrics() ([]tasks.Metric, error) {
	if m.step == 0 {
		return nil, fmt.Errorf("gru monitor: no positions observed yet")
	}
	if m.metrics != nil && m.metricsStep == m.step {
		return append([]tasks.Metric(nil), m.metrics...), nil
	}
	s, err := m.sc.Score(m.theta, m.test)
	if err != nil {
		return nil, err
	}
	ms := []tasks.Metric{{Name: MetricTestNLL, Value: s.Ensemble}, {Name: MetricTestNLLChain, Value: s.Chain}}
	if len(m.valid) > 0 {
		v, err := m.sc.Score(m.theta, m.valid)
		if err != nil {
			return nil, err
		}
		ms = append(ms, tasks.Metric{Name: MetricValidNLL, Value: v.Ensemble})
	}
	m.metrics, m.metricsStep = ms, m.step
	return append([]tasks.Metric(nil), ms...), nil
}

// Summary implements tasks.Monitor: the metrics at the latest positions.
func (m *Monitor) Summary() ([]tasks.Metric, error) { return m.Metrics() }

// Close releases the compiled scorer.
func (m *Monitor) Close() error { return m.sc.Close() }
