//go:build !amd64 || purego

package coordnet

// paramGradSIMD does nothing here: shallowReLUParamGrad2 and 3 run in Go.
func (k *mlpKernel) paramGradSIMD(in int, x, g, dw0, db0, dw1, b0, w1 []float64) bool {
	return false
}

// mixedSIMD does nothing here: shallowReLUMixed2 and 3 run in Go.
func (k *mlpKernel) mixedSIMD(in int, x, g, hd, dw0, dw1, b0, w1 []float64) bool {
	return false
}

// valueSIMD does nothing here: shallowReLUValue2 and 3 evaluate every row.
func (k *mlpKernel) valueSIMD(in int, x []float64, rows int, out []float64) int { return 0 }
