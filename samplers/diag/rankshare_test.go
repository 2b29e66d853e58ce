package diag

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// ---------------------------------------------------------------------------
// The rank-normalised diagnostics as rank.go computed them before the draws
// were sorted once for all of them (rankWork): a separate sort of
// (value, position) pairs by slices.SortFunc for every set of normal
// scores, and slices.Sort of all draws for the median and the quantiles.
// Kept verbatim, but for the names, to show that the shared computation
// returns the same bits.
// ---------------------------------------------------------------------------

func prevRankRhat(chains [][]float64) (float64, error) {
	return checked("RankRhat", chains, func(chains [][]float64) (float64, error) {
		bulk, tail, err := prevRankRhats(chains)
		return math.Max(bulk, tail), err
	})
}

func prevRankRhats(chains [][]float64) (bulk, tail float64, err error) {
	bulk, err = rhatOf(prevNormalScores(splitChains(chains)))
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	median := quantile7(prevSortedDraws(chains), 0.5)
	folded := make([][]float64, len(chains))
	for c, x := range chains {
		folded[c] = make([]float64, len(x))
		for i, v := range x {
			folded[c][i] = math.Abs(v - median)
		}
	}
	tail, err = rhatOf(prevNormalScores(splitChains(folded)))
	if errors.Is(err, errIdentical) {
		err = fmt.Errorf("the folded draws |x − median| are all identical (median %g), so the tail R̂ is undefined", median)
	}
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	return bulk, tail, nil
}

func prevBulkESS(chains [][]float64) (float64, error) {
	return checked("BulkESS", chains, func(chains [][]float64) (float64, error) {
		return essOf(prevNormalScores(splitChains(chains)))
	})
}

func prevTailESS(chains [][]float64) (float64, error) {
	return checked("TailESS", chains, prevTailESSOf)
}

func prevTailESSOf(chains [][]float64) (float64, error) {
	sorted := prevSortedDraws(chains)
	if sorted[0] == sorted[len(sorted)-1] {
		return math.NaN(), errIdentical
	}
	halves := splitChains(chains)
	tail := math.Inf(1)
	for _, p := range [2]float64{0.05, 0.95} {
		q := quantile7(sorted, p)
		ind := make([][]float64, len(halves))
		for j, x := range halves {
			ind[j] = make([]float64, len(x))
			for i, v := range x {
				if v <= q {
					ind[j][i] = 1
				}
			}
		}
		ess, err := essOf(ind)
		if errors.Is(err, errIdentical) {
			return math.NaN(), fmt.Errorf("the indicator of the draws ≤ the %g quantile %g is constant (ties), so the tail ESS is undefined", p, q)
		}
		if err != nil {
			return math.NaN(), err
		}
		tail = math.Min(tail, ess)
	}
	return tail, nil
}

func prevNormalScores(chains [][]float64) [][]float64 {
	type draw struct {
		v float64
		k int // position in the flattened draws
	}
	var total int
	for _, x := range chains {
		total += len(x)
	}
	draws := make([]draw, 0, total)
	for _, x := range chains {
		for _, v := range x {
			draws = append(draws, draw{v, len(draws)})
		}
	}
	slices.SortFunc(draws, func(a, b draw) int { return cmp.Compare(a.v, b.v) })
	flat := make([]float64, total)
	s := float64(total)
	for lo := 0; lo < total; {
		hi := lo + 1
		for hi < total && draws[hi].v == draws[lo].v {
			hi++
		}
		r := float64(lo+1+hi) / 2
		z := distuv.UnitNormal.Quantile((r - 3.0/8) / (s + 1.0/4))
		for _, d := range draws[lo:hi] {
			flat[d.k] = z
		}
		lo = hi
	}
	out := make([][]float64, len(chains))
	off := 0
	for c, x := range chains {
		out[c] = flat[off : off+len(x) : off+len(x)]
		off += len(x)
	}
	return out
}

func prevSortedDraws(chains [][]float64) []float64 {
	var all []float64
	for _, x := range chains {
		all = append(all, x...)
	}
	slices.Sort(all)
	return all
}

// ---------------------------------------------------------------------------

// rankRhats returns the bulk and the tail R̂ of RankRhat for valid chains.
func rankRhats(chains [][]float64) (bulk, tail float64, err error) {
	var w rankWork
	w.load(chains)
	return w.rhats()
}

