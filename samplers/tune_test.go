package samplers_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// TestTuneStepSizeRanksByBias: on a standard 2-D Gaussian, SGLD from θ = 4
// at a step too small to leave it, at a good step and at one whose
// stationary law is four times too wide: the KSD ranks the good one first
// and the other two far behind, and a step that diverges is reported as
// such, not chosen.
func TestTuneStepSizeRanksByBias(t *testing.T) {
	const k = 8
	target := samplerstest.GaussianTarget(t, []float64{0, 0}, []float64{1, 0, 0, 1}, k)
	sgld := func(eta float64) (samplers.Kernel, error) {
		return samplers.NewSGLD(target, samplers.SGLDSettings{StepSize: samplers.Constant(eta)})
	}
	theta0 := make([]float64, 2*k)
	for i := range theta0 {
		theta0[i] = 4
	}
	score := func(w, g []float64) {
		for i, v := range w {
			g[i] = -v
		}
	}
	s := samplers.DefaultTuneSettings(0.05)
	s.StepSizes = []float64{1e-5, 0.05, 1.5, 2.5}
	r, err := samplers.TuneStepSize(context.Background(), target, sgld, theta0, score, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("KSD %v", r.KSD)
	if r.StepSize != 0.05 || !(r.KSD[0] > 3*r.KSD[1]) || !(r.KSD[2] > 3*r.KSD[1]) {
		t.Errorf("chose η = %v with KSD %v; want 0.05, the others more than three times worse", r.StepSize, r.KSD)
	}
	var div *samplers.DivergenceError
	if !math.IsInf(r.KSD[3], 1) || !errors.As(r.Errors[3], &div) {
		t.Errorf("η = 2.5: KSD %v, error %v; want +Inf and the divergence", r.KSD[3], r.Errors[3])
	}
	// a grid where every run diverges is an error
	s.StepSizes = []float64{3, 4}
	if _, err := samplers.TuneStepSize(context.Background(), target, sgld, theta0, score, s); err == nil {
		t.Error("every candidate diverged, no error")
	}
}
