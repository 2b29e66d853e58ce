//go:build openblas

package openblas

import (
	"os"
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

// OpenBLAS runs its products on one thread unless the environment says
// otherwise: its own threads beside Go's goroutines (which already run the
// chain groups and chunks in parallel) spun in the kernel, and one training
// unroll of piano-gru took 256 s of wall time, 200 s of it system time,
// against 46–64 s on one thread.
func TestOneThreadUnlessTheEnvironmentSays(t *testing.T) {
	if os.Getenv("OPENBLAS_NUM_THREADS") != "" || os.Getenv("OMP_NUM_THREADS") != "" {
		t.Skip("the environment sets OpenBLAS's threads")
	}
	if n := threads(); n != 1 {
		t.Errorf("OpenBLAS runs on %d threads, want 1", n)
	}
}

// Where the CPU runs better kernels than OpenBLAS's generic ones and the
// environment does not choose, the products do not run on the generic ones.
func TestNotTheGenericKernels(t *testing.T) {
	if os.Getenv("OPENBLAS_CORETYPE") != "" {
		t.Skip("the environment sets OpenBLAS's kernels")
	}
	if bestCore() == "" {
		t.Skip("the CPU has no AVX")
	}
	if c := core(); c == "Prescott" {
		t.Errorf("OpenBLAS runs its %s kernels on a CPU that runs %s", c, bestCore())
	}
	t.Log(Describe())
}
