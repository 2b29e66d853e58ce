package diag

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// ar1 returns m stationary AR(1) chains of length n,
// x_{i+1} = ρ x_i + ε_i with ε_i ~ N(0, 1) and x_0 ~ N(0, 1/(1−ρ²)), whose
// integrated autocorrelation time is τ = (1+ρ)/(1−ρ). ρ = 0 gives i.i.d.
// standard normal draws.
func ar1(rng *rand.Rand, m, n int, rho float64) [][]float64 {
	chains := make([][]float64, m)
	for c := range chains {
		x := make([]float64, n)
		v := rng.NormFloat64() / math.Sqrt(1-rho*rho)
		for i := range x {
			x[i] = v
			v = rho*v + rng.NormFloat64()
		}
		chains[c] = x
	}
	return chains
}

func TestStanTau(t *testing.T) {
	for _, tc := range []struct {
		name string
		rho  []float64
		want float64
	}{
		{
			// Pairs P0 = 1+0.5 = 1.5, P1 = 0.1+0 = 0.1, P2 = 0.3+0.2 = 0.5,
			// P3 = −0.4−0.3 < 0 stops the positive sequence (max_s = 7; ρ̂6 < 0
			// so no antithetic term). Monotone: P2 = 0.5 > P1 = 0.1, so
			// ρ̂4 = ρ̂5 = 0.1/2 = 0.05. τ = −1 + 2(1.5 + 0.1 + 0.1) = 2.4.
			name: "monotone correction",
			rho:  []float64{1, 0.5, 0.1, 0, 0.3, 0.2, -0.4, -0.3, 0.05, 0, 0, 0},
			want: 2.4,
		},
		{
			// P1 = 0.3−0.1 = 0.2 kept, P2 = 0.2−0.3 < 0 stops (max_s = 5);
			// ρ̂4 = 0.2 > 0 is added once (antithetic term).
			// τ = −1 + 2(1 + 0.4 + 0.3 − 0.1) + 0.2 = 2.4.
			name: "antithetic term",
			rho:  []float64{1, 0.4, 0.3, -0.1, 0.2, -0.3, 0, 0, 0, 0},
			want: 2.4,
		},
		{
			// n = 6: Stan examines lags up to n−3 = 3 only. P1 = 0.7 is kept,
			// the loop ends with s = max_s = 3, and ρ̂2 = 0.4 enters both the
			// sum over indices 0…2 and the antithetic term:
			// τ = −1 + 2(1 + 0.5 + 0.4) + 0.4 = 3.2 (Stan's quirk; ρ̂3 unused).
			name: "lag limit reached",
			rho:  []float64{1, 0.5, 0.4, 0.3, 0.9, 0.9},
			want: 3.2,
		},
		{
			// n = 4: the loop never runs (1 < n−4 is false); the initial
			// ρ̂_even = 1 becomes the antithetic term: τ = −1 + 2·1 + 1 = 2.
			name: "n = 4",
			rho:  []float64{1, 0.5, 0.9, 0.9},
			want: 2,
		},
		{
			// 1 + ρ̂1 = 0.2 > 0, P1 = −0.1−0.2 < 0 stops at max_s = 3 with
			// ρ̂2 < 0: τ = −1 + 2(1 − 0.8) = −0.6 (ESS then returns its cap).
			name: "negative tau",
			rho:  []float64{1, -0.8, -0.1, -0.2, 0, 0, 0, 0},
			want: -0.6,
		},
		{
			// rho[0] is ignored (Stan uses ρ̂0 = 1): same as "antithetic term".
			name: "rho[0] ignored",
			rho:  []float64{0.7, 0.4, 0.3, -0.1, 0.2, -0.3, 0, 0, 0, 0},
			want: 2.4,
		},
	} {
		// A few additions of O(1) decimals: rounding ~1e-15.
		if got := stanTau(tc.rho); !closeRel(got, tc.want, 1e-14) {
			t.Errorf("%s: τ = %.17g, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMeanAutocov checks the FFT auto-covariances against the direct sum
// (1/m) Σ_c (1/n) Σ_i z_{c,i} z_{c,i+t} for all lags.
func TestMeanAutocov(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{4, 5, 17, 100} {
		chains := ar1(rng, 3, n, 0.6)
		for c := range chains {
			for i := range chains[c] {
				chains[c][i] += 10 // a non-zero mean must be removed
			}
		}
		got, means := meanAutocov(chains, n)
		for c, x := range chains {
			if !closeRel(means[c], mean(x), 1e-15) {
				t.Errorf("n=%d: mean[%d] = %v, want %v", n, c, means[c], mean(x))
			}
		}
		for lag := 0; lag < n; lag++ {
			var want float64
			for _, x := range chains {
				mu := mean(x)
				for i := 0; i+lag < n; i++ {
					want += (x[i] - mu) * (x[i+lag] - mu)
				}
			}
			want /= float64(n * len(chains))
			// FFT rounding is ~ε·log2(size) relative to acov(0) = O(1).
			if math.Abs(got[lag]-want) > 1e-12 {
				t.Errorf("n=%d lag %d: acov = %.17g, direct %.17g", n, lag, got[lag], want)
			}
		}
	}
}

func TestESSHand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chains [][]float64
		want   float64
	}{
		{
			// m = 2, n = 8.
			// c1 = 0,0,3,3,2,4,3,1: mean 2, z = −2,−2,1,1,0,2,1,−1,
			//   acov(0…5) = (16, 4, −4, 1, −4, −7)/8.
			// c2 = 3,4,4,2,3,3,3,2: mean 3, z = 0,1,1,−1,0,0,0,−1,
			//   acov(0…5) = (4, 0, −1, 0, 1, −1)/8.
			// Chain variances (×8/7): 16/7, 4/7 → W = 10/7.
			// Means 2, 3 → B/n = 1/2; var⁺ = (7/8)(10/7) + 1/2 = 7/4.
			// Mean acov: 1/4, −5/16, 1/16, −3/16, −1/2 at lags 1…5, so
			// ρ̂_t = 1 − (10/7 − Ā_t)(4/7):
			//   ρ̂1 = 16/49, ρ̂2 = 1/196, ρ̂3 = 43/196, ρ̂4 = 15/196, ρ̂5 = −5/49.
			// P1 = 44/196 ≥ 0 kept; P2 = −5/196 < 0 stops (max_s = 5);
			// ρ̂4 > 0 is the antithetic term. Monotone: P1 < P0, no change.
			// τ = −1 + 2(1 + 16/49 + 1/196 + 43/196) + 15/196 = 61/28,
			// ESS = 16/(61/28) = 448/61 (cap 16·log10 16 ≈ 19.3 not reached).
			name: "two chains",
			chains: [][]float64{
				{0, 0, 3, 3, 2, 4, 3, 1},
				{3, 4, 4, 2, 3, 3, 3, 2},
			},
			want: 448.0 / 61,
		},
		{
			// m = 1, n = 8, x = 0,0,1,1,0,3,0,3: mean 1, z = −1,−1,0,0,−1,2,−1,2,
			// acov(0…5) = (12, −5, 5, −1, −1, −1)/8. W = (3/2)(8/7) = 12/7,
			// var⁺ = (7/8)W = 3/2, ρ̂_t = −1/7 + (2/3)acov(t):
			//   ρ̂1 = −47/84, ρ̂2 = 23/84, ρ̂3 = ρ̂4 = ρ̂5 = −19/84.
			// 1 + ρ̂1 > 0; P1 = 4/84 kept; P2 < 0 stops; ρ̂4 < 0.
			// τ = −1 + 2(1 − 47/84 + 23/84 − 19/84) = −1/42 ≤ 0, so ESS is
			// the cap 8·log10 8.
			name:   "negative tau gives cap",
			chains: [][]float64{{0, 0, 1, 1, 0, 3, 0, 3}},
			want:   8 * math.Log10(8),
		},
	} {
		got, err := ESS(tc.chains)
		// Exact rationals through an FFT: rounding ~1e-15 relative.
		if err != nil || !closeRel(got, tc.want, 1e-12) {
			t.Errorf("%s: ESS = %.17g, %v; want %.17g", tc.name, got, err, tc.want)
		}
	}
}

// TestESSAR1 checks ESS against the exact value mn(1−ρ)/(1+ρ) for AR(1)
// chains. The seeds are fixed, so the test is deterministic; each tolerance
// is at least 4 standard deviations of ESS/truth, measured over 100 seeds
// for the same m, n and ρ (sd and observed range in the comments).
func TestESSAR1(t *testing.T) {
	for _, tc := range []struct {
		m, n int
		rho  float64
		tol  float64
	}{
		{m: 8, n: 12500, rho: 0, tol: 0.05},    // i.i.d.; sd 0.9%, range [0.971, 1.016]
		{m: 8, n: 25000, rho: 0.5, tol: 0.06},  // sd 1.3%, range [0.968, 1.031]
		{m: 32, n: 50000, rho: 0.9, tol: 0.06}, // sd 1.1%, range [0.964, 1.025]
		{m: 8, n: 25000, rho: -0.3, tol: 0.06}, // antithetic, ESS > mn; sd 1.4%, range [0.968, 1.033]
	} {
		rng := rand.New(rand.NewPCG(11, uint64(tc.m*tc.n)))
		got, err := ESS(ar1(rng, tc.m, tc.n, tc.rho))
		if err != nil {
			t.Fatal(err)
		}
		want := float64(tc.m*tc.n) * (1 - tc.rho) / (1 + tc.rho)
		t.Logf("m=%d n=%d ρ=%v: ESS/truth = %.4f", tc.m, tc.n, tc.rho, got/want)
		if math.Abs(got/want-1) > tc.tol {
			t.Errorf("m=%d n=%d ρ=%v: ESS = %.1f, want %.1f ± %.0f%%", tc.m, tc.n, tc.rho, got, want, 100*tc.tol)
		}
	}

	// ρ = −0.7: the true ESS, mn·1.7/0.3 ≈ 5.7 mn, exceeds the cap
	// mn·log10(mn) = 4 mn for mn = 10⁴, so the cap is returned exactly.
	rng := rand.New(rand.NewPCG(12, 13))
	got, err := ESS(ar1(rng, 2, 5000, -0.7))
	if want := 1e4 * 4.0; err != nil || got != want {
		t.Errorf("ρ=−0.7: ESS = %v, %v; want the cap %v", got, err, want)
	}
}

// TestChainErrors checks the package's error convention on the scalar
// multi-chain diagnostics: NaN and "diag: Func: problem", the same problem
// for every function given the same bad chains.
func TestChainErrors(t *testing.T) {
	funcs := []struct {
		name string
		f    func([][]float64) (float64, error)
	}{
		{"ESS", ESS}, {"SplitRhat", SplitRhat}, {"MCSE", MCSE},
		{"RankRhat", RankRhat}, {"BulkESS", BulkESS}, {"TailESS", TailESS},
	}
	for _, tc := range []struct {
		name    string
		chains  [][]float64
		problem string
	}{
		{"no chains", nil, "no chains"},
		{"too short", [][]float64{{1, 2, 3}}, "chains have 3 draws, need at least 4"},
		{"ragged", [][]float64{{1, 2, 3, 4}, {1, 2, 3, 4, 5}}, "chain 1 has 5 draws, chain 0 has 4"},
		{"NaN", [][]float64{{1, 2, math.NaN(), 4}}, "chain 0 has a non-finite draw"},
		{"Inf", [][]float64{{1, 2, 3, 4}, {1, math.Inf(-1), 3, 4}}, "chain 1 has a non-finite draw"},
		{"constant", [][]float64{{2, 2, 2, 2}, {2, 2, 2, 2}}, "all draws are identical"},
	} {
		for _, fn := range funcs {
			got, err := fn.f(tc.chains)
			want := "diag: " + fn.name + ": " + tc.problem
			if !math.IsNaN(got) || err == nil || err.Error() != want {
				t.Errorf("%s %s: got %v, %v; want NaN, %q", fn.name, tc.name, got, err, want)
			}
		}
	}

	// Problems of the rank-normalised diagnostics alone. Draws ±1 about the
	// median 0 fold to a constant; with the top 6 of 8 draws tied at the
	// maximum, q₀.₉₅ is the maximum and 1{x ≤ q₀.₉₅} is constant.
	for _, tc := range []struct {
		name   string
		f      func([][]float64) (float64, error)
		chains [][]float64
		want   string
	}{
		{"RankRhat", RankRhat, [][]float64{{-1, 1, -1, 1}, {1, -1, 1, -1}},
			"diag: RankRhat: the folded draws |x − median| are all identical (median 0), so the tail R̂ is undefined"},
		{"TailESS", TailESS, [][]float64{{0, 5, 5, 5}, {1, 5, 5, 5}},
			"diag: TailESS: the indicator of the draws ≤ the 0.95 quantile 5 is constant (ties), so the tail ESS is undefined"},
	} {
		if got, err := tc.f(tc.chains); !math.IsNaN(got) || err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v, %v; want NaN, %q", tc.name, got, err, tc.want)
		}
	}
}

func TestSplitRhat(t *testing.T) {
	// Hand computation for c1 = 1,2,3,4 and c2 = 2,4,0,2 (h = 2):
	// halves [1,2], [3,4], [2,4], [0,2] with means 1.5, 3.5, 3, 1 and
	// variances 0.5, 0.5, 2, 2 → W = 5/4.
	// Grand mean 9/4; squared deviations 9/16, 25/16, 9/16, 25/16 sum to
	// 17/4, so B/h = (17/4)/3 = 17/12.
	// var⁺ = (1/2)(5/4) + 17/12 = 49/24, R̂ = √((49/24)/(5/4)) = √(49/30).
	hand := math.Sqrt(49.0 / 30)
	for _, tc := range []struct {
		name   string
		chains [][]float64
		want   float64
	}{
		{"even n", [][]float64{{1, 2, 3, 4}, {2, 4, 0, 2}}, hand},
		// For odd n the middle draw is dropped: same halves as above.
		{"odd n", [][]float64{{1, 2, 100, 3, 4}, {2, 4, -7, 0, 2}}, hand},
		// Single chain 1,2,3,4: halves [1,2], [3,4]; W = 1/2, B/h = var(1.5, 3.5) = 2,
		// var⁺ = 1/4 + 2 = 9/4, R̂ = √((9/4)/(1/2)) = √(9/2).
		{"one chain", [][]float64{{1, 2, 3, 4}}, math.Sqrt(4.5)},
		// Each half constant but different: W = 0, B > 0.
		{"constant halves", [][]float64{{1, 1, 2, 2}}, math.Inf(1)},
	} {
		got, err := SplitRhat(tc.chains)
		// Exact rationals and one square root: rounding ~1e-16.
		if err != nil || !(got == tc.want || closeRel(got, tc.want, 1e-14)) {
			t.Errorf("%s: SplitRhat = %.17g, %v; want %.17g", tc.name, got, err, tc.want)
		}
	}

	// Statistical checks with fixed seeds, 4 chains of 1000 draws. Over 200
	// seeds, i.i.d. chains gave R̂ ≤ 1.0021 and chains with one of them
	// shifted by one standard deviation gave R̂ ≥ 1.08, so the thresholds
	// 1.01 (the usual convergence threshold) and 1.05 are safe.
	rng := rand.New(rand.NewPCG(21, 22))
	chains := ar1(rng, 4, 1000, 0)
	if r, err := SplitRhat(chains); err != nil || r > 1.01 {
		t.Errorf("i.i.d. chains: R̂ = %v, %v; want ≤ 1.01", r, err)
	}
	for i := range chains[0] {
		chains[0][i]++
	}
	if r, err := SplitRhat(chains); err != nil || r < 1.05 {
		t.Errorf("shifted chain: R̂ = %v, %v; want ≥ 1.05", r, err)
	}
}

func TestMCSE(t *testing.T) {
	// The chains of TestESSHand "two chains": ESS = 448/61. All 16 draws
	// have mean 2.5; squared deviations sum to 18 (c1) + 6 (c2) = 24, so
	// sd² = 24/15 = 8/5 and MCSE = √((8/5)/(448/61)) = √(61/280).
	chains := [][]float64{{0, 0, 3, 3, 2, 4, 3, 1}, {3, 4, 4, 2, 3, 3, 3, 2}}
	got, err := MCSE(chains)
	if want := math.Sqrt(61.0 / 280); err != nil || !closeRel(got, want, 1e-12) {
		t.Errorf("MCSE = %.17g, %v; want %.17g", got, err, want)
	}
}

// TestMCSECalibration checks that MCSE is the standard error of the mean of
// correlated chains, as the sampler tests |mean − truth|/MCSE < 2.33 assume:
// over R = 400 replicates of 4 AR(1) chains (ρ = 0.5, n = 1000, truth 0),
// z = mean/MCSE should be close to standard normal.
func TestMCSECalibration(t *testing.T) {
	const R = 400
	rng := rand.New(rand.NewPCG(31, 32))
	var sumZ2 float64
	exceed := 0
	for r := 0; r < R; r++ {
		chains := ar1(rng, 4, 1000, 0.5)
		var s float64
		for _, c := range chains {
			for _, v := range c {
				s += v
			}
		}
		mcse, err := MCSE(chains)
		if err != nil {
			t.Fatal(err)
		}
		z := s / 4000 / mcse
		sumZ2 += z * z
		if math.Abs(z) > 2.33 {
			exceed++
		}
	}
	// For z ~ N(0,1), mean(z²) has sd √(2/R) ≈ 0.071: the band [0.7, 1.3] is
	// over 4 sd wide on each side. Using N = mn instead of ESS (τ = 3)
	// would give mean(z²) ≈ 3.
	t.Logf("mean z² = %.3f, %d of %d |z| > 2.33", sumZ2/R, exceed, R)
	if m := sumZ2 / R; m < 0.7 || m > 1.3 {
		t.Errorf("mean z² = %.3f, want 1 ± 0.3", m)
	}
	// P(|z| > 2.33) ≈ 0.0198: expect 7.9 ± 2.8 exceedances; 20 is +4.3 sd.
	if exceed > 20 {
		t.Errorf("%d of %d |z| > 2.33, want about 8", exceed, R)
	}
}

// BenchmarkESS times ESS at the size used in the experiments: 50 chains of
// 12,000 draws.
func BenchmarkESS(b *testing.B) {
	chains := ar1(rand.New(rand.NewPCG(1, 1)), 50, 12000, 0.9)
	for b.Loop() {
		ESS(chains)
	}
}

func TestCoordinateChains(t *testing.T) {
	// Two steps of k = 3 chains in D = 2 dimensions, coordinate-major:
	// position[i*3+c] is coordinate i of chain c.
	positions := [][]float64{
		{10, 11, 12, 20, 21, 22},
		{13, 14, 15, 23, 24, 25},
	}
	got, err := CoordinateChains(positions, 3)
	want := [][][]float64{
		{{10, 13}, {11, 14}, {12, 15}}, // coordinate 0: chains 0, 1, 2
		{{20, 23}, {21, 24}, {22, 25}}, // coordinate 1
	}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("CoordinateChains = %v, %v; want %v", got, err, want)
	}
	for _, tc := range []struct {
		name      string
		positions [][]float64
		k         int
		want      string
	}{
		{"no chains", positions, 0, "diag: CoordinateChains: 0 chains, need at least 1"},
		{"no positions", nil, 3, "diag: CoordinateChains: no positions"},
		{"not a multiple", [][]float64{{1, 2, 3, 4}}, 3, "diag: CoordinateChains: position 0 has length 4, not a positive multiple of 3 chains"},
		{"empty", [][]float64{{}}, 3, "diag: CoordinateChains: position 0 has length 0, not a positive multiple of 3 chains"},
		{"ragged", [][]float64{{1, 2, 3}, {1, 2}}, 3, "diag: CoordinateChains: position 1 has length 2, position 0 has 3"},
	} {
		if got, err := CoordinateChains(tc.positions, tc.k); got != nil || err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v, %v; want nil, %q", tc.name, got, err, tc.want)
		}
	}
}
