//go:build openblas

package nnkernel_test

// With the build tag openblas, the step graph of the tests and benchmarks
// of this package (train.BuildStep) runs its matrix products on OpenBLAS
// (see package graph/openblas).
import _ "github.com/metasgmcmc/metasgmcmc/graph/openblas"
