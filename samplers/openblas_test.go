//go:build openblas

package samplers

// With the build tag openblas, the tests and benchmarks of this package
// run their matrix products on OpenBLAS (see package graph/openblas).
import _ "github.com/metasgmcmc/metasgmcmc/graph/openblas"
