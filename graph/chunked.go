package graph

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	G "gorgonia.org/gorgonia"
)

// ChunkBuilder builds a graph over a block of rows, returning its per-row
// input and output vectors (each of shape (rows)) and the outputs to be
// summed over blocks (any shape).
type ChunkBuilder func(rows int) (in, out, sum G.Nodes, err error)

// Chunked runs a row-wise computation over n rows in blocks of at most
// chunk rows, so that memory is bounded whatever n. A graph is compiled for
// the full block — one copy per worker, up to GOMAXPROCS, so that blocks run
// in parallel (independent Gorgonia graphs run safely in goroutines) — and,
// if n is not a multiple of it, one for the remainder. The results do not
// depend on the number of workers: every block computes the same values and
// the block sums are added in block order.
type Chunked struct {
	n, chunk int
	full     []*chunkProgram // one per worker
	rest     *chunkProgram   // the remainder block, if any
}

type chunkProgram struct {
	rows         int
	in, out, sum G.Nodes
	prog         *Program
}

// NewChunked compiles build for blocks of min(chunk, n) rows (and the
// remainder), calling it once per copy.
func NewChunked(n, chunk int, build ChunkBuilder) (*Chunked, error) {
	if n < 1 || chunk < 1 {
		return nil, fmt.Errorf("graph.NewChunked: %d rows in chunks of %d", n, chunk)
	}
	c := &Chunked{n: n, chunk: min(chunk, n)}
	compile := func(rows int) (*chunkProgram, error) {
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
		return &chunkProgram{rows: rows, in: in, out: out, sum: sum, prog: prog}, nil
	}
	workers := min(runtime.GOMAXPROCS(0), max(1, n/c.chunk))
	for w := 0; w < workers; w++ {
		p, err := compile(c.chunk)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.full = append(c.full, p)
	}
	if r := n % c.chunk; r != 0 && n > c.chunk {
		p, err := compile(r)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.rest = p
	}
	return c, nil
}

// Run feeds in (each of length n) block by block, writes the per-row
// outputs into out (each of length n) and the block sums into sum.
func (c *Chunked) Run(in, out, sum [][]float64) error {
	b0 := c.full[0]
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
	blocks := (c.n + c.chunk - 1) / c.chunk
	sums := make([][][]float64, blocks) // per block, per sum output
	errs := make([]error, blocks)
	run := func(p *chunkProgram, blk int) {
		lo := blk * c.chunk
		hi := lo + p.rows
		for j, node := range p.in {
			if errs[blk] = SetValue(node, in[j][lo:hi]); errs[blk] != nil {
				return
			}
		}
		if errs[blk] = p.prog.Run(); errs[blk] != nil {
			return
		}
		for j, node := range p.out {
			if _, errs[blk] = Value(node, out[j][lo:hi]); errs[blk] != nil {
				return
			}
		}
		for _, node := range p.sum {
			var v []float64
			if v, errs[blk] = Value(node, nil); errs[blk] != nil {
				return
			}
			sums[blk] = append(sums[blk], v)
		}
	}
	full := c.n / c.chunk
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, p := range c.full {
		wg.Add(1)
		go func(p *chunkProgram) {
			defer wg.Done()
			for {
				blk := int(next.Add(1)) - 1
				if blk >= full {
					return
				}
				run(p, blk)
			}
		}(p)
	}
	if c.rest != nil {
		run(c.rest, full)
	}
	wg.Wait()
	for _, s := range sum {
		clear(s)
	}
	for blk, err := range errs {
		if err != nil {
			return err
		}
		for j, v := range sums[blk] {
			if len(v) != len(sum[j]) {
				return fmt.Errorf("graph.Chunked.Run: sum %d has %d entries, want %d", j, len(sum[j]), len(v))
			}
			for i, x := range v {
				sum[j][i] += x
			}
		}
	}
	return nil
}

// Close releases the compiled programs.
func (c *Chunked) Close() error {
	for _, b := range c.full {
		b.prog.Close()
	}
	if c.rest != nil {
		c.rest.prog.Close()
	}
	return nil
}
