// Package openblas switches Gorgonia's and gonum's matrix products to
// OpenBLAS, through cgo, when a program imports it for its side effect:
//
//	import _ "github.com/metasgmcmc/metasgmcmc/graph/openblas"
//
// The package's code is built only with the build tag openblas, so that
// the module builds and tests without cgo or OpenBLAS (every package of
// `go build ./...` then uses gonum's pure-Go BLAS, and Describe says so): a program imports it
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
//
// A DYNAMIC_ARCH OpenBLAS picks its kernels from the CPU when it loads, and
// falls back to its generic SSE3 kernels (Prescott) on a CPU it does not
// know: Debian 12's 0.3.21 does so on Sapphire Rapids, where its SkylakeX
// kernels run sgemm 5 times as fast (25 against 123–135 GFLOP/s a core,
// 1024³). Where the library fell back so and OPENBLAS_CORETYPE is not set,
// init selects the kernels of the CPU's instruction set (AVX-512: SkylakeX,
// AVX2: Haswell, AVX: Sandybridge), as OPENBLAS_CORETYPE would have. The
// products' rounding depends on the kernels, so results differ in the last
// bits between the two. Where the environment sets OPENBLAS_CORETYPE to an
// older family than the CPU runs (a machine of this project's sets Haswell
// on an AVX-512 CPU: 0.4–0.65 of the GEMM rate), Advice says so, and sample
// and train print it as a note.
package openblas
