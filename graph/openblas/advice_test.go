package openblas

import (
	"strings"
	"testing"
)

func TestAdvice(t *testing.T) {
	for _, c := range []struct {
		running, set, best string
		advises            bool
	}{
		{"Haswell", "Haswell", "SKYLAKEX", true},
		{"Haswell", "", "SKYLAKEX", false},          // OpenBLAS's own choice
		{"SkylakeX", "SkylakeX", "SKYLAKEX", false}, // the best already
		{"Cooperlake", "Cooperlake", "SKYLAKEX", false},
		{"SandyBridge", "SANDYBRIDGE", "HASWELL", true},
		{"Unknown", "x", "SKYLAKEX", false},
		{"Haswell", "Haswell", "", false}, // no AVX detected
	} {
		got := advice(c.running, c.set, c.best)
		if (got != "") != c.advises || (c.advises && !strings.Contains(got, "unset OPENBLAS_CORETYPE")) {
			t.Errorf("running %s, set %q, best %s: %q", c.running, c.set, c.best, got)
		}
	}
}
