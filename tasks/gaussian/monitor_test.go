package gaussian

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/samplers/diag"
)

// summaryValues returns the metrics of m's Summary by name.
func summaryValues(t *testing.T, m *Monitor) map[string]float64 {
	t.Helper()
	sum, err := m.Summary()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, x := range sum {
		got[x.Name] = x.Value
	}
	return got
}

// TestMonitorSummaryMatchesDiag checks the summary's per-coordinate
// metrics, computed in parallel with the ranks of each coordinate shared
// (diag.RankDiagnostics), against diag's separate functions applied to the
// positions one coordinate at a time, as the monitor computed them before:
// the same bits, whatever GOMAXPROCS.
func TestMonitorSummaryMatchesDiag(t *testing.T) {
	const d, k, steps = 5, 4, 301
	cov := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		cov.SetSym(i, i, float64(i+1))
	}
	g, err := New(make([]float64, d), cov)
	if err != nil {
		t.Fatal(err)
	}
	m := g.NewMonitor(k)
	rng := rand.New(rand.NewPCG(6, 6))
	positions := make([][]float64, steps)
	theta := make([]float64, d*k)
	for s := range positions {
		for j := range theta {
			theta[j] = 0.8*theta[j] + math.Sqrt(float64(j/k+1))*rng.NormFloat64()
		}
		theta[3*k] = math.Round(theta[3*k]) // ties in coordinate 3 of chain 0
		positions[s] = append([]float64(nil), theta...)
		if err := m.Observe(s+1, theta); err != nil {
			t.Fatal(err)
		}
	}

	coords, err := diag.CoordinateChains(positions, k)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for i, chains := range coords {
		for _, f := range []struct {
			name    string
			f       func([][]float64) (float64, error)
			largest bool
		}{
			{"ess_min", diag.ESS, false},
			{"rhat_max", diag.SplitRhat, true},
			{"rhat_rank_max", diag.RankRhat, true},
			{"ess_bulk_min", diag.BulkESS, false},
			{"ess_tail_min", diag.TailESS, false},
		} {
			v, err := f.f(chains)
			if err != nil {
				t.Fatal(err)
			}
			if w, ok := want[f.name]; i == 0 || !ok || (f.largest && v > w) || (!f.largest && v < w) {
				want[f.name] = v
			}
		}
	}
	perChain := make([]*mat.Dense, k)
	for c := range perChain {
		perChain[c] = mat.NewDense(steps, d, nil)
		for s, p := range positions {
			for i := 0; i < d; i++ {
				perChain[c].Set(s, i, p[i*k+c])
			}
		}
	}
	if want["ess"], err = diag.MeanESSPooled(perChain); err != nil {
		t.Fatal(err)
	}

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		got := summaryValues(t, m)
		for name, w := range want {
			if got[name] != w {
				t.Errorf("GOMAXPROCS %d: %s = %.17g, diag's functions give %.17g", procs, name, got[name], w)
			}
		}
	}
}

// TestMonitorSummaryReportsTheFailingCoordinate checks that a coordinate
// whose diagnostics are undefined fails the summary with diag's error.
func TestMonitorSummaryReportsTheFailingCoordinate(t *testing.T) {
	g, _ := New([]float64{0, 0, 0}, mat.NewSymDense(3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}))
	const k = 2
	m := g.NewMonitor(k)
	rng := rand.New(rand.NewPCG(7, 7))
	theta := make([]float64, 3*k)
	for s := 1; s <= 40; s++ {
		for j := range theta {
			theta[j] = rng.NormFloat64()
		}
		// Coordinate 1 takes the values 0 and 1 only: the folded draws
		// |x − 0.5| are all 0.5 and the indicator of x ≤ q₀.₉₅ = 1 is 1.
		theta[1*k], theta[1*k+1] = float64(s%2), float64((s/2)%2)
		if err := m.Observe(s, theta); err != nil {
			t.Fatal(err)
		}
	}
	_, err := m.Summary()
	if err == nil || err.Error() != "gaussian monitor: diag: RankDiagnostics: "+
		"R̂: the folded draws |x − median| are all identical (median 0.5), so the tail R̂ is undefined; "+
		"tail-ESS: the indicator of the draws ≤ the 0.95 quantile 1 is constant (ties), so the tail ESS is undefined" {
		t.Errorf("error %v", err)
	}
}
