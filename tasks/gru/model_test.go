package gru

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/tasks/music"
)

// randomSequence returns T frames with each key on with probability p.
func randomSequence(rng *rand.Rand, T int, p float64) music.Sequence {
	roll := make([]uint8, T*Keys)
	for i := range roll {
		if rng.Float64() < p {
			roll[i] = 1
		}
	}
	return music.Sequence{T: T, Roll: roll}
}

// randomTheta returns positions of k chains with N(0, σ²) entries.
func randomTheta(rng *rand.Rand, h, k int, sigma float64) []float64 {
	theta := make([]float64, Layout{H: h}.Dim()*k)
	for i := range theta {
		theta[i] = sigma * rng.NormFloat64()
	}
	return theta
}

func relErr(a, b []float64) float64 {
	num, den := 0.0, 0.0
	for i := range a {
		num = math.Max(num, math.Abs(a[i]-b[i]))
		den = math.Max(den, math.Abs(b[i]))
	}
	return num / den
}

func TestAgainstOracle(t *testing.T) {
	const H, K, T = 5, 3, 150
	rng := rand.New(rand.NewPCG(1, 2))
	seq := randomSequence(rng, T, 0.1)
	theta := randomTheta(rng, H, K, 0.5)
	o := newOracle(H, K)
	wantNLL := make([]float64, K)
	wantGrad := make([]float64, len(theta))
	o.nllGrad(theta, seq, 2.5, wantNLL, wantGrad)
	for _, S := range []int{1, 7, 16, 64, 128} {
		m, err := NewModel(Config{Hidden: H, Chains: K, Segment: S})
		if err != nil {
			t.Fatal(err)
		}
		nll := make([]float64, K)
		grad := make([]float64, len(theta))
		if err := m.NLLGrad(theta, seq, 2.5, nll, grad); err != nil {
			t.Fatal(err)
		}
		ll := make([]float64, K)
		if err := m.LogLik(theta, seq, ll); err != nil {
			t.Fatal(err)
		}
		for k := range ll {
			ll[k] = -ll[k]
		}
		t.Logf("S=%d nll %v want %v: err %.3g, loglik err %.3g, grad err %.3g", S, nll, wantNLL, relErr(nll, wantNLL), relErr(ll, wantNLL), relErr(grad, wantGrad))
		m.Close()
	}
	_ = graph.Float64
}
