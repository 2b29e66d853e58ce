//go:build openblas

package openblas

// #cgo LDFLAGS: -lopenblas
// void openblas_set_num_threads(int num_threads);
// int openblas_get_num_threads(void);
import "C"

import (
	"os"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

func init() {
	G.Use(netlib.Implementation{})
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
	if os.Getenv("OPENBLAS_NUM_THREADS") == "" && os.Getenv("OMP_NUM_THREADS") == "" {
		C.openblas_set_num_threads(1)
	}
}

// threads returns the number of threads OpenBLAS runs a product on.
func threads() int { return int(C.openblas_get_num_threads()) }
