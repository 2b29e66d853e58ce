package flops

import "testing"

// Peak measures a positive, finite rate in both dtypes.
func TestPeak(t *testing.T) {
	if testing.Short() {
		t.Skip("times products of order 1024")
	}
	for _, f32 := range []bool{false, true} {
		if r := Peak(f32, 1, 1); !(r > 1e6 && r < 1e14) {
			t.Errorf("float32 %v: peak %g FLOP/s", f32, r)
		}
	}
}

func TestGEMM(t *testing.T) {
	if got := GEMM(500, 800, 784); got != 627.2e6 {
		t.Errorf("GEMM(500, 800, 784) = %g, want 6.272e8", got)
	}
}
