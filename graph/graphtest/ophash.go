package graphtest

import (
	"errors"
	"fmt"

	G "gorgonia.org/gorgonia"
)

// CheckOpHashes checks the hashes of hand-written ops. build returns ops
// that differ from each other, and is called twice: each op must hash
// alike in both calls, and no two of the ops may hash alike. Gorgonia
// treats two nodes whose ops hash alike and whose operands are the same as
// one node, so ops that differ in a parameter must hash differently, and
// an op must hash the same whenever it is built. List ops that differ in
// one parameter at a time. The error names every clash.
func CheckOpHashes(build func() []G.Op) error {
	a, b := build(), build()
	if len(a) != len(b) {
		return fmt.Errorf("graphtest.CheckOpHashes: %d ops, then %d", len(a), len(b))
	}
	var errs []error
	seen := make(map[uint32]G.Op)
	for i, op := range a {
		h := op.Hashcode()
		if h2 := b[i].Hashcode(); h != h2 {
			errs = append(errs, fmt.Errorf("%v built twice hashes %08x and %08x", op, h, h2))
		}
		if other, ok := seen[h]; ok {
			errs = append(errs, fmt.Errorf("%v and %v hash alike (%08x)", other, op, h))
		}
		seen[h] = op
	}
	return errors.Join(errs...)
}
