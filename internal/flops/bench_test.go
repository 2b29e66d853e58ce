package flops_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/graph/openblas"
	"github.com/metasgmcmc/metasgmcmc/internal/flops"
)

// BenchmarkPeak reports the GEMM rate Peak measures, in GFLOP/s, in
// float64 and float32 on one core and on GOMAXPROCS cores (one product a
// core), and logs the BLAS and its kernels. With -tags openblas it times
// OpenBLAS (graph/openblas); OPENBLAS_CORETYPE picks its kernels:
//
//	go test -tags openblas ./internal/flops -run '^$' -bench Peak -benchtime 1x
func BenchmarkPeak(b *testing.B) {
	b.Logf("%s", openblas.Describe())
	for _, single := range []bool{false, true} {
		for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
			name := "float64"
			if single {
				name = "float32"
			}
			b.Run(fmt.Sprintf("%s/cores-%d", name, workers), func(b *testing.B) {
				rate := 0.0
				for i := 0; i < b.N; i++ {
					rate = flops.Peak(single, workers, 3)
				}
				b.ReportMetric(rate/1e9, "GFLOP/s")
			})
		}
	}
}
