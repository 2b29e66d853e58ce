package spans

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// pcgNormal draws what rand.New(rand.NewPCG(hi, lo)).NormFloat64 draws, bit
// for bit, over enough draws from several seeds to pass through the
// ziggurat's wedges and the base strip's tail many times.
func TestPCGNormalsMatchTheStandardLibrary(t *testing.T) {
	const n = 1 << 20
	for _, seed := range [][2]uint64{{0, 0}, {1, 2}, {0xdeadbeef, 7}, {1<<63 + 5, 1<<64 - 1}} {
		g := pcgNormal{hi: seed[0], lo: seed[1]}
		got := make([]float64, n)
		g.fill(got[:n/2])
		g.fill(got[n/2:]) // the state carries over between calls
		rng := rand.New(rand.NewPCG(seed[0], seed[1]))
		tails := 0
		for i, x := range got {
			if want := rng.NormFloat64(); x != want {
				t.Fatalf("seed %v: draw %d is %v, want %v", seed, i, x, want)
			}
			if x > 3.442619855899 || x < -3.442619855899 {
				tails++
			}
		}
		if tails < 100 {
			t.Errorf("seed %v: %d draws beyond the base strip's edge, too few to test its tail", seed, tails)
		}
		if g.uint64() != rng.Uint64() {
			t.Errorf("seed %v: the generators' states differ after the draws", seed)
		}
	}
}

// BenchmarkNormals times a step's worth of draws (a 20-chain mnist-nt
// step's 669,000) by Normals and by the standard library's NormFloat64 on
// the same spans, alternately, and reports the ratio of their median times
// (this machine's timings drift by tens of percent between runs).
//
//	go test ./internal/spans -run '^$' -bench Normals -cpu 1 -benchtime 50x
func BenchmarkNormals(b *testing.B) {
	x := make([]float64, 669_000)
	var ours, std []float64
	for i := 0; i < b.N; i++ {
		start := time.Now()
		Normals(rand.New(rand.NewPCG(1, 2)), x)
		ours = append(ours, float64(time.Since(start).Nanoseconds()))
		start = time.Now()
		for lo := 0; lo < len(x); lo += ElementSpan {
			r := rand.New(rand.NewPCG(uint64(i), uint64(lo)))
			for j := lo; j < min(lo+ElementSpan, len(x)); j++ {
				x[j] = r.NormFloat64()
			}
		}
		std = append(std, float64(time.Since(start).Nanoseconds()))
	}
	sort.Float64s(ours)
	sort.Float64s(std)
	n := float64(len(x))
	b.ReportMetric(ours[len(ours)/2]/n, "ns/draw")
	b.ReportMetric(std[len(std)/2]/n, "stdlib-ns/draw")
	b.ReportMetric(std[len(std)/2]/ours[len(ours)/2], "stdlib/ours")
}
