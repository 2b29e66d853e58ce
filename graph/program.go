package graph

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/internal/vec"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Program is a compiled graph: only the nodes the outputs need, compiled
// once and run many times with new input values.
type Program struct {
	vm      G.VM
	pc      *int // the machine's program counter
	outputs G.Nodes
}

// Compile compiles the part of the outputs' graph that the outputs need.
//
// Compiling the whole graph would also run dead gradient branches (for
// example the gradient w.r.t. the data of a matrix product). Every value is
// kept alive to the end of the program, so that Gorgonia never reuses a
// register: its in-place writes into reused registers corrupt views
// (Reshape) and any value read back after the run. Compile also refuses
// graphs in which two distinct nodes share a 32-bit hash: Gorgonia's
// compiler numbers values by hash alone and would silently merge them.
func Compile(outputs ...*G.Node) (*Program, error) {
	if len(outputs) == 0 {
		return nil, fmt.Errorf("graph.Compile: no outputs")
	}
	g := outputs[0].Graph()
	nodes := g.ExactSubgraphRoots(outputs...).AllNodes()
	seen := make(map[uint32]*G.Node)
	var live G.Nodes
	for _, n := range nodes {
		h := n.Hashcode()
		if m, ok := seen[h]; ok && m != n {
			return nil, fmt.Errorf("graph.Compile: nodes %v and %v have the same 32-bit hash; Gorgonia would merge them", m, n)
		}
		seen[h] = n
		if n.Graph() == g {
			live = append(live, n)
		}
	}
	// Built without G.ApplyOp, whose type inference is quadratic in the
	// number of operands.
	sink := G.NewUniqueNode(G.WithType(tensor.Float64), G.WithOp(newKeepAliveOp(len(live))),
		G.WithChildren(live), G.In(g), G.WithShape())
	// WithWatchlist with no nodes watches all: the machine's per-instruction
	// logging then returns at once (with no logger it prints nothing either
	// way), instead of looking every instruction's node up in a map.
	vm := G.NewTapeMachine(g.ExactSubgraphRoots(sink), G.WithWatchlist())
	return &Program{vm: vm, pc: programCounter(vm), outputs: outputs}, nil
}

// programCounter returns the address of the tape machine's program counter.
//
// The machine's Reset, which every RunAll needs first, also drops every
// register, so each op allocates (and Gorgonia's element-wise ops copy) its
// result anew on every run. Run instead only rewinds the program counter:
// every register keeps its value from the last run, and the ops that can
// (Gorgonia's element-wise and matrix ops, and this package's ops) write
// their results into it. Because Compile keeps every value alive, each
// register belongs to one node, so it never aliases another node's value.
//
// The field is unexported and Gorgonia has no way to rewind a machine but
// Reset. Reset has dropped the registers since
// https://github.com/gorgonia/gorgonia/pull/467, the fix of
// https://github.com/gorgonia/gorgonia/issues/466 (two runs with a Reset
// between them gave different results); we found no upstream issue or
// pull request for a rewind that keeps them. Compile's keep-alive sink
// (every register belongs to one node) is what makes keeping them safe
// here. The field's name and type are checked when
// a program is compiled, and TestGorgoniaInternalsCanary and
// TestProgramRerunMatchesFreshProgram check that rewinding it reruns the
// whole program with the new inputs, bit for bit.
func programCounter(vm G.VM) *int {
	f := reflect.ValueOf(vm).Elem().FieldByName("pc")
	if f.Kind() != reflect.Int {
		panic(fmt.Sprintf("graph: Gorgonia's tape machine %T has no int field pc; this package needs Gorgonia v0.9.18", vm))
	}
	return (*int)(unsafe.Pointer(f.UnsafeAddr()))
}

// Run executes the program once with the current input values. The values
// of the previous run are overwritten: copy out what you keep (Value does).
func (p *Program) Run() error {
	*p.pc = 0
	if err := p.vm.RunAll(); err != nil {
		p.vm.Reset() // an aborted run leaves the registers in no known state
		return err
	}
	return nil
}

