package gru

import (
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph/graphtest"
)

// The ops of this package hash by kind and parameters: Gorgonia merges
// nodes whose ops hash alike, and a recurrence applies gateOp at every step t.
func TestOpHashesDistinguishParameters(t *testing.T) {
	err := graphtest.CheckOpHashes(func() []G.Op {
		ops := []G.Op{
			newChainMatOp(false), newChainMatOp(true),
			newActOp(actSigmoid), newActOp(actTanh), newActOp(actSigmoidGrad), newActOp(actTanhGrad),
			newActOp(actBlend), newBernoulliOp(false), newBernoulliOp(true), newStatesOp(), newBackOp(),
		}
		for _, tb := range [][2]int{{0, 1}, {1, 1}, {256, 1}, {257, 1}, {1, 2}} {
			ops = append(ops, newGateOp(tb[0], tb[1]))
		}
		return ops
	})
	if err != nil {
		t.Error(err)
	}
}
