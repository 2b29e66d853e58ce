// Package flops measures what the benchmarks compare a run's time with:
// the machine's GEMM rate for a dtype on a number of cores, with the BLAS
// the program uses, and the floor that rate sets for a count of
// floating-point operations.
package flops

import (
	"sync"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// PeakSize is the order of the square products Peak times.
const PeakSize = 1024

// Peak returns the GEMM rate in FLOP/s of the BLAS in use (blas32 or
// blas64, by single) for square products of order PeakSize, one
// single-threaded product on each of workers goroutines at once, the best
// of rounds rounds (the first warms up).
func Peak(single bool, workers, rounds int) float64 {
	const n = PeakSize
	type mats struct {
		a32, b32, c32 []float32
		a64, b64, c64 []float64
	}
	ms := make([]mats, workers)
	for w := range ms {
		if single {
			ms[w] = mats{a32: fill32(n * n), b32: fill32(n * n), c32: make([]float32, n*n)}
		} else {
			ms[w] = mats{a64: fill64(n * n), b64: fill64(n * n), c64: make([]float64, n*n)}
		}
	}
	best := 0.0
	for r := 0; r <= rounds; r++ {
		start := time.Now()
		var wg sync.WaitGroup
		for w := range ms {
			wg.Add(1)
			go func(m mats) {
				defer wg.Done()
				if single {
					blas32.Implementation().Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, m.a32, n, m.b32, n, 0, m.c32, n)
				} else {
					blas64.Implementation().Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, m.a64, n, m.b64, n, 0, m.c64, n)
				}
			}(ms[w])
		}
		wg.Wait()
		if rate := GEMM(n, n, n) * float64(workers) / time.Since(start).Seconds(); r > 0 && rate > best {
			best = rate
		}
	}
	return best
}

// GEMM returns the floating-point operations of an (m, k)·(k, n) product.
func GEMM(m, n, k int) float64 { return 2 * float64(m) * float64(n) * float64(k) }

func fill32(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	return x
}

func fill64(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i%7) - 3
	}
	return x
}
