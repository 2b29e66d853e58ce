//go:build !purego

package coordnet

import "golang.org/x/sys/cpu"

// useSIMD enables the AVX2 kernels of ChainNet and GradNet (tests switch
// it off to compare).
var useSIMD = simdAvailable

// simdAvailable reports whether the processor has AVX2.
var simdAvailable = cpu.X86.HasAVX2

// evalSIMD evaluates the network on the longest prefix of out whose length
// is a multiple of eight with the AVX2 kernels, and returns its length.
func (s *ChainNet) evalSIMD(out, x, g []float64, c int) int {
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

// grad2SIMD evaluates InputGrad2 on the longest prefix of f whose length is
// a multiple of four with the AVX2 kernel, and returns its length.
func (n *GradNet) grad2SIMD(f, d0, d1, x0, x1 []float64) int {
	m := len(f) &^ 3
	if !useSIMD || m == 0 {
		return 0
	}
	gradRows2AVX2(&f[0], &d0[0], &d1[0], &x0[0], &x1[0], &n.packed[0], m, n.h, n.b1)
	return m
}

// grad3SIMD is grad2SIMD for InputGrad3.
func (n *GradNet) grad3SIMD(f, d1, x0, x1, x2 []float64) int {
	m := len(f) &^ 3
	if !useSIMD || m == 0 {
		return 0
	}
	gradRows3AVX2(&f[0], &d1[0], &x0[0], &x1[0], &x2[0], &n.packed[0], m, n.h, n.b1)
	return m
}

//go:noescape
func gradRows2AVX2(f, du, dx, u, x, w *float64, n, h int, b1 float64)

//go:noescape
func gradRows3AVX2(f, dx, u, x, gs, w *float64, n, h int, b1 float64)
