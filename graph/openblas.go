//go:build openblas

package graph

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// With the build tag openblas, Gorgonia's and gonum's matrix products use
// OpenBLAS through cgo (Debian: apt-get install libopenblas-dev). The default
// build stays pure Go.
func init() {
	G.Use(netlib.Implementation{})
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
}

// BLAS names the BLAS implementation of this build.
const BLAS = "openblas"
