package graph

import (
	"hash/fnv"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph/graphtest"
)

// Every op of this package, with parameters that differ by one at a time,
// including slices 256 apart (which Gorgonia's own slice op merges).
func TestOpHashesDistinguishParameters(t *testing.T) {
	err := graphtest.CheckOpHashes(func() []G.Op {
		return []G.Op{
			newElemOp(kindCopy, 0, 0), newElemOp(kindNeg, 0, 0), newElemOp(kindAbs, 0, 0),
			newElemOp(kindSign, 0, 0), newElemOp(kindSqrt, 0, 0), newElemOp(kindExpm1, 0, 0),
			newElemOp(kindClamp, -1, 1), newElemOp(kindClamp, -1, 2), newElemOp(kindClamp, -2, 1),
			newElemOp(kindClampGate, -1, 1), newElemOp(kindClampGate, -1, 2),
			newKeepAliveOp(3), newKeepAliveOp(4),
			newRangeOp(rangeSlice, 0, 3, 1, nil, 2), newRangeOp(rangeSlice, 0, 259, 1, nil, 2),
			newRangeOp(rangeSlice, 1, 3, 1, nil, 2), newRangeOp(rangeSlice, 0, 3, 2, nil, 2),
			newRangeOp(rangeSlice, 0, 3, 1, nil, 3),
			newRangeOp(rangePad, 0, 3, 10, nil, 2), newRangeOp(rangePad, 0, 259, 10, nil, 2),
			newRangeOp(rangeConcat, 0, 0, 0, []int{1, 2}, 2), newRangeOp(rangeConcat, 0, 0, 0, []int{2, 1}, 2),
			newRangeOp(rangeConcat, 1, 0, 0, []int{1, 2}, 2),
			newPriorOp(1, false), newPriorOp(2, false), newPriorOp(1, true),
		}
	})
	if err != nil {
		t.Error(err)
	}
}

// The ops hash what they hashed before they had an OpBase: "metasgmcmc."
// and their name; graphs are therefore built node for node as before.
func TestOpHashIsNamespaceAndName(t *testing.T) {
	for _, op := range []G.Op{
		newElemOp(kindClamp, -1, 1), newRangeOp(rangeSlice, 0, 3, 1, nil, 2),
		newPriorOp(2.25, true), newKeepAliveOp(7),
	} {
		h := fnv.New32a()
		h.Write([]byte("metasgmcmc." + op.String()))
		if op.Hashcode() != h.Sum32() {
			t.Errorf("%v hashes %08x, want FNV-1a of %q, %08x", op, op.Hashcode(), "metasgmcmc."+op.String(), h.Sum32())
		}
	}
}

// Hash-consing: the same op on the same node is one node; ops that differ
// in a parameter are different nodes.
func TestOpNodesMergeOnlyWhenEqual(t *testing.T) {
	g := G.NewGraph()
	x := Input(g, Float64, "x", 300, 2)
	if Clamp(x, -1, 1) != Clamp(x, -1, 1) {
		t.Error("two Clamp(x, -1, 1) are different nodes")
	}
	if Clamp(x, -1, 1) == Clamp(x, -1, 2) {
		t.Error("Clamp(x, -1, 1) and Clamp(x, -1, 2) are one node")
	}
	if G.Must(Slice(x, 0, 3, 4)) == G.Must(Slice(x, 0, 259, 260)) {
		t.Error("Slice(x, 3:4) and Slice(x, 259:260) are one node")
	}
}

func TestZeroOpBasePanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "without NewOpBase") {
			t.Errorf("Hashcode of a zero OpBase: recovered %v", r)
		}
	}()
	var op elemOp
	op.Hashcode()
}

func TestOpBaseIsTheOpsIdentity(t *testing.T) {
	b := NewOpBase("mypkg", "Scale(2)", 3)
	h := fnv.New32a()
	h.Write([]byte("mypkg.Scale(2)"))
	if b.String() != "Scale(2)" || b.Arity() != 3 || b.Hashcode() != h.Sum32() {
		t.Errorf("NewOpBase(mypkg, Scale(2), 3): %q, arity %d, hash %08x (want %08x)", b, b.Arity(), b.Hashcode(), h.Sum32())
	}
	if b.ReturnsPtr() || b.CallsExtern() || b.OverwritesInput() != -1 {
		t.Error("an OpBase op claims to write into its operands or to call out")
	}
	if d := b.DiffWRT(3); len(d) != 3 || !d[0] || !d[1] || !d[2] {
		t.Errorf("DiffWRT(3) = %v, want all true", d)
	}
}
