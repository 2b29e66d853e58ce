package diag

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// drawsOf returns K chains of T draws in D dimensions with element
// (c, t, i) = f(c, t, i).
func drawsOf(k, n, d int, f func(c, t, i int) float64) *Draws {
	x := NewDraws(k, n, d)
	for c := 0; c < k; c++ {
		for t := 0; t < n; t++ {
			for i := 0; i < d; i++ {
				x.Set(c, t, i, f(c, t, i))
			}
		}
	}
	return x
}

// ar1Draws returns draws whose coordinates are AR(1) processes with
// coefficient rho, coordinate i scaled by i+1 and shifted by i; chain 0 of
// the last coordinate is shifted further by shift.
func ar1Draws(rng *rand.Rand, k, n, d int, rho, shift float64) *Draws {
	x := NewDraws(k, n, d)
	for c := 0; c < k; c++ {
		for i := 0; i < d; i++ {
			var v float64
			for t := 0; t < n; t++ {
				v = rho*v + rng.NormFloat64()
				val := float64(i+1)*v + float64(i)
				if c == 0 && i == d-1 {
					val += shift
				}
				x.Set(c, t, i, val)
			}
		}
	}
	return x
}

// TestSummaryMatchesDefinitions recomputes every column of Summary from its
// definition with the package's exported functions and simple loops: the
// rank-normalised columns must be the bits of RankRhat, BulkESS and
// TailESS, the ESS of the mean that of ESS on the half-chains, and the
// rest agree to rounding.
func TestSummaryMatchesDefinitions(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 92))
	for _, tc := range []struct {
		name string
		x    *Draws
	}{
		{"AR(1) 4×301×3, odd n", ar1Draws(rng, 4, 301, 3, 0.6, 0)},
		{"AR(1) 2×200×2, a chain off", ar1Draws(rng, 2, 200, 2, 0.3, 2)},
		{"exponential 1×400×1", drawsOf(1, 400, 1, func(int, int, int) float64 { return rng.ExpFloat64() })},
		{"Cauchy 3×150×2", drawsOf(3, 150, 2, func(int, int, int) float64 { return rng.NormFloat64() / rng.NormFloat64() })},
		{"ties 4×100×1", drawsOf(4, 100, 1, func(int, int, int) float64 { return math.Round(3 * rng.NormFloat64()) })},
		{"short 3×9×2, half-chains of 4", drawsOf(3, 9, 2, func(int, int, int) float64 { return rng.NormFloat64() })},
	} {
		rows, err := Summary(tc.x)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, _, d := tc.x.Dims()
		if len(rows) != d {
			t.Fatalf("%s: %d rows for %d coordinates", tc.name, len(rows), d)
		}
		for i, row := range rows {
			chains := tc.x.Coordinate(nil, i)
			var all []float64
			for _, c := range chains {
				all = append(all, c...)
			}
			n := float64(len(all))
			var sum float64
			for _, v := range all {
				sum += v
			}
			mean := sum / n
			var ss, s4 float64
			for _, v := range all {
				ss += (v - mean) * (v - mean)
				s4 += math.Pow(v-mean, 4)
			}
			sd := math.Sqrt(ss / (n - 1))
			essMean := must(ESS(refSplit(chains)))
			sq := make([][]float64, len(chains))
			for c, x := range chains {
				for _, v := range x {
					sq[c] = append(sq[c], (v-mean)*(v-mean))
				}
			}
			evar := ss / n
			mcseSD := math.Sqrt((s4/n - evar*evar) / must(ESS(refSplit(sq))) / evar / 4)
			sorted := slices.Sorted(slices.Values(all))
			// ArviZ's _hdi, written out: the narrowest of the intervals
			// [x₍ⱼ₎, x₍ⱼ₊ₘ₎], the first if several are.
			m := int(math.Floor(0.94 * n))
			lo, hi := sorted[0], sorted[m]
			for j := 1; j+m < len(sorted); j++ {
				if sorted[j+m]-sorted[j] < hi-lo {
					lo, hi = sorted[j], sorted[j+m]
				}
			}
			for _, c := range []struct {
				name      string
				got, want float64
				tol       float64 // 0: the same bits
			}{
				{"mean", row.Mean, mean, 1e-13},
				{"sd", row.SD, sd, 1e-13},
				{"hdi_3%", row.HDI3, lo, 0},
				{"hdi_97%", row.HDI97, hi, 0},
				{"eti_3%", row.ETI3, refQuantile7(all, 0.03), 1e-14},
				{"eti_97%", row.ETI97, refQuantile7(all, 0.97), 1e-14},
				{"mcse_mean", row.MCSEMean, sd / math.Sqrt(essMean), 1e-13},
				{"mcse_sd", row.MCSESD, mcseSD, 1e-10},
				{"ess_mean", row.ESSMean, essMean, 0},
				{"ess_bulk", row.BulkESS, must(BulkESS(chains)), 0},
				{"ess_tail", row.TailESS, must(TailESS(chains)), 0},
				{"r_hat", row.Rhat, must(RankRhat(chains)), 0},
			} {
				if (c.tol == 0 && c.got != c.want) || !closeRel(c.got, c.want, c.tol+1e-300) {
					t.Errorf("%s: coordinate %d: %s = %.17g, want %.17g", tc.name, i, c.name, c.got, c.want)
				}
			}
		}
	}
}

