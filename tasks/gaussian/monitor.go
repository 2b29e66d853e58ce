package gaussian

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/samplers/diag"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// Monitor measures chains sampling a Gaussian as the paper's toy experiment
// does:
//   - kl: KL(N̂ ‖ N(μ, Σ)) of the Gaussian N̂ fitted to all samples of all
//     chains up to the current step (no burn-in, no thinning);
//   - ess: the effective sample size of the authors' code, BEAST-style with
//     auto-covariances pooled over dimensions, per chain, averaged over
//     chains (summary only);
//   - ess_min: the smallest per-dimension effective sample size over all
//     chains (Stan's, Geyer's initial monotone sequence), and rhat_max the
//     largest per-dimension split R̂ (summary only);
//   - target_lambda_min, target_lambda_max: the extreme eigenvalues of the
//     target's covariance, which decide how stiff it is (summary only).
type Monitor struct {
	g     *Gaussian
	k     int
	fit   diag.GaussianFit
	trace [][]float64 // per chain, steps × D row-major
	x     []float64
}

// NewMonitor returns a monitor of k chains sampling g.
func (g *Gaussian) NewMonitor(k int) *Monitor {
	return &Monitor{g: g, k: k, trace: make([][]float64, k), x: make([]float64, g.Dim())}
}

// Observe implements tasks.Monitor.
func (m *Monitor) Observe(step int, theta []float64) error {
	d := m.g.Dim()
	if len(theta) != d*m.k {
		return fmt.Errorf("gaussian monitor: %d positions for %d chains of dimension %d", len(theta), m.k, d)
	}
	for c := 0; c < m.k; c++ {
		for i := 0; i < d; i++ {
			m.x[i] = theta[i*m.k+c]
		}
		if err := m.fit.Add(m.x); err != nil {
			return err
		}
		m.trace[c] = append(m.trace[c], m.x...)
	}
	return nil
}

// Metrics implements tasks.Monitor.
func (m *Monitor) Metrics() ([]tasks.Metric, error) {
	kl, err := m.fit.KL(m.g.mean, m.g.cov)
	if err != nil {
		return nil, fmt.Errorf("gaussian monitor: %w", err)
	}
	return []tasks.Metric{{Name: "kl", Value: kl}}, nil
}

// Summary implements tasks.Monitor.
func (m *Monitor) Summary() ([]tasks.Metric, error) {
	ms, err := m.Metrics()
	if err != nil {
		return nil, err
	}
	d := m.g.Dim()
	n := len(m.trace[0]) / d
	chains := make([]*mat.Dense, m.k)
	for c := range chains {
		chains[c] = mat.NewDense(n, d, m.trace[c])
	}
	ms = append(ms, tasks.Metric{Name: "ess", Value: diag.MeanESSPooled(chains)})
	essMin, rhatMax := 0.0, 0.0
	col := make([][]float64, m.k)
	for i := 0; i < d; i++ {
		for c := range col {
			col[c] = make([]float64, n)
			for t := 0; t < n; t++ {
				col[c][t] = m.trace[c][t*d+i]
			}
		}
		ess, err := diag.ESS(col)
		if err != nil {
			return nil, fmt.Errorf("gaussian monitor: %w", err)
		}
		rhat, err := diag.SplitRhat(col)
		if err != nil {
			return nil, fmt.Errorf("gaussian monitor: %w", err)
		}
		if i == 0 || ess < essMin {
			essMin = ess
		}
		if rhat > rhatMax {
			rhatMax = rhat
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(m.g.cov, false) {
		return nil, fmt.Errorf("gaussian monitor: eigenvalues of the target covariance did not converge")
	}
	lambda := eig.Values(nil)
	return append(ms, tasks.Metric{Name: "ess_min", Value: essMin}, tasks.Metric{Name: "rhat_max", Value: rhatMax},
		tasks.Metric{Name: "target_lambda_min", Value: lambda[0]}, tasks.Metric{Name: "target_lambda_max", Value: lambda[len(lambda)-1]}), nil
}
