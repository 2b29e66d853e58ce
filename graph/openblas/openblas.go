//go:build openblas

package openblas

// #cgo LDFLAGS: -lopenblas
// #include <stdlib.h>
// #include <string.h>
// void openblas_set_num_threads(int num_threads);
// int openblas_get_num_threads(void);
// char* openblas_get_corename(void);
// char* openblas_get_config(void);
//
// // The kernel selection of an OpenBLAS built with DYNAMIC_ARCH; weak, so
// // that a library built for one CPU links too (they are then NULL).
// void gotoblas_dynamic_init(void) __attribute__((weak));
// void gotoblas_dynamic_quit(void) __attribute__((weak));
//
// // bestCore names the strongest x86-64 kernel family this CPU runs, as
// // OPENBLAS_CORETYPE spells it, or NULL.
// static const char* bestCore(void) {
// #if defined(__x86_64__)
//	__builtin_cpu_init();
//	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
//	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
//	    __builtin_cpu_supports("avx512cd")) return "SKYLAKEX";
//	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "HASWELL";
//	if (__builtin_cpu_supports("avx")) return "SANDYBRIDGE";
// #endif
//	return NULL;
// }
//
// // reselect switches a dynamic-architecture OpenBLAS that fell back to its
// // generic x86-64 kernel (Prescott, SSE3) to the best kernel the CPU runs,
// // as OPENBLAS_CORETYPE would have, and returns that name, or NULL where it
// // changed nothing.
// static const char* reselect(void) {
//	const char* best = bestCore();
//	if (getenv("OPENBLAS_CORETYPE") != NULL || best == NULL ||
//	    gotoblas_dynamic_init == NULL || gotoblas_dynamic_quit == NULL ||
//	    strcmp(openblas_get_corename(), "Prescott") != 0) return NULL;
//	setenv("OPENBLAS_CORETYPE", best, 1);
//	gotoblas_dynamic_quit();
//	gotoblas_dynamic_init();
//	return best;
// }
import "C"

import (
	"fmt"
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
	C.reselect()
}

// threads returns the number of threads OpenBLAS runs a product on.
func threads() int { return int(C.openblas_get_num_threads()) }

// Describe names the BLAS the products run on: OpenBLAS's build
// configuration, the kernel family it runs them with ("SkylakeX",
// "Haswell", …) and its number of threads.
func Describe() string {
	return fmt.Sprintf("%s, %s kernels, %d thread(s)", C.GoString(C.openblas_get_config()), core(), threads())
}

// core returns the name of the kernel family OpenBLAS runs its products with.
func core() string { return C.GoString(C.openblas_get_corename()) }

// bestCore returns the kernel family this CPU could run, as
// OPENBLAS_CORETYPE spells it, or "".
func bestCore() string { return C.GoString(C.bestCore()) }
