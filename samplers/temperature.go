package samplers

import "fmt"

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
