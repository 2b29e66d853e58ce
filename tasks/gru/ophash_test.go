package gru

import (
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph/graphtest"
)

// The ops of this package hash by kind and parameters: Gorgonia merges
// nodes whose ops hash alike.
func TestOpHashesDistinguishParameters(t *testing.T) {
	err := graphtest.CheckOpHashes(func() []G.Op {
		return []G.Op{newBernoulliOp(false), newBernoulliOp(true), newForwardOp(false), newForwardOp(true), newStatesOp(), newBackOp(false), newBackOp(true)}
	})
	if err != nil {
		t.Error(err)
	}
}
