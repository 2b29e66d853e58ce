//go:build openblas

package openblas

import (
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// Importing the package switches Gorgonia and gonum to OpenBLAS, and a
// product through it is right.
func TestImportSwitchesToOpenBLAS(t *testing.T) {
	if _, ok := G.WhichBLAS().(netlib.Implementation); !ok {
		t.Errorf("Gorgonia uses %T, want netlib", G.WhichBLAS())
	}
	if _, ok := blas64.Implementation().(netlib.Implementation); !ok {
		t.Errorf("blas64 uses %T, want netlib", blas64.Implementation())
	}
	if _, ok := blas32.Implementation().(netlib.Implementation); !ok {
		t.Errorf("blas32 uses %T, want netlib", blas32.Implementation())
	}
	if got := blas64.Dot(blas64.Vector{N: 3, Inc: 1, Data: []float64{1, 2, 3}}, blas64.Vector{N: 3, Inc: 1, Data: []float64{4, 5, 6}}); got != 32 {
		t.Errorf("OpenBLAS ddot = %v, want 32", got)
	}
}
