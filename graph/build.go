package graph

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Dtype is a tensor element type; this package supports Float64 and Float32.
type Dtype = tensor.Dtype

// Dtypes supported by this package.
var (
	Float64 Dtype = tensor.Float64
	Float32 Dtype = tensor.Float32
)

// checkDtype panics on a dtype other than float64 and float32.
func checkDtype(dt tensor.Dtype) {
	if dt != tensor.Float64 && dt != tensor.Float32 {
		panic(fmt.Sprintf("graph: unsupported dtype %v (want float64 or float32)", dt))
	}
}

// Scalar returns a constant scalar of dtype dt in g. Constants are named by
// dtype and value, so float64 and float32 constants of the same value stay
// distinct (Gorgonia merges constants by name alone).
func Scalar(g *G.ExprGraph, dt tensor.Dtype, v float64) *G.Node {
	checkDtype(dt)
	name := fmt.Sprintf("const_%v(%v)", dt, v)
	var c *G.Node
	if dt == tensor.Float64 {
		c = G.NewConstant(v, G.WithName(name))
	} else {
		c = G.NewConstant(float32(v), G.WithName(name))
	}
	return g.AddNode(c)
}

// Zeros returns a constant all-zero tensor (or scalar when shape is empty).
func Zeros(g *G.ExprGraph, dt tensor.Dtype, shape ...int) *G.Node {
	if len(shape) == 0 {
		return Scalar(g, dt, 0)
	}
	return Constant(g, dt, "zeros", make([]float64, prod(shape)), shape...)
}

// Constant returns a tensor node holding data (converted to dt).
//
// Gorgonia merges constant nodes by name and by hash, and names and hashes
// them by their printed value, which it truncates: two different large
// constants are then silently one node. Constant therefore makes an input
// node, identified by name, and appends a 64-bit hash of the contents to the
// name, so that only identical constants are shared.
func Constant(g *G.ExprGraph, dt tensor.Dtype, name string, data []float64, shape ...int) *G.Node {
	checkDtype(dt)
	if len(data) != prod(shape) {
		panic(fmt.Sprintf("graph.Constant %s: %d values for shape %v", name, len(data), shape))
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%v%v", dt, shape)
	var buf [8]byte
	for _, v := range data {
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(v))
		h.Write(buf[:])
	}
	full := fmt.Sprintf("%s#%016x", name, h.Sum64())
	if ns := g.ByName(full); len(ns) > 0 {
		return ns[0]
	}
	n := Input(g, dt, full, shape...)
	if err := SetValue(n, data); err != nil {
		panic(err)
	}
	return n
}

func prod(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// Input returns a new input node of the given dtype and shape (a scalar when
// shape is empty), bound to a zero value that SetValue overwrites in place.
//
// Gorgonia identifies input nodes by name and hash: two inputs with the same
// name are silently merged, and two whose 32-bit hashes collide are merged by
// the compiler. Input panics in both cases, naming the clash.
func Input(g *G.ExprGraph, dt tensor.Dtype, name string, shape ...int) *G.Node {
	checkDtype(dt)
	if len(g.ByName(name)) > 0 {
		panic(fmt.Sprintf("graph.Input: the graph already has a node named %q", name))
	}
	var n *G.Node
	if len(shape) == 0 {
		var v any = 0.0
		if dt == tensor.Float32 {
			v = float32(0)
		}
		n = G.NewScalar(g, dt, G.WithName(name), G.WithValue(v))
	} else {
		n = G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(shape...), tensor.Of(dt))))
	}
	h := n.Hashcode()
	for _, m := range g.AllNodes() {
		if m != n && m.Hashcode() == h {
			panic(fmt.Sprintf("graph.Input: %q has the same 32-bit hash as node %v; Gorgonia's compiler would merge them: choose another name", name, m))
		}
	}
	return n
}

// LogSoftmax returns x − log Σ_axis exp(x), built from primitives with a
// stop-gradient on the max shift. Gorgonia's own LogSoftMax/SoftMax cannot be
// differentiated twice: after one Grad through them every later Grad on the
// graph panics.
func LogSoftmax(x *G.Node, axis int) (*G.Node, error) {
	shape := x.Shape()
	if axis < 0 || axis >= len(shape) {
		return nil, fmt.Errorf("graph.LogSoftmax: axis %d out of range for shape %v", axis, shape)
	}
	keep := shape.Clone()
	keep[axis] = 1
	pattern := []byte{byte(axis)}
	mx, err := G.Max(x, axis)
	if err != nil {
		return nil, err
	}
	mxk, err := G.Reshape(StopGradient(mx), keep)
	if err != nil {
		return nil, err
	}
	sh, err := G.BroadcastSub(x, mxk, nil, pattern)
	if err != nil {
		return nil, err
	}
	ex, err := G.Exp(sh)
	if err != nil {
		return nil, err
	}
	s, err := G.Sum(ex, axis)
	if err != nil {
		return nil, err
	}
	lse, err := G.Log(s)
	if err != nil {
		return nil, err
	}
	lsek, err := G.Reshape(lse, keep)
	if err != nil {
		return nil, err
	}
	return G.BroadcastSub(sh, lsek, nil, pattern)
}

// InvSqrt is 1/√x. Gorgonia's InverseSqrt has a wrong derivative; this is
// built from Sqrt and Inverse, whose derivatives are right.
func InvSqrt(x *G.Node) (*G.Node, error) {
	s, err := G.Sqrt(x)
	if err != nil {
		return nil, err
	}
	return G.Inverse(s)
}
