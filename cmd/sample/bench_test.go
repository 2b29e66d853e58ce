package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/metasgmcmc/metasgmcmc/graph/openblas"
	"github.com/metasgmcmc/metasgmcmc/internal/flops"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// mnistNTStepFLOPs counts the floating-point operations of one step on
// mnist-nt (784-40-40-10, 20 chains, batch 500, D = 33,450): the first
// layer's product and its weights' derivative (the data need none), the
// later layers' products and both their derivatives, and a few operations
// an element for the biases, activations, softmax and the sampler's
// update.
func mnistNTStepFLOPs() float64 {
	const m, k = 500, 20
	sizes := []int{784, 40, 40, 10}
	f := 2 * flops.GEMM(m, sizes[1]*k, sizes[0])
	elems := 0
	for l := 1; l+1 < len(sizes); l++ {
		f += 3 * float64(k) * flops.GEMM(m, sizes[l+1], sizes[l])
	}
	for _, s := range sizes[1:] {
		elems += 4 * m * s * k // bias, activation and their derivatives
	}
	const d = 784*40 + 40 + 40*40 + 40 + 40*10 + 10
	return f + float64(elems) + 10*d*k
}

// BenchmarkMNISTNTRun times whole `sample` runs on mnist-nt with the flag
// files of experiments/mnist-nt (SGHMC, and NNSGHMC with finite-difference
// Γ and the experiment's sampler), test-set evaluations every 100 steps as
// there, in float64 and float32. A run's time a step is the difference of
// runs of 300 and 100 steps over 200 steps (start-up drops out), on all
// cores (GOMAXPROCS) and on one. It reports
//
//	ms/step     SGHMC on all cores
//	floor-ms    the step's operations (mnistNTStepFLOPs) at the GEMM rate of
//	            the machine on as many cores (flops.Peak, measured in each round)
//	x-floor     ms/step over floor-ms
//	cores-x     SGHMC's time on one core over its time on all
//	nn/sghmc    NNSGHMC's time over SGHMC's, on all cores
//
// and logs the BLAS and the cores. Each of the b.N rounds measures the
// GEMM rate and times the three runs in turn, and takes its ratios from
// its own figures; each metric is the median over the rounds: run several
// (-benchtime 3x) where the machine's speed drifts, which moves a ratio of
// figures taken minutes apart more than one of figures taken in the same
// round.
//
//	METASGMCMC_DATA=… go test -tags openblas ./cmd/sample -run '^$' -bench MNISTNTRun -benchtime 3x -timeout 60m
func BenchmarkMNISTNTRun(b *testing.B) {
	datatest.Need(b, "mnist/train-labels-idx1-ubyte.gz")
	b.Chdir("../..") // the flag files name the sampler file from the repository's root
	cores := runtime.GOMAXPROCS(0)
	b.Logf("%s; %d cores", openblas.Describe(), cores)
	for _, dt := range []string{"float64", "float32"} {
		b.Run(dt, func(b *testing.B) {
			floorMs := func() (peak, floor float64) {
				peak = flops.Peak(dt == "float32", cores, 3)
				return peak, mnistNTStepFLOPs() / peak * 1000
			}
			perStep := func(flags string, procs int) float64 {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				var t [2]float64
				for i, steps := range []int{100, 300} {
					args := []string{"--flagfile", filepath.Join("experiments/mnist-nt", flags), "--steps", fmt.Sprint(steps),
						"--out", filepath.Join(b.TempDir(), "run"), "--quiet"}
					if dt == "float32" {
						args = append(args, "--float32")
					}
					start := time.Now()
					if err := run(context.Background(), args); err != nil {
						b.Fatal(err)
					}
					t[i] = time.Since(start).Seconds()
				}
				return (t[1] - t[0]) / 200 * 1000
			}
			var peaks, floors, alls, xFloors, coresX, nnX []float64
			for i := 0; i < b.N; i++ {
				peak, floor := floorMs()
				all := perStep("sghmc.flags", cores)
				one := perStep("sghmc.flags", 1)
				nn := perStep("nnsghmc.flags", cores)
				peaks, floors, alls = append(peaks, peak), append(floors, floor), append(alls, all)
				xFloors, coresX, nnX = append(xFloors, all/floor), append(coresX, one/all), append(nnX, nn/all)
			}
			b.ReportMetric(median(alls), "ms/step")
			b.ReportMetric(median(floors), "floor-ms")
			b.ReportMetric(median(xFloors), "x-floor")
			b.ReportMetric(median(coresX), "cores-x")
			b.ReportMetric(median(nnX), "nn/sghmc")
			b.ReportMetric(median(peaks)/1e9, "peak-GFLOP/s")
			b.Logf("%s, by round: x-floor %.3g, cores-x %.3g, nn/sghmc %.3g", dt, xFloors, coresX, nnX)
		})
	}
}

// median returns the median of x (the mean of the middle two for an even
// count), leaving x as it is.
func median(x []float64) float64 {
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	n := len(y)
	return (y[(n-1)/2] + y[n/2]) / 2
}
