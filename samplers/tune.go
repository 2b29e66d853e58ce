package samplers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/samplers/diag"
)

// TuneSettings say how TuneStepSize compares step sizes.
type TuneSettings struct {
	// StepSizes are the candidate step sizes, each run in turn.
	StepSizes []float64
	// Steps is the length of each pilot run, Burn the steps at its start
	// left out.
	Steps, Burn int
	// Points is the most draws (positions of a chain after a step) the
	// kernel Stein discrepancy of a run is computed on: the kept steps are
	// thinned evenly, every chain's position at each.
	Points int
	// Seed seeds every pilot run alike, so the candidates differ by their
	// step size alone.
	Seed uint64
	// KSD is the Stein kernel's setting.
	KSD diag.KSDSettings
}

// DefaultTuneSettings returns nine candidates spaced by factors of two
// around eta (eta/16 to 16·eta), pilot runs of 2,000 steps of which the
// first 1,000 are left out, and at most 500 points for each KSD.
func DefaultTuneSettings(eta float64) TuneSettings {
	s := TuneSettings{Steps: 2000, Burn: 1000, Points: 500, Seed: 1, KSD: diag.DefaultKSDSettings()}
	for f := 1.0 / 16; f <= 16; f *= 2 {
		s.StepSizes = append(s.StepSizes, f*eta)
	}
	return s
}

// TuneResult is what TuneStepSize measured.
type TuneResult struct {
	// StepSize is the candidate of the smallest KSD.
	StepSize float64
	// StepSizes and KSD are the candidates and their runs' kernel Stein
	// discrepancies; +Inf for a run that diverged.
	StepSizes, KSD []float64
	// Errors hold, for each candidate, why its run gave no KSD (nil when it
	// gave one): a divergence, most often.
	Errors []error
}

// TuneStepSize chooses a step size by the kernel Stein discrepancy of
// short pilot runs, as Coullon, South & Nemeth (Statistics and Computing,
// 2023) tune SG-MCMC: for each candidate η it runs newKernel(η) from the
// positions theta0 of t's chains (coordinate-major, as State.Theta) for
// s.Steps steps, keeps the draws after s.Burn, thinned to at most
// s.Points, and computes diag.KSD of them against the full-data score
// ∇ log π that score writes at one position. The KSD measures bias as well
// as mixing: a step too small has not left θ_0, one too large samples a
// distorted posterior (an SG-MCMC sampler's bias grows with η, and a
// learned sampler run outside its training domain can be badly biased
// while its chains mix well). It returns the candidate of the smallest
// KSD; the error is non-nil only when no candidate gave one.
func TuneStepSize(ctx context.Context, t Target, newKernel func(eta float64) (Kernel, error), theta0 []float64,
	score func(theta, score []float64), s TuneSettings) (TuneResult, error) {
	d, k := t.Dim(), t.Chains()
	switch {
	case len(s.StepSizes) == 0:
		return TuneResult{}, errors.New("samplers: TuneStepSize: no candidate step sizes")
	case s.Steps < 1 || s.Burn < 0 || s.Burn >= s.Steps:
		return TuneResult{}, fmt.Errorf("samplers: TuneStepSize: %d steps with %d burnt, want 0 ≤ burn < steps", s.Steps, s.Burn)
	case s.Points < 2:
		return TuneResult{}, fmt.Errorf("samplers: TuneStepSize: %d points, want at least 2", s.Points)
	case len(theta0) != d*k:
		return TuneResult{}, fmt.Errorf("samplers: TuneStepSize: %d initial positions, want %d dimensions × %d chains", len(theta0), d, k)
	}
	// keep every thin-th step after the burn-in, every chain's position
	keep := s.Steps - s.Burn
	thin := max(1, (keep*k+s.Points-1)/s.Points)
	r := TuneResult{StepSize: math.NaN(), StepSizes: append([]float64(nil), s.StepSizes...)}
	best := math.Inf(1)
	for _, eta := range s.StepSizes {
		v, err := pilotKSD(ctx, newKernel, eta, theta0, score, d, k, thin, s)
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		r.KSD, r.Errors = append(r.KSD, v), append(r.Errors, err)
		if err == nil && v < best {
			best, r.StepSize = v, eta
		}
	}
	if math.IsNaN(r.StepSize) {
		return r, fmt.Errorf("samplers: TuneStepSize: no candidate ran to the end (the first: η = %g: %v)", s.StepSizes[0], r.Errors[0])
	}
	return r, nil
}

// pilotKSD runs one candidate and returns its KSD, +Inf on an error.
func pilotKSD(ctx context.Context, newKernel func(eta float64) (Kernel, error), eta float64, theta0 []float64,
	score func(theta, score []float64), d, k, thin int, s TuneSettings) (float64, error) {
	kern, err := newKernel(eta)
	if err != nil {
		return math.Inf(1), err
	}
	st, err := kern.Init(theta0, nil)
	if err != nil {
		return math.Inf(1), err
	}
	var x, sc [][]float64
	seen := 0
	hook := func(step int, st *State) error {
		if step <= s.Burn {
			return nil
		}
		if (step-s.Burn)%thin != 0 {
			return nil
		}
		for c := 0; c < k && len(x) < s.Points; c++ {
			p := make([]float64, d)
			for i := range p {
				p[i] = st.Theta[i*k+c]
			}
			g := make([]float64, d)
			score(p, g)
			x, sc = append(x, p), append(sc, g)
		}
		seen++
		return nil
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x74756e65)) // "tune"
	if err := Run(ctx, kern, rng, st, s.Steps, hook); err != nil {
		return math.Inf(1), err
	}
	if len(x) < 2 {
		return math.Inf(1), fmt.Errorf("samplers: TuneStepSize: %d draws kept after %d steps", len(x), s.Steps)
	}
	v, err := s.KSD.KSD(x, sc)
	if err != nil {
		return math.Inf(1), err
	}
	return v, nil
}
