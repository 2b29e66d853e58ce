//go:build !purego

package coordnet

// gemmSIMD adds A·W to C (C rows × fout, A rows × fin, W fin × fout,
// row-major) for the longest prefix of rows that is a multiple of four,
// with the AVX2 kernel, which sums each element's products in the order
// of the scalar loop; it returns the number of rows done, 0 where the
// kernel does not apply (no AVX2, fout not a multiple of eight).
func gemmSIMD(c, a, w []float64, rows, fin, fout int) int {
	r := rows &^ 3
	if !useSIMD || r == 0 || fin == 0 || fout%8 != 0 {
		return 0
	}
	_, _, _ = c[r*fout-1], a[r*fin-1], w[fin*fout-1] // bounds, before the kernel reads
	gemmAVX2(&c[0], &a[0], &w[0], r, fin, fout)
	return r
}

//go:noescape
func gemmAVX2(c, a, w *float64, rows, fin, fout int)
