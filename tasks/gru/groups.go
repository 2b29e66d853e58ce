package gru

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
)

// Models and Scorers split their K chains into contiguous groups, each with
// its own graphs: one group per CPU, evaluated in parallel, and groups small
// enough that one group's recurrent weights stay in the cache (see
// chainGroups). No computation mixes chains, so every chain's values are the
// same in any grouping and results do not depend on the number of CPUs or
// the cache.

// chainGroup is the chains [off, off+k) of K.
type chainGroup struct{ off, k int }

// groupCacheBytes bounds the recurrent weights (U, 3·H² values per chain) of
// one group's chains. When the graph ran Gorgonia ops per step (before
// commit 87d2627), each frame's recurrent product streamed every chain's U
// of the graph, forward and backward; a graph of all 20 chains at H = 200
// (19 MB in float64) streamed them from memory, and smaller groups ran the
// same products faster. On a 2-core AMD EPYC sandbox (1 MiB L2 per core,
// 32 MiB L3) with GOMAXPROCS=1, H = 200 and K = 20 in float64, budgets of
// 1, 2, 4, 8 and 16 MiB (20, 10, 5, 3 and 2 groups) measured graph/oracle
// about 1.8, 1.6, 1.47, 1.41 and 1.44, against 2.0–2.7 in one group: see
// BenchmarkEnergyRatio and experiments/BENCHMARKS.md. Now that the
// recurrence runs chain by chain (forwardOp, backOp), the budget no longer
// matters there: one group and three measured the same, graph/oracle 1.13.
var groupCacheBytes = 8 << 20

// chainGroups splits cfg's chains into groups for GOMAXPROCS CPUs and the
// cache budget groupCacheBytes, whichever makes more groups, or returns nil
// for one group.
func chainGroups(cfg Config) []chainGroup {
	perChain := 3 * cfg.Hidden * cfg.Hidden * int(cfg.Dtype.Size())
	return splitChains(cfg.Chains, runtime.GOMAXPROCS(0), max(1, groupCacheBytes/max(1, perChain)))
}

// splitChains splits k chains into as few groups as reach the shortest
// time on procs CPUs, with at most maxSize chains in a group: groups of at
// most min(⌈k/procs⌉, maxSize) chains, with sizes that differ by at most
// one. Each group runs its own graphs, whose per-op cost does not shrink
// with its chains, so 20 chains on 16 CPUs make 10 groups of two, as fast as
// 16 groups of one or two and with less work. It returns nil for one group.
// Groups beyond procs take turns on the CPUs, in whole rounds: more groups
// than CPUs come in a multiple of procs (20 chains of at most 8 a group on
// 2 CPUs make 4 groups of 5, not 3 of 6 or 7, whose last would run alone).
func splitChains(k, procs, maxSize int) []chainGroup {
	if k <= 1 {
		return nil
	}
	size := min(k, max(1, maxSize))
	if p := min(procs, k); p > 1 {
		size = min(size, (k+p-1)/p)
	}
	n := (k + size - 1) / size
	if p := min(procs, k); n > p && n%p != 0 {
		n = min(k, (n+p-1)/p*p) // whole rounds: no CPU idles in the last
	}
	if n <= 1 {
		return nil
	}
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

// inParallel runs f(0), …, f(n−1) on at most GOMAXPROCS goroutines, each
// taking the next i in turn, and joins their errors. Groups beyond the CPUs
// thus run one after another rather than interleaved, each keeping the cache
// while it runs.
func inParallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := min(n, runtime.GOMAXPROCS(0)); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				errs[i] = f(i)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
