package gru

import (
	"fmt"
	"math"
	"sort"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/tasks/music"
)

// DefaultScoreBatch is the default number of sequences a Scorer runs side by
// side.
const DefaultScoreBatch = 8

// Scorer computes log-likelihoods of whole splits for K chains with the
// forward part of the segment graph, running B sequences side by side (the
// recurrence's products then have B rows per chain). Each of the B slots takes a new sequence, longest
// first, at the first segment boundary after its previous one ends, so at
// most S−1 steps per sequence are padding.
//
// A Scorer is not safe for concurrent use.
type Scorer struct {
	cfg    Config
	batch  int
	layout Layout
	seg    *segment
	kn     kernel
	x      []float64
	mask   []float64
	h      []float64
	buf    []float64

	// groups, when there are several, split the chains among Scorers run in
	// parallel (see chainGroup); this Scorer then only dispatches.
	groups []*scorerGroup
}

// scorerGroup is a Scorer for a group of its parent's chains, with its share
// of the positions and log-likelihoods.
type scorerGroup struct {
	*Scorer
	chainGroup
	theta, ll []float64
}

// NewScorer builds and compiles a forward-only segment graph for cfg
// (Hidden, Chains, Segment and Dtype; ActivationMemory is ignored) that runs
// batch sequences side by side (DefaultScoreBatch when zero). With more
// than one CPU (GOMAXPROCS) and chain, or more chains' recurrent weights than
// the cache budget holds, the chains are split into groups scored in
// parallel, each with its own graph (see chainGroups).
func NewScorer(cfg Config, batch int) (*Scorer, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if batch == 0 {
		batch = DefaultScoreBatch
	}
	if batch < 1 {
		return nil, fmt.Errorf("gru: scorer batch of %d sequences", batch)
	}
	groups := chainGroups(cfg)
	if groups == nil {
		return newScorer(cfg, batch)
	}
	sc := &Scorer{cfg: cfg, batch: batch, layout: cfg.Layout()}
	for _, g := range groups {
		c := cfg
		c.Chains = g.k
		sub, err := newScorer(c, batch)
		if err != nil {
			sc.Close()
			return nil, err
		}
		sc.groups = append(sc.groups, &scorerGroup{Scorer: sub, chainGroup: g, theta: make([]float64, sc.layout.Dim()*g.k)})
	}
	return sc, nil
}

// newScorer builds one Scorer for all of cfg's chains in one graph.
func newScorer(cfg Config, batch int) (*Scorer, error) {
	seg, err := newSegment(cfg, batch, false)
	if err != nil {
		return nil, err
	}
	k, s, h := cfg.Chains, cfg.Segment, cfg.Hidden
	return &Scorer{
		cfg: cfg, batch: batch, layout: cfg.Layout(), seg: seg, kn: newKernel(h, k),
		x: make([]float64, k*s*batch*Keys), mask: make([]float64, s*batch), h: make([]float64, k*batch*h),
	}, nil
}

// Close releases the compiled programs.
func (sc *Scorer) Close() error {
	for _, g := range sc.groups {
		g.Close()
	}
	if sc.seg != nil {
		return sc.seg.Close()
	}
	return nil
}