// Close releases the program's machine.
func (p *Program) Close() error { return p.vm.Close() }

// SetValue copies src, converted to the node's dtype, into the value bound
// to the input node n, in place.
func SetValue(n *G.Node, src []float64) error {
	switch v := n.Value().(type) {
	case tensor.Tensor:
		switch d := v.Data().(type) {
		case []float64:
			if len(d) != len(src) {
				return fmt.Errorf("graph.SetValue %s: %d values for %d elements", n.Name(), len(src), len(d))
			}
			spans.For(len(d), func(lo, hi int) { copy(d[lo:hi], src[lo:hi]) })
		case []float32:
			if len(d) != len(src) {
				return fmt.Errorf("graph.SetValue %s: %d values for %d elements", n.Name(), len(src), len(d))
			}
			spans.For(len(d), func(lo, hi int) { vec.To32(d[lo:hi], src[lo:hi]) })
		default:
			return fmt.Errorf("graph.SetValue %s: unsupported data %T", n.Name(), d)
		}
	case *G.F64:
		if len(src) != 1 {
			return fmt.Errorf("graph.SetValue %s: %d values for a scalar", n.Name(), len(src))
		}
		*v = G.F64(src[0])
	case *G.F32:
		if len(src) != 1 {
			return fmt.Errorf("graph.SetValue %s: %d values for a scalar", n.Name(), len(src))
		}
		*v = G.F32(src[0])
	default:
		return fmt.Errorf("graph.SetValue %s: node holds %T, not an input value", n.Name(), n.Value())
	}
	return nil
}

// Value copies n's current value, converted to float64, into dst and returns
// it (allocating when dst is too short).
func Value(n *G.Node, dst []float64) ([]float64, error) {
	switch v := n.Value().(type) {
	case tensor.Tensor:
		switch d := v.Data().(type) {
		case []float64:
			dst = grow(dst, len(d))
			spans.For(len(d), func(lo, hi int) { copy(dst[lo:hi], d[lo:hi]) })
		case []float32:
			dst = grow(dst, len(d))
			spans.For(len(d), func(lo, hi int) { vec.To64(dst[lo:hi], d[lo:hi]) })
		case float64:
			dst = grow(dst, 1)
			dst[0] = d
		case float32:
			dst = grow(dst, 1)
			dst[0] = float64(d)
		default:
			return nil, fmt.Errorf("graph.Value %v: unsupported data %T", n, d)
		}
	case *G.F64:
		dst = grow(dst, 1)
		dst[0] = float64(*v)
	case *G.F32:
		dst = grow(dst, 1)
		dst[0] = float64(*v)
	case nil:
		return nil, fmt.Errorf("graph.Value %v: the node has no value (was it compiled and run?)", n)
	default:
		return nil, fmt.Errorf("graph.Value %v: unsupported value %T", n, v)
	}
	return dst, nil
}

// ValueAndAdd is Value, and also adds n's value into sum (of the same
// length), in the same pass.
func ValueAndAdd(n *G.Node, dst, sum []float64) ([]float64, error) {
	t, ok := n.Value().(tensor.Tensor)
	if !ok || t.Shape().TotalSize() != len(sum) {
		return nil, fmt.Errorf("graph.ValueAndAdd %v: value %v for %d sums", n, n.Value(), len(sum))
	}
	switch d := t.Data().(type) {
	case []float64:
		dst = grow(dst, len(d))
		spans.For(len(d), func(lo, hi int) {
			copy(dst[lo:hi], d[lo:hi])
			vec.AddTo(sum[lo:hi], d[lo:hi])
		})
	case []float32:
		dst = grow(dst, len(d))
		spans.For(len(d), func(lo, hi int) { vec.To64AndAdd(dst[lo:hi], sum[lo:hi], d[lo:hi]) })
	default:
		return nil, fmt.Errorf("graph.ValueAndAdd %v: unsupported data %T", n, d)
	}
	return dst, nil
}

func grow(dst []float64, n int) []float64 {
	if cap(dst) < n {
		return make([]float64, n)
	}
	return dst[:n]
}