// scoresOf returns the normal scores of the draws of chains ranked all
// together, in the shape of chains.
func scoresOf(chains [][]float64) [][]float64 {
	var flat []float64
	for _, x := range chains {
		flat = append(flat, x...)
	}
	order, scratch := make([]int, len(flat)), make([]int, len(flat))
	var keys [2][]uint64
	sortOrder(flat, order, scratch, &keys)
	normalScores(flat, order, flat)
	out := make([][]float64, len(chains))
	off := 0
	for c, x := range chains {
		out[c] = flat[off : off+len(x)]
		off += len(x)
	}
	return out
}

// rankCases returns chains of many shapes and kinds: the radix and the
// comparison sort, odd n (middle draws dropped from the split draws but
// not from the quantiles), a single chain, heavy tails, ties of every
// size, ties at the median (folded ties from both sides), ±0, subnormal
// and huge values, constant chains and constant draws.
func rankCases(rng *rand.Rand) []struct {
	name   string
	chains [][]float64
} {
	normal := func(int, int) float64 { return rng.NormFloat64() }
	var cases []struct {
		name   string
		chains [][]float64
	}
	add := func(name string, m, n int, f func(c, i int) float64) {
		x := make([][]float64, m)
		for c := range x {
			x[c] = make([]float64, n)
			for i := range x[c] {
				x[c][i] = f(c, i)
			}
		}
		cases = append(cases, struct {
			name   string
			chains [][]float64
		}{fmt.Sprintf("%s %d×%d", name, m, n), x})
	}
	for _, shape := range [][2]int{{1, 4}, {1, 5}, {3, 4}, {2, 9}, {1, 300}, {4, 200}, {3, 301}, {8, 1001}, {5, 2000}} {
		m, n := shape[0], shape[1]
		add("normal", m, n, normal)
		add("AR(1) ρ=0.9", m, n, func(c, i int) float64 { return 0.9*float64(i%7) + rng.NormFloat64() })
		add("Cauchy", m, n, func(int, int) float64 { return rng.NormFloat64() / rng.NormFloat64() })
		add("exponential, chain 0 shifted", m, n, func(c, _ int) float64 { return rng.ExpFloat64() + float64(c%2) })
		add("normal rounded to 0.5", m, n, func(int, int) float64 { return math.Round(2*rng.NormFloat64()) / 2 })
		add("integers −2…2, symmetric about the median", m, n, func(int, int) float64 { return float64(rng.IntN(5) - 2) })
		add("0 or 1", m, n, func(int, int) float64 { return float64(rng.IntN(2)) })
		add("±0 and ±1", m, n, func(int, int) float64 { return [4]float64{math.Copysign(0, -1), 0, 1, -1}[rng.IntN(4)] })
		add("subnormal and huge", m, n, func(int, int) float64 {
			return [3]float64{5e-324, 1e300, -1e-310}[rng.IntN(3)] * rng.Float64()
		})
		add("mostly the largest value", m, n, func(int, int) float64 { return math.Min(rng.NormFloat64(), -1) })
		add("constant per chain", m, n, func(c, _ int) float64 { return float64(c) })
		add("constant", m, n, func(int, int) float64 { return 3 })
		add("two values ±1 about 0", m, n, func(c, i int) float64 { return float64(1 - 2*((c+i)%2)) })
	}
	return cases
}

