package graphtest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/graph/graphtest"
)

// nameOp is an op whose name is given: the tests below name two ops alike.
type nameOp struct{ graph.OpBase }

func op(name string) G.Op { return nameOp{graph.NewOpBase("graphtest", name, 1)} }

func (nameOp) Type() hm.Type                                     { return hm.NewFnType(hm.TypeVariable('a'), hm.TypeVariable('a')) }
func (nameOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) { return in[0].(tensor.Shape), nil }
func (nameOp) Do(v ...G.Value) (G.Value, error)                  { return v[0], nil }

func TestCheckOpHashes(t *testing.T) {
	if err := graphtest.CheckOpHashes(func() []G.Op { return []G.Op{op("A(1)"), op("A(2)")} }); err != nil {
		t.Errorf("distinct ops: %v", err)
	}
	err := graphtest.CheckOpHashes(func() []G.Op { return []G.Op{op("A"), op("B"), op("A")} })
	if err == nil || !strings.Contains(err.Error(), "A and A hash alike") {
		t.Errorf("two ops named A: %v", err)
	}
	n := 0
	err = graphtest.CheckOpHashes(func() []G.Op { n++; return []G.Op{op(fmt.Sprint("A", n))} })
	if err == nil || !strings.Contains(err.Error(), "built twice") {
		t.Errorf("an op named differently each time: %v", err)
	}
}