// TestSummaryHand checks the intervals on draws x = j², j = 0…99, one
// chain: the HDI is the first 95 draws (widths (j+94)² − j² grow with j),
// [0, 94²]; the ETI interpolates at h = 99·0.03 = 2.97 and 99·0.97 =
// 96.03: 4 + 0.97·5 = 8.85 and 9216 + 0.03·193 = 9221.79.
func TestSummaryHand(t *testing.T) {
	x := drawsOf(1, 100, 1, func(_, j, _ int) float64 { return float64(j * j) })
	rows, err := Summary(x)
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if r.HDI3 != 0 || r.HDI97 != 94*94 || !closeRel(r.ETI3, 8.85, 1e-14) || !closeRel(r.ETI97, 9221.79, 1e-14) {
		t.Errorf("HDI [%v, %v], ETI [%v, %v]; want [0, 8836], [8.85, 9221.79]", r.HDI3, r.HDI97, r.ETI3, r.ETI97)
	}
	// The mean of j² is 99·199/6 = 3283.5.
	if r.Mean != 3283.5 {
		t.Errorf("mean %v, want 3283.5", r.Mean)
	}
	// A shorter interval later wins, the first of equals wins: draws
	// 0, 10, 11, …: ⌊0.94·20⌋ = 18, intervals [0, 27] and [10, 28] and
	// [11, 29]: the second is the first of the narrowest.
	y := drawsOf(1, 20, 1, func(_, j, _ int) float64 {
		if j == 0 {
			return 0
		}
		return float64(9 + j)
	})
	rows, err = Summary(y)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].HDI3 != 10 || rows[0].HDI97 != 28 {
		t.Errorf("HDI [%v, %v], want [10, 28]", rows[0].HDI3, rows[0].HDI97)
	}
}

// TestSummaryUndefined checks the NaN values and the error of a summary
// with a constant coordinate and one with a NaN draw; the good coordinate
// is summarised as if alone.
func TestSummaryUndefined(t *testing.T) {
	rng := rand.New(rand.NewPCG(93, 94))
	x := drawsOf(2, 50, 3, func(_, _, i int) float64 {
		switch i {
		case 1:
			return 7
		default:
			return rng.NormFloat64()
		}
	})
	x.Set(1, 3, 2, math.NaN())
	rows, err := Summary(x)
	want := "diag: Summary: 18 of 36 values are undefined (NaN); the first: coordinate 1, mcse_mean: all draws are identical"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	alone, err := Summary(drawsOf(2, 50, 1, func(c, s, _ int) float64 { return x.At(c, s, 0) }))
	if err != nil || rows[0] != alone[0] {
		t.Errorf("coordinate 0: %+v, alone %+v, %v", rows[0], alone[0], err)
	}
	c := rows[1]
	if c.Mean != 7 || c.SD != 0 || c.HDI3 != 7 || c.HDI97 != 7 || c.ETI3 != 7 || c.ETI97 != 7 {
		t.Errorf("constant coordinate: %+v", c)
	}
	for _, v := range []float64{c.MCSEMean, c.MCSESD, c.ESSMean, c.BulkESS, c.TailESS, c.Rhat} {
		if !math.IsNaN(v) {
			t.Errorf("constant coordinate: %+v, want NaN diagnostics", c)
		}
	}
	for _, v := range summaryValues(&rows[2]) {
		if !math.IsNaN(v) {
			t.Errorf("coordinate with NaN: %+v, want NaN throughout", rows[2])
		}
	}

	for _, tc := range []struct {
		x    *Draws
		want string
	}{
		{nil, "diag: Summary: nil draws"},
		{NewDraws(2, 3, 1), "diag: Summary: chains have 3 draws, need at least 4"},
	} {
		if rows, err := Summary(tc.x); rows != nil || err == nil || err.Error() != tc.want {
			t.Errorf("Summary = %v, %v; want nil, %q", rows, err, tc.want)
		}
	}
	// Two values symmetric about the mean: the squared deviations are
	// constant, so mcse_sd is undefined.
	sym := drawsOf(2, 8, 1, func(c, s, _ int) float64 { return float64(1 - 2*((c+s)%2)) })
	if rows, err := Summary(sym); err == nil || !strings.Contains(err.Error(), "mcse_sd: the squared deviations from the mean are all identical") || !math.IsNaN(rows[0].MCSESD) {
		t.Errorf("±1 draws: mcse_sd %v, %v", rows[0].MCSESD, err)
	}
}

// summaryValues returns the fields of r in the order of summaryColumns.
func summaryValues(r *SummaryRow) []float64 {
	var out []float64
	for _, c := range summaryColumns {
		out = append(out, c.value(r))
	}
	return out
}

