package gaussian

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/samplers"
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
// A chain that strays further than its limit from the target's mean in
// any coordinate (RunawaySDs times the target's largest marginal standard
// deviation, or RunawaySDs if that is less than 1) has diverged: Observe
// reports it as a *samplers.DivergenceError naming the chain and step, before
// such positions can spoil the fitted Gaussian (whose covariance would
// stop being numerically positive definite long before the samplers' own
// bound, samplers.Runaway, is reached).
//
// The monitor keeps every position, 8·k·steps·D bytes, for the summary.
type Monitor struct {
	g     *Gaussian
	k     int
	limit float64
	fit   diag.GaussianFit
	draws *diag.Draws // every chain's positions, in (chain, step, dim) order; nil if k < 1
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
	m := &Monitor{g: g, k: k, limit: RunawaySDs * sd}
	if k >= 1 {
		m.draws = diag.NewDraws(k, 0, g.Dim())
	}
	return m
}

// Observe implements tasks.Monitor. It returns a *samplers.DivergenceError,
// and records nothing of the step, if a chain is beyond the monitor's
// limit.
func (m *Monitor) Observe(step int, theta []float64) error {
	d := m.g.Dim()
	if m.k < 1 || len(theta) != d*m.k {
		return fmt.Errorf("gaussian monitor: %d positions for %d chains of dimension %d", len(theta), m.k, d)
	}
	for c := 0; c < m.k; c++ {
		for i := 0; i < d; i++ {
			if dist := math.Abs(theta[i*m.k+c] - m.g.mean[i]); !(dist <= m.limit) {
				return &samplers.DivergenceError{Step: step, Chain: c, What: "position",
					Why: fmt.Sprintf("%.3g from the target's mean in coordinate %d, beyond the Gaussian monitor's limit of %.3g", dist, i, m.limit)}
			}
		}
	}
	if err := m.draws.AppendCoordinateMajor(theta); err != nil {
		return err
	}
	_, t, _ := m.draws.Dims()
	for c := 0; c < m.k; c++ {
		if err := m.fit.Add(m.draws.Draw(c, t-1)); err != nil {
			return err
		}
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
//
// The per-coordinate diagnostics are computed for the coordinates in
// parallel (diag.Draws.ForEachCoordinate), each coordinate's draws sorted
// once for its rank-normalised R̂, bulk- and tail-ESS
// (diag.RankDiagnostics); the values do not depend on the number of
// goroutines.
func (m *Monitor) Summary() ([]tasks.Metric, error) {
	ms, err := m.Metrics()
	if err != nil {
		return nil, err
	}
	k, n, d := m.draws.Dims()
	chains := make([]*mat.Dense, k)
	for c := range chains {
		chains[c] = mat.NewDense(n, d, m.draws.Chain(c))
	}
	pooled, err := diag.MeanESSPooled(chains)
	if err != nil {
		return nil, fmt.Errorf("gaussian monitor: %w", err)
	}
	ms = append(ms, tasks.Metric{Name: "ess", Value: pooled})
	values := make([][len(coordDiagnostics)]float64, d)
	err = m.draws.ForEachCoordinate(func(i int, col [][]float64) error {
		ess, err := diag.ESS(col)
		if err != nil {
			return err
		}
		rhat, err := diag.SplitRhat(col)
		if err != nil {
			return err
		}
		rank, err := diag.RankDiagnostics(col)
		if err != nil {
			return err
		}
		values[i] = [len(coordDiagnostics)]float64{ess, rhat, rank.Rhat, rank.BulkESS, rank.TailESS}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gaussian monitor: %w", err)
	}
	worst := values[0]
	for _, v := range values[1:] {
		for j, cd := range coordDiagnostics {
			if (cd.largest && v[j] > worst[j]) || (!cd.largest && v[j] < worst[j]) {
				worst[j] = v[j]
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
// of each coordinate, in this order, and reports at their worst over the
// coordinates: the smallest effective sample size, the largest R̂. ESS and
// SplitRhat are diag's functions of those names; the rank-normalised
// ones are diag.RankDiagnostics' RankRhat, BulkESS and TailESS.
var coordDiagnostics = [...]struct {
	name    string
	largest bool // the worst value is the largest, not the smallest
}{
	{"ess_min", false},
	{"rhat_max", true},
	{"rhat_rank_max", true},
	{"ess_bulk_min", false},
	{"ess_tail_min", false},
}
