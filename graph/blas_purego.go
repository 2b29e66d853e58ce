//go:build !openblas

package graph

// BLAS names the BLAS implementation of this build: gonum's pure Go.
const BLAS = "gonum (pure Go)"
