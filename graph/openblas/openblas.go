//go:build openblas

package openblas

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

func init() {
	G.Use(netlib.Implementation{})
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
}
