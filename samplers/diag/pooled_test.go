package diag

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// column returns a T×1 matrix holding x.
func column(x ...float64) *mat.Dense { return mat.NewDense(len(x), 1, x) }

func TestESSPooled(t *testing.T) {
	// Two 9-step trajectories used below:
	//   a = 1, 2, …, 9:             mean 5, z = −4, …, 4.
	//   b = 2,0,2,0,2,0,2,0,1:      mean 1, z = 1,−1,1,−1,1,−1,1,−1,0.
	a := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	b := []float64{2, 0, 2, 0, 2, 0, 2, 0, 1}
	ab := mat.NewDense(9, 2, nil)
	for i := range a {
		ab.Set(i, 0, a[i])
		ab.Set(i, 1, b[i])
	}
	// Linear trends x_t = t for T = 3000 (maxLag = T/3 = 1000) and T = 3600
	// (maxLag = min(1200, 1000) = 1000): every pair sum stays positive, so
	// the loop ends at maxLag.
	trend := func(T int) *mat.Dense {
		m := mat.NewDense(T, 1, nil)
		for i := 0; i < T; i++ {
			m.Set(i, 0, float64(i))
		}
		return m
	}

	for _, tc := range []struct {
		name  string
		chain *mat.Dense
		want  float64
		tol   float64
	}{
		{
			// 6-step 1-D chain 1,…,6: mean 3.5, z = −2.5, −1.5, −0.5, 0.5, 1.5, 2.5.
			// maxLag = min(6/3, 1000) = 2, so only lags 0 and 1 are computed:
			//   γ0 = (6.25+2.25+0.25)·2/6 = 35/12,
			//   γ1 = (3.75+0.75−0.25+0.75+3.75)/5 = 8.75/5 = 7/4,
			// lag 1 is odd, so no pair is added: varStat = γ0,
			// act = γ0/γ0 = 1 and ESS = 6/1 = 6.
			name: "6-step 1-D", chain: column(1, 2, 3, 4, 5, 6), want: 6,
		},
		{
			// Trajectory a: maxLag = 3, lags 0, 1, 2.
			//   γ0 = (16+9+4+1+0+1+4+9+16)/9 = 60/9 = 20/3,
			//   γ1 = (12+6+2+0+0+2+6+12)/8 = 40/8 = 5,
			//   γ2 = (8+3+0−1+0+3+8)/7 = 21/7 = 3.
			// Lag 2: γ1+γ2 = 8 > 0, varStat = 20/3 + 2·8 = 68/3.
			// act = (68/3)/(20/3) = 17/5, ESS = 9/(17/5) = 45/17.
			name: "9-step trend", chain: column(a...), want: 45.0 / 17,
		},
		{
			// Trajectory b:
			//   γ0 = 8/9,
			//   γ1 = (7·(−1) + (−1)·0)/8 = −7/8,
			//   γ2 = (6·1 + 1·0)/7 = 6/7.
			// Lag 2: γ1+γ2 = −1/56 ≤ 0, so the loop breaks without adding:
			// varStat = γ0 and ESS = 9.
			name: "9-step break", chain: column(b...), want: 9,
		},
		{
			// Columns a and b together: auto-covariances are summed over
			// dimensions before the ratio is taken:
			//   γ0 = 20/3 + 8/9 = 68/9,  γ1 = 5 − 7/8 = 33/8,  γ2 = 3 + 6/7 = 27/7.
			// γ1+γ2 = 447/56 > 0, varStat = 68/9 + 447/28 = 5927/252,
			// act = (5927/252)/(68/9) = 5927/1904, ESS = 9·1904/5927 = 17136/5927.
			name: "9-step 2-D pooled", chain: ab, want: 17136.0 / 5927,
		},
		{
			// References from a plain-Python transliteration of the authors'
			// effectiveSampleSize (lists, no numpy) in float64. tol 1e-12:
			// the sums differ only in summation order, ~1e-14 relative.
			name: "trend T=3000", chain: trend(3000), want: 2.5319672132974462, tol: 1e-12,
		},
		{
			name: "trend T=3600", chain: trend(3600), want: 2.6851813191159106, tol: 1e-12,
		},
	} {
		tol := tc.tol
		if tol == 0 {
			// Exact rational hand values; a few dozen O(1) operations.
			tol = 1e-14
		}
		if got, err := ESSPooled(tc.chain); err != nil || !closeRel(got, tc.want, tol) {
			t.Errorf("%s: ESSPooled = %.17g, %v; want %.17g", tc.name, got, err, tc.want)
		}
	}
}

