package samplers

import "fmt"

// KineticTemperature returns the kinetic temperature of k chains from their
// momenta p (length D·k, coordinate-major): each chain's mean of p_i² over
// its D coordinates, averaged over the chains (mean) and the largest of them
// (max).
//
// SGHMC and NNSGHMC sample the momenta from N(0, I) at equilibrium, so a
// chain there has temperature 1 within about √(2/D). A chain above it is
// heated, by gradient noise that its friction does not carry off or by a step
// size too large for the target, and its positions spread wider than the
// target's whatever its mixing diagnostics say; a chain below it is damped
// more than its injected noise makes up for. The figure says nothing during
// burn-in, when the momenta still carry what the chains' starts gave them.
func KineticTemperature(p []float64, k int) (mean, max float64, err error) {
	if k <= 0 || len(p) == 0 || len(p)%k != 0 {
		return 0, 0, fmt.Errorf("kinetic temperature: %d momenta are not D coordinates of %d chains", len(p), k)
	}
	d := len(p) / k
	sum := make([]float64, k)
	for i := 0; i < d; i++ {
		for c, v := range p[i*k : (i+1)*k] {
			sum[c] += v * v
		}
	}
	for c, s := range sum {
		t := s / float64(d)
		mean += t
		if c == 0 || t > max {
			max = t
		}
	}
	return mean / float64(k), max, nil
}
