package samplers

import (
	"fmt"

	"gonum.org/v1/gonum/stat/distuv"
)

// RunawayTemperature is the kinetic temperature beyond which a chain's
// momenta have run away: a chain at equilibrium in any dimension D has D·T
// distributed as χ²_D, which exceeds 100·D with probability below 10⁻²⁰.
const RunawayTemperature = 100

// KineticTemperatures returns the kinetic temperature of each of k chains
// from their momenta p (length D·k, coordinate-major): the chain's mean of
// p_i² over its D coordinates.
//
// SGHMC and NNSGHMC sample the momenta from N(0, I) at equilibrium, so a
// chain there has temperature 1 within about √(2/D). A chain above it is
// heated, by gradient noise that its friction does not carry off or by a step
// size too large for the target, and its positions spread wider than the
// target's whatever its mixing diagnostics say; a chain below it is damped
// more than its injected noise makes up for; a chain above
// RunawayTemperature samples nothing like the target. The figure says
// nothing during burn-in, when the momenta still carry what the chains'
// starts gave them.
func KineticTemperatures(p []float64, k int) ([]float64, error) {
	if k <= 0 || len(p) == 0 || len(p)%k != 0 {
		return nil, fmt.Errorf("kinetic temperature: %d momenta are not D coordinates of %d chains", len(p), k)
	}
	d := len(p) / k
	t := make([]float64, k)
	for i := 0; i < d; i++ {
		for c, v := range p[i*k : (i+1)*k] {
			t[c] += v * v
		}
	}
	for c := range t {
		t[c] /= float64(d)
	}
	return t, nil
}

// HotLevel is the share of the coordinates of chains at equilibrium that
// HotFraction finds hot.
const HotLevel = 1e-3

// HotFraction returns the share of the D coordinates that run hot in k
// chains with momenta p (length D·k, coordinate-major): those whose
// temperature across the chains, the chains' mean of p_i², lies above the
// 1 − HotLevel quantile of its distribution at equilibrium, χ²_k/k. At
// equilibrium the share is HotLevel whatever k and D. A block of coordinates
// that runs hot (the last layer of a network, heated by gradient noise its
// friction does not carry off, say) raises it while the kinetic temperature,
// a mean over all D coordinates, barely moves. The mean over k chains is a
// noisy reading of one coordinate's temperature: with 20 chains a
// coordinate at temperature 4 counts as hot 94 % of the time, with 4 chains
// 33 %.
func HotFraction(p []float64, k int) (float64, error) {
	if k <= 0 || len(p) == 0 || len(p)%k != 0 {
		return 0, fmt.Errorf("hot fraction: %d momenta are not D coordinates of %d chains", len(p), k)
	}
	limit := distuv.ChiSquared{K: float64(k)}.Quantile(1 - HotLevel)
	d, hot := len(p)/k, 0
	for i := 0; i < d; i++ {
		ss := 0.0
		for _, v := range p[i*k : (i+1)*k] {
			ss += v * v
		}
		if !(ss <= limit) { // NaN counts as hot
			hot++
		}
	}
	return float64(hot) / float64(d), nil
}
