package gaussian

import (
	"errors"
	"fmt"
	"math"

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
//   - rhat_rank_max, ess_bulk_min, ess_tail_min: the largest per-dimension
//     rank-normalised split R̂ and the smallest bulk- and tail-ESS over all
//     chains, as Stan and ArviZ report them (Vehtari et al. 2021; summary
//     only);
//   - target_lambda_min, target_lambda_max: the extreme eigenvalues of the
//     target's covariance, which decide how stiff it is (summary only).
//
// A chain that strays further than Limit from the target's mean in any
// coordinate has diverged: Observe reports it as a *tasks.DivergenceError
// naming the chain and step, before such positions can spoil the fitted
// Gaussian (whose covariance would stop being numerically positive
// definite long before the samplers' own bound, tasks.Runaway, is reached).
type Monitor struct {
	g     *Gaussian
	k     int
	limit float64
	fit   diag.GaussianFit
	trace [][]float64 // per chain, steps × D row-major
	x     []float64
}

// RunawaySDs is how many standard deviations of the target (its largest
// marginal one, and at least 1) a chain may stray from the mean before the
// monitor counts it as diverged: at a million standard deviations the
// chain's energy is about 5·10¹¹ above the mode, where no sampler of the
// target goes, and the fitted covariance is still well enough conditioned
// to be scored.
const RunawaySDs = 1e6

// NewMonitor returns a monitor of k chains sampling g.
func (g *Gaussian) NewMonitor(k int) *Monitor {
	sd := 1.0
	for i := 0; i < g.Dim(); i++ {
		sd = math.Max(sd, math.Sqrt(g.cov.At(i, i)))
	}
	return &Monitor{g: g, k: k, limit: RunawaySDs * sd, trace: make([][]float64, k), x: make([]float64, g.Dim())}
}

// Limit is the distance from the target's mean, in any one coordinate,
// beyond which a chain counts as diverged: RunawaySDs times the largest
// marginal standard deviation of the target, or RunawaySDs if that is less
// than 1.
func (m *Monitor) Limit() float64 { return m.limit }

// Observe implements tasks.Monitor. It returns a *tasks.DivergenceError,
// and records nothing of the step, if a chain is beyond Limit.
func (m *Monitor) Observe(step int, theta []float64) error {
	d := m.g.Dim()
	if len(theta) != d*m.k {
		return fmt.Errorf("gaussian monitor: %d positions for %d chains of dimension %d", len(theta), m.k, d)
	}
	for c := 0; c < m.k; c++ {
		for i := 0; i < d; i++ {
			if dist := math.Abs(theta[i*m.k+c] - m.g.mean[i]); !(dist <= m.limit) {
				return &tasks.DivergenceError{Step: step, Chain: c, What: "position",
					Why: fmt.Sprintf("%.3g from the target's mean in coordinate %d, beyond the Gaussian monitor's limit of %.3g", dist, i, m.limit)}
			}
		}
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
//
// The KL divergence needs a fitted covariance of full rank: more samples
// (chains × steps) than dimensions; with fewer it returns an error saying
// so.
func (m *Monitor) Metrics() ([]tasks.Metric, error) {
	if n, d := m.fit.N(), m.g.Dim(); n <= d {
		return nil, fmt.Errorf("gaussian monitor: the kl of a fitted %d-D Gaussian needs more than %d samples (chains × steps), have %d: score later or run more chains", d, d, n)
	}
	kl, err := m.fit.KL(m.g.mean, m.g.cov)
	if errors.Is(err, diag.ErrNotPositiveDefinite) {
		return nil, fmt.Errorf("gaussian monitor: the samples' fitted covariance is singular (chains stuck or collapsed onto a subspace?): %w", err)
	}
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
	pooled, err := diag.MeanESSPooled(chains)
	if err != nil {
		return nil, fmt.Errorf("gaussian monitor: %w", err)
	}
	ms = append(ms, tasks.Metric{Name: "ess", Value: pooled})
	worst := make([]float64, len(coordDiagnostics))
	col := make([][]float64, m.k)
	for i := 0; i < d; i++ {
		for c := range col {
			col[c] = make([]float64, n)
			for t := 0; t < n; t++ {
				col[c][t] = m.trace[c][t*d+i]
			}
		}
		for j, cd := range coordDiagnostics {
			v, err := cd.f(col)
			if err != nil {
				return nil, fmt.Errorf("gaussian monitor: %w", err)
			}
			if i == 0 || (cd.largest && v > worst[j]) || (!cd.largest && v < worst[j]) {
				worst[j] = v
			}
		}
	}
	for j, cd := range coordDiagnostics {
		ms = append(ms, tasks.Metric{Name: cd.name, Value: worst[j]})
	}
	var eig mat.EigenSym
	if !eig.Factorize(m.g.cov, false) {
		return nil, fmt.Errorf("gaussian monitor: eigenvalues of the target covariance did not converge")
	}
	lambda := eig.Values(nil)
	return append(ms, tasks.Metric{Name: "target_lambda_min", Value: lambda[0]},
		tasks.Metric{Name: "target_lambda_max", Value: lambda[len(lambda)-1]}), nil
}

// coordDiagnostics are the diagnostics that Summary computes on the chains
// of each coordinate and reports at their worst over the coordinates: the
// smallest effective sample size, the largest R̂.
var coordDiagnostics = []struct {
	name    string
	f       func(chains [][]float64) (float64, error)
	largest bool // the worst value is the largest, not the smallest
}{
	{"ess_min", diag.ESS, false},
	{"rhat_max", diag.SplitRhat, true},
	{"rhat_rank_max", diag.RankRhat, true},
	{"ess_bulk_min", diag.BulkESS, false},
	{"ess_tail_min", diag.TailESS, false},
}