// TestSummaryBitIdenticalAcrossGOMAXPROCS checks that the parallel
// summary does not depend on the number of goroutines.
func TestSummaryBitIdenticalAcrossGOMAXPROCS(t *testing.T) {
	x := ar1Draws(rand.New(rand.NewPCG(95, 96)), 3, 120, 7, 0.5, 1)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first []SummaryRow
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		rows, err := Summary(x)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = rows
			continue
		}
		for i := range rows {
			if rows[i] != first[i] {
				t.Errorf("GOMAXPROCS %d: row %d = %+v, with 1: %+v", procs, i, rows[i], first[i])
			}
		}
	}
}

func TestWriteSummary(t *testing.T) {
	rows := []SummaryRow{
		{Mean: 1.23456, SD: 0.5, HDI3: 0.3, HDI97: 2.1, ETI3: 0.31, ETI97: 2.2, MCSEMean: 0.012345, MCSESD: 0.0098, ESSMean: 1200.4, BulkESS: 1234.4, TailESS: 987.6, Rhat: 1.0042},
		{Mean: -12345.6, SD: 3e-5, HDI3: math.NaN(), HDI97: 1, ETI3: 1, ETI97: 1, MCSEMean: 1, MCSESD: 1, ESSMean: 3, BulkESS: 4, TailESS: math.NaN(), Rhat: 1.2},
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, rows, nil); err != nil {
		t.Fatal(err)
	}
	// Names left-aligned, numbers right-aligned; 4 significant digits, 2
	// for the standard errors, whole ESS, R̂ to 3 decimals.
	want := "" +
		"            mean     sd  hdi_3%  hdi_97%  eti_3%  eti_97%  mcse_mean  mcse_sd  ess_bulk  ess_tail  r_hat\n" +
		"θ[0]       1.235    0.5     0.3      2.1    0.31      2.2      0.012   0.0098      1234       988  1.004\n" +
		"θ[1]  -1.235e+04  3e-05     NaN        1       1        1          1        1         4       NaN  1.200\n"
	if b.String() != want {
		t.Errorf("table\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteSummary(&b, rows, []string{"alpha", "β"}); err != nil || !strings.HasPrefix(strings.Split(b.String(), "\n")[2], "β    ") {
		t.Errorf("names: %v\n%s", err, b.String())
	}
	if err := WriteSummary(&b, rows, []string{"a"}); err == nil || err.Error() != "diag: WriteSummary: 1 names for 2 rows" {
		t.Errorf("wrong number of names: %v", err)
	}

	// The CSV reads back to the same bits.
	b.Reset()
	if err := WriteSummaryCSV(&b, rows, []string{"a,b", "c"}); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(records[0], ",") != "name,mean,sd,hdi_3%,hdi_97%,eti_3%,eti_97%,mcse_mean,mcse_sd,ess_mean,ess_bulk,ess_tail,r_hat" {
		t.Errorf("header %q", records[0])
	}
	for i, rec := range records[1:] {
		if rec[0] != []string{"a,b", "c"}[i] {
			t.Errorf("name %q", rec[0])
		}
		for j, v := range summaryValues(&rows[i]) {
			got, err := strconv.ParseFloat(rec[j+1], 64)
			if err != nil || (got != v && !(math.IsNaN(got) && math.IsNaN(v))) {
				t.Errorf("row %d, %s: %q, want %v", i, records[0][j+1], rec[j+1], v)
			}
		}
	}
	if err := WriteSummaryCSV(&b, rows, []string{}); err == nil || err.Error() != "diag: WriteSummaryCSV: 0 names for 2 rows" {
		t.Errorf("wrong number of names: %v", err)
	}
}

// BenchmarkSummary times Summary, and RankDiagnostics against the three
// separate functions and the implementation they replaced, on one
// coordinate of the size of the Gaussian task's runs (50 chains × 12,000
// steps).
func BenchmarkSummary(b *testing.B) {
	rng := rand.New(rand.NewPCG(97, 98))
	for _, size := range []struct{ k, n, d int }{{4, 1000, 10}, {50, 12000, 1}} {
		x := ar1Draws(rng, size.k, size.n, size.d, 0.7, 0)
		b.Run(strconv.Itoa(size.k)+"x"+strconv.Itoa(size.n)+"x"+strconv.Itoa(size.d), func(b *testing.B) {
			for b.Loop() {
				if _, err := Summary(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	chains := ar1Draws(rng, 50, 12000, 1, 0.7, 0).Coordinate(nil, 0)
	b.Run("rank/shared", func(b *testing.B) {
		for b.Loop() {
			if _, err := RankDiagnostics(chains); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, impl := range []struct {
		name string
		f    [3]func([][]float64) (float64, error)
	}{
		{"separate", [3]func([][]float64) (float64, error){RankRhat, BulkESS, TailESS}},
		{"previous", [3]func([][]float64) (float64, error){prevRankRhat, prevBulkESS, prevTailESS}},
	} {
		b.Run("rank/"+impl.name, func(b *testing.B) {
			for b.Loop() {
				for _, f := range impl.f {
					if _, err := f(chains); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
