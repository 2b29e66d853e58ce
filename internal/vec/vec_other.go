//go:build !amd64 || purego

package vec

// There are no vector kernels for this architecture, or the build tag
// purego switched them off: the scalar loops do every element.

var useSIMD = simdAvailable

const simdAvailable = false

func simdAddReLU[T float32 | float64](y, z, b []T) int             { return 0 }
func simdAdd[T float32 | float64](y, z, b []T) int                 { return 0 }
func simdKeepPositive[T float32 | float64](d, g, a []T) int        { return 0 }
func simdTo32(y []float32, x []float64) int                        { return 0 }
func simdTo64(y []float64, x []float32) int                        { return 0 }
func simdTo64Add(y, sum []float64, x []float32) int                { return 0 }
func simdAddSquares[T float32 | float64](acc []float64, x []T) int { return 0 }

func simdExpm1Small(y, x []float64) int                { return 0 }
func simdQuotient(y, a, b []float64, tiny float64) int { return 0 }

func simdExp(y, x []float64) int { return 0 }

func simdOutside(x []float64, lo, hi float64) int { return 0 }
func simdUnbounded(x []float64, r float64) int    { return 0 }
