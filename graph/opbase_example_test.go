package graph_test

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/metasgmcmc/metasgmcmc/graph"
)

// scaleOp is c·x element-wise, for float64 tensors: an op written on
// graph.OpBase, which supplies Arity, the name and hash, and the methods
// that are the same for every op.
type scaleOp struct {
	graph.OpBase
	c float64
}

func newScaleOp(c float64) scaleOp {
	// the name spells the parameter: Scale(2) and Scale(3) must not merge
	return scaleOp{OpBase: graph.NewOpBase("example", fmt.Sprintf("Scale(%v)", c), 1), c: c}
}

func (op scaleOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}

func (op scaleOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

func (op scaleOp) Do(v ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, v...) }

// UsePreallocDo writes into the op's result of the last run where it can.
func (op scaleOp) UsePreallocDo(prealloc G.Value, v ...G.Value) (G.Value, error) {
	x, ok := v[0].(tensor.Tensor)
	if !ok || x.Dtype() != tensor.Float64 {
		return nil, fmt.Errorf("%v: want a float64 tensor, got %v", op, v[0])
	}
	out, data := graph.Output[float64](prealloc, x.Shape(), v...)
	for i, xi := range x.Data().([]float64) {
		data[i] = op.c * xi
	}
	return out, nil
}

// SymDiff: the derivative of c·x is c·grad, the same op.
func (op scaleOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(op, grad)
	return G.Nodes{d}, err
}

// A hand-written op, differentiated and run like Gorgonia's own.
func ExampleOpBase() {
	g := G.NewGraph()
	x := graph.Input(g, graph.Float64, "x", 3)
	y := G.Must(G.ApplyOp(newScaleOp(3), x))
	cost := G.Must(G.Sum(G.Must(G.Square(y)))) // Σ 9x²
	grads, err := graph.Grad(cost, x)
	if err != nil {
		panic(err)
	}
	prog, err := graph.Compile(y, grads[0])
	if err != nil {
		panic(err)
	}
	defer prog.Close()
	if err := graph.SetValue(x, []float64{1, 2, 3}); err != nil {
		panic(err)
	}
	if err := prog.Run(); err != nil {
		panic(err)
	}
	yv, _ := graph.Value(y, nil)
	dx, _ := graph.Value(grads[0], nil)
	fmt.Println(y.Op(), yv, dx)
	// Output:
	// Scale(3) [3 6 9] [18 36 54]
}
