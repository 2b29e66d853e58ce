package bnn

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph/graphtest"
)

// The ops of this package hash by kind and parameters: Gorgonia merges
// nodes whose ops hash alike.
func TestOpHashesDistinguishParameters(t *testing.T) {
	err := graphtest.CheckOpHashes(func() []G.Op {
		ops := []G.Op{newDataMatMulOp(false, tensor.Shape{800, 20}), newDataMatMulOp(true, tensor.Shape{800, 20}),
			newDataMatMulOp(false, tensor.Shape{800, 21}), newDataMatMulOp(false, tensor.Shape{40, 400}),
			newLogLikOp(-120), newLogLikOp(-121), newLogLikGradOp(-120), newLogLikGradOp(-121)}
		for _, wrt := range []byte{0, 'z', 'w'} {
			ops = append(ops, newChainMatMulOp(20, 40, 10, wrt), newChainMatMulOp(21, 40, 10, wrt),
				newChainMatMulOp(20, 41, 10, wrt), newChainMatMulOp(20, 40, 11, wrt))
		}
		for _, f := range []biasActOp{
			newBiasActOp(true, actReLU, 20), newBiasActOp(false, actReLU, 20),
			newBiasActOp(true, actSigmoid, 20), newBiasActOp(true, actIdentity, 20),
			newBiasActOp(true, actReLU, 21),
		} {
			ops = append(ops, f, newBiasActGradOp(f, tensor.Shape{50, 400}), newBiasActGradOp(f, tensor.Shape{51, 400}))
			if f.act == actReLU { // the sums depend on the layer and K alone
				ops = append(ops, newBiasSumOp(f))
			}
		}
		return ops
	})
	if err != nil {
		t.Error(err)
	}
}
