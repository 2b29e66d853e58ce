package openblas

import (
	"fmt"
	"os"
	"strings"
)

// familyRank orders the x86-64 kernel families of OpenBLAS that matter
// here by the vector units they use: SSE (0), AVX (1), AVX2 (2), AVX-512
// (3); -1 for a name it does not know.
func familyRank(name string) int {
	switch strings.ToLower(name) {
	case "prescott", "core2", "penryn", "dunnington", "nehalem", "atom", "barcelona", "opteron":
		return 0
	case "sandybridge", "bulldozer", "piledriver":
		return 1
	case "haswell", "zen", "steamroller", "excavator":
		return 2
	case "skylakex", "cooperlake", "sapphirerapids":
		return 3
	}
	return -1
}

// advice is Advice's line for the kernels running (running), the
// environment's OPENBLAS_CORETYPE (set) and the CPU's best family (best).
func advice(running, set, best string) string {
	r, b := familyRank(running), familyRank(best)
	if set == "" || r < 0 || b <= r {
		return ""
	}
	return fmt.Sprintf("OpenBLAS runs its %s kernels because the environment sets OPENBLAS_CORETYPE=%s; this CPU runs OpenBLAS's %s kernels, with up to twice the matrix-product rate: unset OPENBLAS_CORETYPE to use them", running, set, best)
}

// Advice returns one line for a user whose environment holds OpenBLAS to
// older kernels than the CPU runs (OPENBLAS_CORETYPE set to a family below
// the CPU's best), or "" (always "" without the build tag openblas).
func Advice() string { return advice(core(), os.Getenv("OPENBLAS_CORETYPE"), bestCore()) }
