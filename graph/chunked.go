package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// ChunkBuilder builds a graph over a block of rows, returning its per-row
// input and output vectors (each of shape (rows)) and the outputs to be
// summed over blocks (any shape).
type ChunkBuilder func(rows int) (in, out, sum G.Nodes, err error)

// Chunked runs a row-wise computation over n rows in blocks of at most
// chunk rows, so that memory is bounded whatever n. A graph is compiled for
// the full block and, if n is not a multiple of it, one for the remainder.
type Chunked struct {
	n, chunk int
	blocks   []chunkProgram // [0]: full blocks, [1]: remainder (if any)
}

type chunkProgram struct {
	rows         int
	in, out, sum G.Nodes
	prog         *Program
	sumBuf       []float64
}

// NewChunked compiles build for blocks of min(chunk, n) rows (and the
// remainder).
func NewChunked(n, chunk int, build ChunkBuilder) (*Chunked, error) {
	if n < 1 || chunk < 1 {
		return nil, fmt.Errorf("graph.NewChunked: %d rows in chunks of %d", n, chunk)
	}
	c := &Chunked{n: n, chunk: min(chunk, n)}
	sizes := []int{c.chunk}
	if r := n % c.chunk; r != 0 && n > c.chunk {
		sizes = append(sizes, r)
	}
	for _, rows := range sizes {
		in, out, sum, err := build(rows)
		if err != nil {
			return nil, err
		}
		for _, v := range append(append(G.Nodes{}, in...), out...) {
			if !v.Shape().Eq([]int{rows}) {
				return nil, fmt.Errorf("graph.NewChunked: %v has shape %v, want (%d)", v, v.Shape(), rows)
			}
		}
		prog, err := Compile(append(append(G.Nodes{}, out...), sum...)...)
		if err != nil {
			return nil, err
		}
		c.blocks = append(c.blocks, chunkProgram{rows: rows, in: in, out: out, sum: sum, prog: prog})
	}
	return c, nil
}

// Run feeds in (each of length n) block by block, writes the per-row
// outputs into out (each of length n) and the block sums into sum.
func (c *Chunked) Run(in, out, sum [][]float64) error {
	b0 := &c.blocks[0]
	if len(in) != len(b0.in) || len(out) != len(b0.out) || len(sum) != len(b0.sum) {
		return fmt.Errorf("graph.Chunked.Run: %d/%d/%d inputs/outputs/sums, want %d/%d/%d", len(in), len(out), len(sum), len(b0.in), len(b0.out), len(b0.sum))
	}
	for j, v := range in {
		if len(v) != c.n {
			return fmt.Errorf("graph.Chunked.Run: input %d has %d rows, want %d", j, len(v), c.n)
		}
	}
	for j, v := range out {
		if len(v) != c.n {
			return fmt.Errorf("graph.Chunked.Run: output %d has %d rows, want %d", j, len(v), c.n)
		}
	}
	for _, s := range sum {
		clear(s)
	}
	for lo := 0; lo < c.n; lo += c.chunk {
		hi := min(lo+c.chunk, c.n)
		b := b0
		if hi-lo != b0.rows {
			b = &c.blocks[1]
		}
		for j, node := range b.in {
			if err := SetValue(node, in[j][lo:hi]); err != nil {
				return err
			}
		}
		if err := b.prog.Run(); err != nil {
			return err
		}
		for j, node := range b.out {
			if _, err := Value(node, out[j][lo:hi]); err != nil {
				return err
			}
		}
		for j, node := range b.sum {
			var err error
			if b.sumBuf, err = Value(node, b.sumBuf); err != nil {
				return err
			}
			if len(b.sumBuf) != len(sum[j]) {
				return fmt.Errorf("graph.Chunked.Run: sum %d has %d entries, want %d", j, len(sum[j]), len(b.sumBuf))
			}
			for i, v := range b.sumBuf {
				sum[j][i] += v
			}
		}
	}
	return nil
}

// Close releases the compiled programs.
func (c *Chunked) Close() error {
	for _, b := range c.blocks {
		b.prog.Close()
	}
	return nil
}