// same reports whether a and b are the same float64 (NaN equal to NaN) and
// both errors are nil or have the same message.
func same(a, b float64, errA, errB error) bool {
	if (errA == nil) != (errB == nil) || (errA != nil && errA.Error() != errB.Error()) {
		return false
	}
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// TestRankSharedMatchesPrevious checks that RankRhat, BulkESS and TailESS,
// now computed from one sort (rankWork), return the bits, and the errors,
// that the previous implementation returned.
func TestRankSharedMatchesPrevious(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for _, tc := range rankCases(rng) {
		for _, f := range []struct {
			name      string
			now, prev func([][]float64) (float64, error)
		}{
			{"RankRhat", RankRhat, prevRankRhat},
			{"BulkESS", BulkESS, prevBulkESS},
			{"TailESS", TailESS, prevTailESS},
		} {
			got, err := f.now(tc.chains)
			want, wantErr := f.prev(tc.chains)
			if !same(got, want, err, wantErr) {
				t.Errorf("%s: %s = %.17g, %v; previously %.17g, %v", tc.name, f.name, got, err, want, wantErr)
			}
		}
	}
}

// TestRankDiagnosticsMatchesSeparate checks that RankDiagnostics returns
// the bits of RankRhat, BulkESS and TailESS, a NaN and an error where one
// of them fails, and errors that name the diagnostic.
func TestRankDiagnosticsMatchesSeparate(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	cases := rankCases(rng)
	cases = append(cases, []struct {
		name   string
		chains [][]float64
	}{
		{"no chains", nil},
		{"too short", [][]float64{{1, 2, 3}}},
		{"ragged", [][]float64{{1, 2, 3, 4}, {1, 2, 3}}},
		{"NaN", [][]float64{{1, 2, math.NaN(), 4}}},
	}...)
	for _, tc := range cases {
		st, err := RankDiagnostics(tc.chains)
		var failed []string
		for _, f := range []struct {
			name, what string
			got        float64
			f          func([][]float64) (float64, error)
		}{
			{"RankRhat", "R̂", st.Rhat, RankRhat},
			{"BulkESS", "bulk-ESS", st.BulkESS, BulkESS},
			{"TailESS", "tail-ESS", st.TailESS, TailESS},
		} {
			want, wantErr := f.f(tc.chains)
			if math.Float64bits(f.got) != math.Float64bits(want) && !(math.IsNaN(f.got) && math.IsNaN(want)) {
				t.Errorf("%s: RankDiagnostics' %s = %.17g, %s = %.17g", tc.name, f.what, f.got, f.name, want)
			}
			if wantErr != nil {
				failed = append(failed, f.what)
				if err == nil {
					t.Errorf("%s: %s failed (%v) but RankDiagnostics did not", tc.name, f.name, wantErr)
				} else if checkChains(tc.chains, 4) == nil && !strings.Contains(err.Error(), f.what+": "+wantErr.Error()[len("diag: "+f.name+": "):]) {
					t.Errorf("%s: error %q does not name %s", tc.name, err, f.what)
				}
			}
		}
		if len(failed) == 0 && err != nil {
			t.Errorf("%s: RankDiagnostics failed, the three functions did not: %v", tc.name, err)
		}
	}
}

// TestSortOrder checks the radix sort and the comparison sort of sortOrder
// against slices.Sort, including negative values, ±0, subnormals, ±Inf
// and ties, and the reuse of the work space between calls.
func TestSortOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(65, 66))
	var keys [2][]uint64
	for _, n := range []int{1, 2, 7, 255, 256, 257, 1000, 5000} {
		for _, kind := range []string{"normal", "ties", "special", "sorted", "reversed"} {
			x := make([]float64, n)
			for i := range x {
				switch kind {
				case "normal":
					x[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
				case "ties":
					x[i] = float64(rng.IntN(4) - 2)
				case "special":
					x[i] = [8]float64{math.Copysign(0, -1), 0, 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1)}[rng.IntN(8)]
				case "sorted":
					x[i] = float64(i) - float64(n)/2
				case "reversed":
					x[i] = float64(n-i) - float64(n)/2
				}
			}
			order, scratch := make([]int, n), make([]int, n)
			sortOrder(x, order, scratch, &keys)
			want := slices.Clone(x)
			slices.Sort(want)
			seen := make([]bool, n)
			for j, p := range order {
				if seen[p] {
					t.Fatalf("n %d, %s: position %d twice in the order", n, kind, p)
				}
				seen[p] = true
				if x[p] != want[j] {
					t.Fatalf("n %d, %s: sorted value %d is %v, want %v", n, kind, j, x[p], want[j])
				}
			}
		}
	}
}

// TestRankCasesFail makes sure that rankCases reach the failures too.
func TestRankCasesFail(t *testing.T) {
	fails := map[string]int{}
	for _, tc := range rankCases(rand.New(rand.NewPCG(61, 62))) {
		_, err := RankDiagnostics(tc.chains)
		if err != nil {
			for _, what := range []string{"R̂", "bulk-ESS", "tail-ESS"} {
				if strings.Contains(err.Error(), what+": ") {
					fails[what]++
				}
			}
		}
	}
	for _, what := range []string{"R̂", "bulk-ESS", "tail-ESS"} {
		if fails[what] == 0 {
			t.Errorf("no case makes %s fail: %v", what, fails)
		}
	}
}
