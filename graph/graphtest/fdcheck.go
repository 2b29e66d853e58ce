package graphtest

import (
	"fmt"
	"math"
)

// GradCheck is the outcome of comparing gradients with finite differences.
type GradCheck struct {
	// Worst is the largest |analytic − numeric| / (1 + |numeric|) over all
	// checked entries, and Param and Index locate it.
	Worst        float64
	Param, Index int
	Analytic     float64
	Numeric      float64
	Checked      int
}

func (c GradCheck) String() string {
	return fmt.Sprintf("worst error %.3g at param %d[%d]: analytic %.10g, numeric %.10g (%d entries checked)",
		c.Worst, c.Param, c.Index, c.Analytic, c.Numeric, c.Checked)
}

// CheckGradient compares analytic gradients with central finite differences
// of the scalar function f, which must read the current contents of params.
// Each entry params[i][j] is moved by ±h in place (and restored), f is
// evaluated, and (f₊ − f₋)/2h is compared with grads[i][j]. At most maxPer
// entries of each parameter are checked (evenly spaced; all when maxPer ≤ 0).
func CheckGradient(f func() (float64, error), params, grads [][]float64, h float64, maxPer int) (GradCheck, error) {
	var res GradCheck
	if len(params) != len(grads) {
		return res, fmt.Errorf("CheckGradient: %d params but %d gradients", len(params), len(grads))
	}
	for i, p := range params {
		if len(p) != len(grads[i]) {
			return res, fmt.Errorf("CheckGradient: param %d has %d entries but its gradient %d", i, len(p), len(grads[i]))
		}
		step := 1
		if maxPer > 0 && len(p) > maxPer {
			step = (len(p) + maxPer - 1) / maxPer
		}
		for j := 0; j < len(p); j += step {
			orig := p[j]
			p[j] = orig + h
			fp, err := f()
			if err != nil {
				p[j] = orig
				return res, err
			}
			p[j] = orig - h
			fm, err := f()
			p[j] = orig
			if err != nil {
				return res, err
			}
			num := (fp - fm) / (2 * h)
			e := math.Abs(grads[i][j]-num) / (1 + math.Abs(num))
			if math.IsNaN(e) {
				e = math.Inf(1)
			}
			res.Checked++
			if e > res.Worst || res.Checked == 1 {
				res.Worst, res.Param, res.Index, res.Analytic, res.Numeric = e, i, j, grads[i][j], num
			}
		}
	}
	return res, nil
}
