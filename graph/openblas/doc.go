// Package openblas switches Gorgonia's and gonum's matrix products to
// OpenBLAS, through cgo, when a program imports it for its side effect:
//
//	import _ "github.com/metasgmcmc/metasgmcmc/graph/openblas"
//
// The package's code is built only with the build tag openblas, so that
// the module builds and tests without cgo or OpenBLAS (every package of
// `go build ./...` then uses gonum's pure-Go BLAS): a program imports it
// from a file of its own with the build constraint openblas, and is built
// with `go build -tags openblas` where OpenBLAS is installed (Debian:
// apt-get install libopenblas-dev). Without the tag the import does
// nothing. The commands under cmd/ do this in their openblas.go.
//
// The switch is global: it calls gorgonia.Use, blas64.Use and blas32.Use
// in init, so it takes effect before main runs and applies to every graph
// and gonum product of the program. It also sets OpenBLAS to one thread
// unless OPENBLAS_NUM_THREADS or OMP_NUM_THREADS is set: the programs
// already run their chain groups and chunks on goroutines, and OpenBLAS's
// own threads beside them spin (a piano-gru training unroll on 2 cores took
// 4 times as long, most of it in the kernel).
package openblas
