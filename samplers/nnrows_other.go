//go:build !amd64

package samplers

// useSIMD is false: there are no vector kernels for this architecture.
var useSIMD = simdAvailable

const simdAvailable = false

// rowsSIMD does nothing here: rowsGo evaluates every row.
func (s *shallowNet) rowsSIMD(out, x, g []float64, c int) int { return 0 }

// q2RowsSIMD does nothing here: q2 evaluates every row.
func (n *gradNet) q2RowsSIMD(f, du, dx, u, x []float64) int { return 0 }

// d3RowsSIMD does nothing here: d3 evaluates every row.
func (n *gradNet) d3RowsSIMD(f, dx, u, x, g []float64) int { return 0 }
