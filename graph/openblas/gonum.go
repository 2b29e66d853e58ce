//go:build !openblas

package openblas

// Describe names the BLAS the products run on: without the build tag
// openblas, gonum's pure-Go BLAS.
func Describe() string { return "gonum's pure-Go BLAS (built without the tag openblas)" }

// core names the kernels in use: none without OpenBLAS.
func core() string { return "" }

// bestCore names the CPU's best OpenBLAS kernel family: none matters
// without OpenBLAS.
func bestCore() string { return "" }
