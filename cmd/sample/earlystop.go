package main

import (
	"math"

	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/gru"
)

// earlyStop follows a run's validation NLL, as the paper's early stopping
// does: the best valid_nll so far, the step it was scored at and the test
// NLL there, and how many evaluations have gone by since it.
type earlyStop struct {
	seen, stopped bool
	valid, test   float64
	step, since   int
}

// observe takes the metrics of an evaluation at step and reports whether
// patience (> 0) evaluations in a row have now gone by without a better
// valid_nll. Without valid_nll among the metrics it does nothing.
func (e *earlyStop) observe(step int, ms []tasks.Metric, patience int) bool {
	valid, test := math.NaN(), math.NaN()
	for _, m := range ms {
		switch m.Name {
		case gru.MetricValidNLL:
			valid = m.Value
		case gru.MetricTestNLL:
			test = m.Value
		}
	}
	if math.IsNaN(valid) {
		return false
	}
	if !e.seen || valid < e.valid {
		e.seen, e.valid, e.test, e.step, e.since = true, valid, test, step, 0
		return false
	}
	e.since++
	e.stopped = patience > 0 && e.since >= patience
	return e.stopped
}

// summarise adds the best validation NLL, its step and the test NLL at that
// step to a run's summary, when the run scored a validation split.
func (e *earlyStop) summarise(summary map[string]any) {
	if !e.seen {
		return
	}
	summary["best_valid_nll"] = e.valid
	summary["best_valid_step"] = e.step
	summary["test_nll_at_best_valid"] = e.test
	summary["stopped_early"] = e.stopped
}
