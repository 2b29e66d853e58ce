package diag

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// refKSD is the KSD written from its definition, independently of ksd.go:
// the double sum over all n² pairs of
//
//	k_p(x, y) = s(x)·s(y) k + s(x)·∇_y k + s(y)·∇_x k + tr(∇_x∇_y k),
//
// with the derivatives of k(x, y) = (c² + ‖x − y‖²)^β taken by central
// finite differences of k rather than from their closed forms.
func refKSD(x, score [][]float64, c, beta float64) float64 {
	kern := func(x, y []float64) float64 {
		var r2 float64
		for a := range x {
			r2 += (x[a] - y[a]) * (x[a] - y[a])
		}
		return math.Pow(c*c+r2, beta)
	}
	const h = 1e-4
	shift := func(v []float64, a int, by float64) []float64 {
		w := append([]float64(nil), v...)
		w[a] += by
		return w
	}
	n, d := len(x), len(x[0])
	var sum float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			xi, xj := x[i], x[j]
			kp := 0.0
			for a := 0; a < d; a++ {
				kp += score[i][a] * score[j][a] * kern(xi, xj)
				gradX := (kern(shift(xi, a, h), xj) - kern(shift(xi, a, -h), xj)) / (2 * h)
				gradY := (kern(xi, shift(xj, a, h)) - kern(xi, shift(xj, a, -h))) / (2 * h)
				kp += score[i][a]*gradY + score[j][a]*gradX
				kp += (kern(shift(xi, a, h), shift(xj, a, h)) - kern(shift(xi, a, h), shift(xj, a, -h)) -
					kern(shift(xi, a, -h), shift(xj, a, h)) + kern(shift(xi, a, -h), shift(xj, a, -h))) / (4 * h * h)
			}
			sum += kp
		}
	}
	return math.Sqrt(sum) / float64(n)
}

// gaussianSample returns n draws of N(mu·1, I) in d dimensions and their
// scores under N(0, I), −x.
func gaussianSample(rng *rand.Rand, n, d int, mu float64) (x, score [][]float64) {
	x, score = make([][]float64, n), make([][]float64, n)
	for j := range x {
		x[j], score[j] = make([]float64, d), make([]float64, d)
		for a := range x[j] {
			x[j][a] = mu + rng.NormFloat64()
			score[j][a] = -x[j][a]
		}
	}
	return x, score
}

func TestKSDAgainstDoubleSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	randomScores := func(n, d int) (x, score [][]float64) {
		x, score = make([][]float64, n), make([][]float64, n)
		for j := range x {
			x[j], score[j] = make([]float64, d), make([]float64, d)
			for a := range x[j] {
				x[j][a] = 2 * rng.NormFloat64()
				score[j][a] = 3 * rng.NormFloat64()
			}
		}
		return x, score
	}
	for _, tc := range []struct {
		name     string
		n, d     int
		settings KSDSettings
		true     bool // scores of N(0, I) at N(0, I) draws, or arbitrary
	}{
		{"one sample", 1, 2, DefaultKSDSettings(), false},
		{"1-D, default", 7, 1, DefaultKSDSettings(), false},
		{"2-D, default, true scores", 20, 2, DefaultKSDSettings(), true},
		{"3-D, c = 0.5, β = −0.3, past one block", 33, 3, KSDSettings{C: 0.5, Beta: -0.3}, false},
		{"5-D, c = 2, β = −0.9, three blocks", 65, 5, KSDSettings{C: 2, Beta: -0.9}, false},
		{"4-D, c = 1, β = −2", 40, 4, KSDSettings{C: 1, Beta: -2}, true},
	} {
		var x, score [][]float64
		if tc.true {
			x, score = gaussianSample(rng, tc.n, tc.d, 0)
		} else {
			x, score = randomScores(tc.n, tc.d)
		}
		got, err := tc.settings.KSD(x, score)
		want := refKSD(x, score, tc.settings.C, tc.settings.Beta)
		if err != nil || !closeRel(got, want, 1e-6) {
			t.Errorf("%s: KSD = %.12g, %v; finite-difference double sum %.12g", tc.name, got, err, want)
		}
	}
	// The default settings are those of KSD.
	x, score := gaussianSample(rng, 10, 2, 0)
	a, _ := KSD(x, score)
	b, _ := DefaultKSDSettings().KSD(x, score)
	if a != b || DefaultKSDSettings() != (KSDSettings{C: 1, Beta: -0.5}) {
		t.Errorf("KSD %v and DefaultKSDSettings().KSD %v differ, or the defaults are %+v", a, b, DefaultKSDSettings())
	}
}