func TestESSPooledInvalid(t *testing.T) {
	huge := mat.NewDense(9, 1, nil) // finite, but γ overflows
	for i := 0; i < 9; i++ {
		huge.Set(i, 0, math.Ldexp(float64(i%2), 1020))
	}
	for _, tc := range []struct {
		name  string
		chain *mat.Dense
		want  string
	}{
		{"nil", nil, "diag: ESSPooled: empty chain"},
		{"empty", &mat.Dense{}, "diag: ESSPooled: empty chain"},
		{"2 steps", column(1, 2), "diag: ESSPooled: chain has 2 steps, need at least 3"}, // maxLag = 0: the authors' code fails.
		{"constant", column(1, 1, 1, 1), "diag: ESSPooled: all draws are identical"},     // γ0 = 0.
		{"NaN", column(1, math.NaN(), 3, 4), "diag: ESSPooled: step 1 has a non-finite value"},
		{"Inf", column(1, 2, 3, math.Inf(-1)), "diag: ESSPooled: step 3 has a non-finite value"},
		{"overflow", huge, "diag: ESSPooled: the auto-covariances overflow"},
	} {
		got, err := ESSPooled(tc.chain)
		if !math.IsNaN(got) || err == nil || err.Error() != tc.want {
			t.Errorf("%s: ESSPooled = %v, %v; want NaN, %q", tc.name, got, err, tc.want)
		}
	}
}

func TestMeanESSPooled(t *testing.T) {
	// ESSPooled of the "9-step trend" and "9-step break" chains above are
	// 45/17 and 9; their mean is (45/17 + 9)/2 = 99/17.
	chains := []*mat.Dense{
		column(1, 2, 3, 4, 5, 6, 7, 8, 9),
		column(2, 0, 2, 0, 2, 0, 2, 0, 1),
	}
	if got, err := MeanESSPooled(chains); err != nil || !closeRel(got, 99.0/17, 1e-14) {
		t.Errorf("MeanESSPooled = %.17g, %v; want %.17g", got, err, 99.0/17)
	}
	for _, tc := range []struct {
		name   string
		chains []*mat.Dense
		want   string
	}{
		{"nil", nil, "diag: MeanESSPooled: no chains"},
		{"constant chain", append(chains, column(1, 1, 1)), "diag: MeanESSPooled: chain 2: all draws are identical"},
	} {
		got, err := MeanESSPooled(tc.chains)
		if !math.IsNaN(got) || err == nil || err.Error() != tc.want {
			t.Errorf("%s: MeanESSPooled = %v, %v; want NaN, %q", tc.name, got, err, tc.want)
		}
	}
}

// BenchmarkESSPooled times ESSPooled on one 12,000-step 20-D random-walk
// chain, for which every pair sum is positive up to maxLag = 1000 (the
// worst case).
func BenchmarkESSPooled(b *testing.B) {
	const T, d = 12000, 20
	rng := rand.New(rand.NewPCG(1, 1))
	chain := mat.NewDense(T, d, nil)
	for t := 1; t < T; t++ {
		for k := 0; k < d; k++ {
			chain.Set(t, k, chain.At(t-1, k)+rng.NormFloat64())
		}
	}
	for b.Loop() {
		ESSPooled(chain)
	}
}
