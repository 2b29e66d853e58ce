//go:build openblas

package main

// With the build tag openblas, matrix products use OpenBLAS (see package
// graph/openblas); the default build uses gonum's pure Go.
import _ "github.com/metasgmcmc/metasgmcmc/graph/openblas"
