package diag

import (
	"errors"
	"fmt"
)

// CoordinateChains rearranges a run's positions into the chains of each
// coordinate, the input of ESS, SplitRhat, MCSE, RankRhat, BulkESS and
// TailESS. positions[t] is the state of k chains after one step, in the
// project's coordinate-major (D, K) layout: coordinate i of chain c is
// positions[t][i*k+c]. The result out[i][c][t] is draw t of coordinate i
// in chain c, so out[i] is (chain, draw) ordered as the diagnostics want.
//
// CoordinateChains returns nil and an error if k < 1, there are no
// positions, or a position is empty or not of length D·k with the D of
// positions[0].
func CoordinateChains(positions [][]float64, k int) ([][][]float64, error) {
	switch {
	case k < 1:
		return nil, fmt.Errorf("diag: CoordinateChains: %d chains, need at least 1", k)
	case len(positions) == 0:
		return nil, errors.New("diag: CoordinateChains: no positions")
	}
	size := len(positions[0])
	if size == 0 || size%k != 0 {
		return nil, fmt.Errorf("diag: CoordinateChains: position 0 has length %d, not a positive multiple of %d chains", size, k)
	}
	d, n := size/k, len(positions)
	out := make([][][]float64, d)
	for i := range out {
		out[i] = make([][]float64, k)
		for c := range out[i] {
			out[i][c] = make([]float64, n)
		}
	}
	for t, theta := range positions {
		if len(theta) != size {
			return nil, fmt.Errorf("diag: CoordinateChains: position %d has length %d, position 0 has %d", t, len(theta), size)
		}
		for i := 0; i < d; i++ {
			for c := 0; c < k; c++ {
				out[i][c][t] = theta[i*k+c]
			}
		}
	}
	return out, nil
}
