package samplers

import "golang.org/x/sys/cpu"

// useSIMD enables the AVX2 kernels of shallowNet.rows (tests switch it off
// to compare).
var useSIMD = simdAvailable

// simdAvailable reports whether the processor has AVX2.
var simdAvailable = cpu.X86.HasAVX2

// rowsSIMD evaluates the network on the longest prefix of out whose length
// is a multiple of eight with the AVX2 kernels, and returns its length.
func (s *shallowNet) rowsSIMD(out, x, g []float64, c int) int {
	n := len(out) &^ 7
	if !useSIMD || n == 0 {
		return 0
	}
	if g == nil {
		shallowRows2AVX2(&out[0], &x[0], &s.tab[0], &s.w[0], n, s.h, s.stride, c, s.k, s.b1)
	} else {
		shallowRows3AVX2(&out[0], &x[0], &g[0], &s.tab[0], &s.w[0], n, s.h, s.stride, c, s.k, s.b1)
	}
	return n
}

//go:noescape
func shallowRows2AVX2(out, x, tab, w *float64, n, h, stride, c, k int, b1 float64)

//go:noescape
func shallowRows3AVX2(out, x, gs, tab, w *float64, n, h, stride, c, k int, b1 float64)
