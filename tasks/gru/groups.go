package gru

import (
	"errors"
	"runtime"
	"sync"
)

// Models and Scorers split their K chains into contiguous groups, one per
// CPU, each with its own graphs, evaluated in parallel. No computation mixes
// chains, so every chain's values are the same in any grouping and results
// do not depend on the number of CPUs.

// chainGroup is the chains [off, off+k) of K.
type chainGroup struct{ off, k int }

// chainGroups splits k chains into groups for GOMAXPROCS CPUs, or returns
// nil for one group.
func chainGroups(k int) []chainGroup { return splitChains(k, runtime.GOMAXPROCS(0)) }

// splitChains splits k chains into as few groups as reach the shortest
// time on procs CPUs: groups of at most ⌈k/procs⌉ chains. Each group runs
// its own graphs, whose per-op cost does not shrink with its chains, so 20
// chains on 16 CPUs make 10 groups of two, as fast as 16 groups of one or
// two and with less work. It returns nil for one group.
func splitChains(k, procs int) []chainGroup {
	p := min(procs, k)
	if p <= 1 {
		return nil
	}
	size := (k + p - 1) / p // < k, so n ≥ 2
	n := (k + size - 1) / size
	gs := make([]chainGroup, n)
	for g := range gs {
		off := g * k / n
		gs[g] = chainGroup{off: off, k: (g+1)*k/n - off}
	}
	return gs
}

// gather copies the group's columns of x (rows × K, row-major, as positions
// are coordinate-major) into dst (rows × g.k).
func (g chainGroup) gather(x []float64, K int, dst []float64) {
	for r := 0; r < len(x)/K; r++ {
		copy(dst[r*g.k:(r+1)*g.k], x[r*K+g.off:r*K+g.off+g.k])
	}
}

// scatter is the inverse of gather: src (rows × g.k) into the group's
// columns of x (rows × K).
func (g chainGroup) scatter(src []float64, K int, x []float64) {
	for r := 0; r < len(x)/K; r++ {
		copy(x[r*K+g.off:r*K+g.off+g.k], src[r*g.k:(r+1)*g.k])
	}
}

// inParallel runs f(0), …, f(n−1) in goroutines and joins their errors.
func inParallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