// TestKSDSeparates checks that the KSD tells exact samples of N(0, I) from
// samples of N(0.5·1, I) scored under N(0, I), at n = 500 in 3-D. The
// population KSD² of the shifted sample is ‖μ‖² E[k(x, x')] ≈ 0.75·0.4
// (Stein's identity under the sampled Gaussian), the V-statistic of the
// exact one about E[‖s‖² + D]/n = 6/500; so about 0.55 against 0.11.
func TestKSDSeparates(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	const n, d = 500, 3
	exact, err := KSD(gaussianSample(rng, n, d, 0))
	if err != nil {
		t.Fatal(err)
	}
	shifted, err := KSD(gaussianSample(rng, n, d, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("KSD exact %.4f, shifted %.4f", exact, shifted)
	if shifted < 3*exact {
		t.Errorf("KSD of the shifted sample %.4g is not 3× that of the exact one %.4g", shifted, exact)
	}
	if exact > 0.2 || shifted < 0.4 {
		t.Errorf("KSD exact %.4g, shifted %.4g: want about 0.11 and 0.55", exact, shifted)
	}
}

// TestKSDShrinks checks that the KSD of exact samples falls towards 0 as
// the sample grows, as √(6/n) in 3-D (the V-statistic's diagonal).
func TestKSDShrinks(t *testing.T) {
	rng := rand.New(rand.NewPCG(75, 76))
	prev := math.Inf(1)
	for _, n := range []int{100, 400, 1600} {
		ksd, err := KSD(gaussianSample(rng, n, 3, 0))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("n = %d: KSD %.4f, √(6/n) = %.4f", n, ksd, math.Sqrt(6/float64(n)))
		if ksd >= prev*0.75 {
			t.Errorf("n = %d: KSD %.4g did not fall from %.4g", n, ksd, prev)
		}
		if r := ksd / math.Sqrt(6/float64(n)); r < 0.8 || r > 1.5 {
			t.Errorf("n = %d: KSD %.4g is %.2f× √(6/n)", n, ksd, r)
		}
		prev = ksd
	}
}

// TestKSDBitIdenticalAcrossGOMAXPROCS checks that the fixed partition
// makes the result independent of the number of goroutines.
func TestKSDBitIdenticalAcrossGOMAXPROCS(t *testing.T) {
	x, score := gaussianSample(rand.New(rand.NewPCG(77, 78)), 300, 4, 0.2)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first float64
	for _, procs := range []int{1, 2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		got, err := KSD(x, score)
		if err != nil {
			t.Fatal(err)
		}
		if procs == 1 {
			first = got
		} else if math.Float64bits(got) != math.Float64bits(first) {
			t.Errorf("GOMAXPROCS %d: KSD %.17g, with 1: %.17g", procs, got, first)
		}
	}
}

// TestKSDDraws checks that KSDDraws is KSD of the draws in (chain, draw)
// order, whether or not the Draws has spare room.
func TestKSDDraws(t *testing.T) {
	rng := rand.New(rand.NewPCG(79, 80))
	const k, steps, d = 3, 40, 2
	x, s := NewDraws(k, 0, d), NewDraws(k, 0, d)
	pos, sc := make([]float64, d*k), make([]float64, d*k)
	for range steps {
		for j := range pos {
			pos[j] = rng.NormFloat64()
			sc[j] = -pos[j]
		}
		if err := x.AppendCoordinateMajor(pos); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendCoordinateMajor(sc); err != nil {
			t.Fatal(err)
		}
	}
	var rows, scores [][]float64
	for c := 0; c < k; c++ {
		for i := 0; i < steps; i++ {
			rows, scores = append(rows, x.Draw(c, i)), append(scores, s.Draw(c, i))
		}
	}
	want, err := KSD(rows, scores)
	if err != nil {
		t.Fatal(err)
	}
	for _, compact := range []bool{false, true} {
		if compact {
			x.Raw()
			s.Raw()
		}
		if got, err := KSDDraws(x, s); err != nil || got != want {
			t.Errorf("compact %t: KSDDraws = %v, %v; KSD of the rows %v", compact, got, err, want)
		}
	}
}

func TestKSDErrors(t *testing.T) {
	ok := [][]float64{{0, 1}, {1, 0}}
	nan := math.NaN()
	for _, tc := range []struct {
		name     string
		x, score [][]float64
		settings KSDSettings
		want     string
	}{
		{"no samples", nil, nil, DefaultKSDSettings(), "diag: KSD: no samples"},
		{"score count", ok, ok[:1], DefaultKSDSettings(), "diag: KSD: 1 scores for 2 samples"},
		{"empty sample", [][]float64{{}}, [][]float64{{}}, DefaultKSDSettings(), "sample 0 is empty"},
		{"ragged sample", [][]float64{{0, 1}, {1}}, ok, DefaultKSDSettings(), "sample 1 has length 1 and its score 2, sample 0 has 2"},
		{"ragged score", ok, [][]float64{{0, 1}, {1, 2, 3}}, DefaultKSDSettings(), "sample 1 has length 2 and its score 3"},
		{"NaN sample", [][]float64{{0, 1}, {nan, 0}}, ok, DefaultKSDSettings(), "sample 1 has a non-finite value"},
		{"Inf score", ok, [][]float64{{math.Inf(1), 1}, {1, 0}}, DefaultKSDSettings(), "score 0 has a non-finite value"},
		{"C = 0", ok, ok, KSDSettings{C: 0, Beta: -0.5}, "invalid settings C = 0, Beta = -0.5"},
		{"Beta = 0", ok, ok, KSDSettings{C: 1, Beta: 0}, "invalid settings"},
		{"Beta NaN", ok, ok, KSDSettings{C: 1, Beta: nan}, "invalid settings"},
		{"C +Inf", ok, ok, KSDSettings{C: math.Inf(1), Beta: -1}, "invalid settings"},
	} {
		v, err := tc.settings.KSD(tc.x, tc.score)
		if err == nil || !math.IsNaN(v) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "diag: KSD: ") {
			t.Errorf("%s: KSD = %v, %v; want NaN and an error containing %q", tc.name, v, err, tc.want)
		}
	}
	a, b := NewDraws(2, 3, 2), NewDraws(2, 4, 2)
	for _, tc := range []struct {
		name     string
		x, score *Draws
		want     string
	}{
		{"nil", nil, a, "diag: KSDDraws: nil draws"},
		{"shapes", a, b, "diag: KSDDraws: draws of 2×3×2 and scores of 2×4×2"},
		{"no draws", NewDraws(2, 0, 2), NewDraws(2, 0, 2), "diag: KSDDraws: no draws"},
	} {
		if v, err := KSDDraws(tc.x, tc.score); err == nil || !math.IsNaN(v) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: KSDDraws = %v, %v; want NaN and %q", tc.name, v, err, tc.want)
		}
	}
}

func BenchmarkKSD(b *testing.B) {
	x, score := gaussianSample(rand.New(rand.NewPCG(1, 1)), 2000, 10, 0)
	for b.Loop() {
		if _, err := KSD(x, score); err != nil {
			b.Fatal(err)
		}
	}
}
