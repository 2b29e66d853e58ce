//go:build !amd64 || purego

package coordnet

// useSIMD is false: there are no vector kernels for this architecture, or
// the build tag purego switched them off.
var useSIMD = simdAvailable

const simdAvailable = false

// evalSIMD does nothing here: evalGo evaluates every row.
func (s *ChainNet) evalSIMD(out, x, g []float64, c int) int { return 0 }

// grad2SIMD does nothing here: grad2 evaluates every row.
func (n *GradNet) grad2SIMD(f, d0, d1, x0, x1 []float64) int { return 0 }

// grad3SIMD does nothing here: grad3 evaluates every row.
func (n *GradNet) grad3SIMD(f, d1, x0, x1, x2 []float64) int { return 0 }

// gemmSIMD does nothing here: mulAdd's loops add every row.
func gemmSIMD(c, a, w []float64, rows, fin, fout int) int { return 0 }
