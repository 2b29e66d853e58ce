//go:build !amd64

package samplers

// useSIMD is false: there are no vector kernels for this architecture.
var useSIMD = simdAvailable

const simdAvailable = false

// rowsSIMD does nothing here: rowsGo evaluates every row.
func (s *shallowNet) rowsSIMD(out, x, g []float64, c int) int { return 0 }
