package graph

import (
	"fmt"
	"hash"
	"hash/fnv"
	"io"

	G "gorgonia.org/gorgonia"
)

// OpBase is embedded in a hand-written Gorgonia op (a type implementing
// gorgonia.Op) to supply the methods that are the same for every op of
// this kind, so that the op itself has only Type, InferShape and Do (with
// UsePreallocDo, writing through Output, to write into its last result,
// and SymDiff if it is differentiable). OpBase supplies:
//
//   - Arity, as given to NewOpBase;
//   - String, the op's name, and WriteHash and Hashcode, which hash the
//     namespace and the name;
//   - ReturnsPtr and CallsExtern false and OverwritesInput −1: the op
//     returns a value of its own (a fresh one, or prealloc) and never
//     writes into an operand;
//   - DiffWRT, true for every operand (an op overrides it to cut gradients
//     off, and it has effect only with SymDiff);
//   - DoDiff, an error: Gorgonia's LispMachine (automatic differentiation
//     while running) is not supported, only symbolic gradients (Grad).
//
// Gorgonia treats two nodes whose ops hash alike and whose operands are
// the same nodes as one node (hash-consing), so the name must spell every
// parameter that changes what the op computes: "Clamp(-1,1)", not "Clamp".
// Build the base with NewOpBase; WriteHash and Hashcode of a zero OpBase
// panic, so that an op built without a name cannot be merged with another.
type OpBase struct {
	namespace, name string
	arity           int
	hash            uint32
}

// NewOpBase returns the base of an op with the given number of operands.
// name is the op's name with its parameters; namespace (for example
// "mypkg") keeps apart the ops of different packages that share a name.
func NewOpBase(namespace, name string, arity int) OpBase {
	if namespace == "" || name == "" {
		panic(fmt.Sprintf("graph.NewOpBase: empty namespace %q or name %q", namespace, name))
	}
	b := OpBase{namespace: namespace, name: name, arity: arity}
	h := fnv.New32a()
	b.WriteHash(h)
	b.hash = h.Sum32()
	return b
}

// Arity is the number of operands.
func (b OpBase) Arity() int { return b.arity }

// String is the op's name.
func (b OpBase) String() string { return b.name }

// WriteHash writes the namespace and the name, as "namespace.name".
func (b OpBase) WriteHash(h hash.Hash) {
	if b.name == "" {
		panic("graph.OpBase: an op was built without NewOpBase")
	}
	io.WriteString(h, b.namespace)
	io.WriteString(h, ".")
	io.WriteString(h, b.name)
}

// Hashcode is the 32-bit FNV-1a hash of what WriteHash writes.
func (b OpBase) Hashcode() uint32 {
	if b.name == "" {
		panic("graph.OpBase: an op was built without NewOpBase")
	}
	return b.hash
}

// ReturnsPtr is false: the op returns a value of its own.
func (OpBase) ReturnsPtr() bool { return false }

// CallsExtern is false: the op runs on the CPU, in Go.
func (OpBase) CallsExtern() bool { return false }

// OverwritesInput is −1: the op writes into no operand.
func (OpBase) OverwritesInput() int { return -1 }

// DiffWRT reports that gradients flow to each of the n operands.
func (OpBase) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

// DoDiff returns an error: automatic differentiation by Gorgonia's
// LispMachine is not supported.
func (b OpBase) DoDiff(G.ExecutionContext, G.Nodes, *G.Node) error {
	return fmt.Errorf("%v: automatic (LispMachine) differentiation is not supported; use symbolic gradients", b)
}