// LogLiks writes log p(split[n] | θ_k) into ll[n·K + k] for every sequence n
// of split and chain k, for the positions theta (D·K, coordinate-major).
func (sc *Scorer) LogLiks(theta []float64, split music.Split, ll []float64) error {
	K, S, B := sc.cfg.Chains, sc.cfg.Segment, sc.batch
	if len(ll) != len(split)*K {
		return fmt.Errorf("gru: %d log-likelihoods for %d sequences × %d chains", len(ll), len(split), K)
	}
	if want := sc.layout.Dim() * K; len(theta) != want {
		return fmt.Errorf("gru: %d positions for %d parameters × %d chains", len(theta), sc.layout.Dim(), K)
	}
	for _, seq := range split {
		if err := checkSequence(seq); err != nil {
			return err
		}
	}
	if sc.groups != nil {
		for _, g := range sc.groups {
			g.gather(theta, K, g.theta)
			g.ll = resize(g.ll, len(split)*g.k)
		}
		err := inParallel(len(sc.groups), func(i int) error {
			g := sc.groups[i]
			return g.LogLiks(g.theta, split, g.ll)
		})
		for _, g := range sc.groups {
			g.scatter(g.ll, K, ll)
		}
		return err
	}
	sc.layout.toKernel(theta, K, sc.kn)
	if err := sc.seg.setParams(sc.kn); err != nil {
		return err
	}
	// The longest sequences first; each of the B slots takes the next
	// sequence at the first segment boundary after its previous one ends.
	order := make([]int, len(split))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return split[order[i]].T > split[order[j]].T })
	clear(ll)
	H := sc.cfg.Hidden
	slot := make([]int, B)  // sequence in each slot, −1 for none
	first := make([]int, B) // frame of that sequence at the start of the segment
	for b := range slot {
		slot[b] = -1
	}
	next := 0
	for {
		busy := false
		for b := range slot {
			if slot[b] >= 0 && first[b] >= split[slot[b]].T {
				slot[b] = -1
			}
			if slot[b] < 0 && next < len(order) {
				slot[b], first[b] = order[next], 0
				next++
				for k := 0; k < K; k++ { // a fresh state
					sc.layout.startState(theta, K, k, sc.h[(k*B+b)*H:(k*B+b+1)*H])
				}
			}
			busy = busy || slot[b] >= 0
		}
		if !busy {
			return nil
		}
		if err := sc.loadFrames(split, slot, first); err != nil {
			return err
		}
		if err := graph.SetValue(sc.seg.fw.hIn, sc.h); err != nil {
			return err
		}
		if err := sc.seg.score.Run(); err != nil {
			return err
		}
		var err error
		if sc.buf, err = graph.Value(sc.seg.loss, sc.buf); err != nil { // (K, B)
			return err
		}
		for b, n := range slot {
			if n < 0 {
				continue
			}
			for k := 0; k < K; k++ {
				ll[n*K+k] -= sc.buf[k*B+b]
			}
			first[b] += S
		}
		if sc.h, err = graph.Value(sc.seg.hOut, sc.h); err != nil {
			return err
		}
	}
}

// loadFrames puts frames first[b] … first[b]+S−1 of the sequence in each
// slot b into the graph (row t·B + b holds frame t of slot b; zeros with
// mask 0 past a sequence's end or for an empty slot).
func (sc *Scorer) loadFrames(split music.Split, slot, first []int) error {
	K, S, B := sc.cfg.Chains, sc.cfg.Segment, sc.batch
	one := sc.x[:S*B*Keys]
	clear(one)
	clear(sc.mask)
	for b, n := range slot {
		if n < 0 {
			continue
		}
		seq := split[n]
		for t := 0; t < S && first[b]+t < seq.T; t++ {
			sc.mask[t*B+b] = 1
			row := one[(t*B+b)*Keys:]
			for j, v := range seq.Frame(first[b] + t) {
				row[j] = float64(v)
			}
		}
	}
	for k := 1; k < K; k++ {
		copy(sc.x[k*S*B*Keys:(k+1)*S*B*Keys], one)
	}
	if err := graph.SetValue(sc.seg.fw.x, sc.x); err != nil {
		return err
	}
	return graph.SetValue(sc.seg.fw.mask, sc.mask)
}

// Score is the predictive performance of K chains on a split, in nats per
// frame.
type Score struct {
	// Ensemble is the negative log-likelihood per frame of the ensemble
	// predictive: −Σ_n log p̂(seq_n) / Σ_n T_n with
	// log p̂(seq) = logsumexp_k log p(seq | θ_k) − log K, the log of the
	// chain average of each sequence's likelihood.
	Ensemble float64
	// Chain is the mean over chains of each chain's negative
	// log-likelihood per frame, −(1/K) Σ_k Σ_n log p(seq_n | θ_k) / Σ_n T_n.
	Chain float64
	// Frames is the number of frames of the split, Σ_n T_n.
	Frames int
}

// Score returns the negative log-likelihoods per frame of the ensemble of
// the K chains at theta (D·K, coordinate-major) and of the chains on
// average, on split.
func (sc *Scorer) Score(theta []float64, split music.Split) (Score, error) {
	K := sc.cfg.Chains
	ll := make([]float64, len(split)*K)
	if err := sc.LogLiks(theta, split, ll); err != nil {
		return Score{}, err
	}
	return scoreOf(ll, split, K), nil
}

// scoreOf summarises ll[n·K + k] = log p(split[n] | θ_k).
func scoreOf(ll []float64, split music.Split, k int) Score {
	frames := split.Frames()
	ens, chain := 0.0, 0.0
	for n := range split {
		row := ll[n*k : (n+1)*k]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
			chain += v
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(v - mx)
		}
		ens += mx + math.Log(s) - math.Log(float64(k))
	}
	return Score{Ensemble: -ens / float64(frames), Chain: -chain / float64(k) / float64(frames), Frames: frames}
}
