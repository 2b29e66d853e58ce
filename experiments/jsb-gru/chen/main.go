// Command chen compares this repository's music GRU with the one of Chen et
// al. (2016), whose Santa and Adam numbers the paper quotes, using his
// trained parameters (github.com/cchangyou/Santa, rnn_music/data/rnn_results,
// extracted by extract.py; run.sh does it all).
//
// With -set, it maps his parameters onto our GRU's layout and scores the
// test split, one chain: with our gru.Scorer (our GRU, h_0 = 0), and with a
// forward pass written here that checks the scorer and then adds his learned
// initial state h_0 = tanh(b_0) and his placement of the reset gate,
// tanh(x·W_h + b_h + r⊙(h·U_h)) where ours has tanh(x·W_h + b_h + (r⊙h)·U_h)
// by default; and last with gru.Scorer configured as his GRU
// (Config.InitialState, Config.ResetAfter). Each line gives the NLL per
// frame and per frame position t = 1…5, t ≥ 6.
//
// With -run DIR, it scores the chains of a music run's checkpoint
// (cmd/sample's checkpoint.json) per frame position, the chains on average
// and their ensemble (the ensemble predictive's chain rule,
// p̂(x_t | x_<t) ∝ Σ_k p(x_<t | θ_k)·p(x_t | x_<t, θ_k), which adds up to
// gru.Scorer.Score's ensemble), beside his GRU with his parameters, and
// splits the difference between the two into the first five frames and
// the rest.
//
//	go run ./experiments/jsb-gru/chen -params DIR -set jsb
//	go run ./experiments/jsb-gru/chen -params DIR -run runs/gru/jsb-santa-1-full
package main

import (
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/tasks/gru"
	"github.com/metasgmcmc/metasgmcmc/tasks/music"
)

const (
	H = 200 // Chen's hidden units
	X = gru.Keys
)

// chen holds Chen's parameters (row-major, as in the npz).
type chen struct {
	W      []float64 // 88×400: [W_r | W_u]
	U      []float64 // 200×400: [U_r | U_u]
	B      []float64 // 400: [b_r | b_u]
	Wx, Ux []float64 // 88×200, 200×200: candidate
	Bx, B0 []float64 // 200
	V, Bh  []float64 // 200×88, 88
	Meta   struct {
		TestNLL float64     `json:"test_negll"`
		Hist    [][]float64 `json:"history_negll"`
		Shapes  map[string][]int
	}
}

func readF64(path string, n int) []float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	if len(b) != 8*n {
		log.Fatalf("%s: %d bytes, want %d", path, len(b), 8*n)
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return x
}

func loadChen(dir, set string) *chen {
	p := func(k string) string { return filepath.Join(dir, set+"_"+k+".f64") }
	c := &chen{
		W: readF64(p("decoder_gru_W"), X*2*H), U: readF64(p("decoder_gru_U"), H*2*H), B: readF64(p("decoder_gru_b"), 2*H),
		Wx: readF64(p("decoder_gru_Wx"), X*H), Ux: readF64(p("decoder_gru_Ux"), H*H),
		Bx: readF64(p("decoder_gru_bx"), H), B0: readF64(p("decoder_gru_b0"), H),
		V: readF64(p("Vhid"), H*X), Bh: readF64(p("bhid"), X),
	}
	b, err := os.ReadFile(filepath.Join(dir, set+"_meta.json"))
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(b, &c.Meta); err != nil {
		log.Fatal(err)
	}
	return c
}

// toTheta maps Chen's GRU onto our layout. Chen: r = σ(a_r), u = σ(a_u),
// h' = u⊙h + (1−u)⊙ĥ; ours: h' = (1−z)⊙h + z⊙ĥ, so z = 1−u = σ(−a_u): the
// z-gate gets Chen's u-gate weights and bias negated. r and the candidate
// map as they are (column block 0 of W/U/b is r, block 1 is u).
func (c *chen) toTheta(l gru.Layout) []float64 {
	th := make([]float64, l.Dim())
	for i := 0; i < X; i++ {
		for j := 0; j < H; j++ {
			th[l.Wx(i, j)] = -c.W[i*2*H+H+j] // z ← −W_u
			th[l.Wx(i, H+j)] = c.W[i*2*H+j]  // r ← W_r
			th[l.Wx(i, 2*H+j)] = c.Wx[i*H+j] // ĥ ← Wx
		}
	}
	for i := 0; i < H; i++ {
		for j := 0; j < H; j++ {
			th[l.U(i, j)] = -c.U[i*2*H+H+j]
			th[l.U(i, H+j)] = c.U[i*2*H+j]
			th[l.U(i, 2*H+j)] = c.Ux[i*H+j]
		}
	}
	for j := 0; j < H; j++ {
		th[l.B(j)] = -c.B[H+j]
		th[l.B(H+j)] = c.B[j]
		th[l.B(2*H+j)] = c.Bx[j]
	}
	for i := 0; i < H; i++ {
		for j := 0; j < X; j++ {
			th[l.Wo(i, j)] = c.V[i*X+j]
		}
	}
	for j := 0; j < X; j++ {
		th[l.Bo(j)] = c.Bh[j]
	}
	return th
}

func sigmoid(a float64) float64 { return 1 / (1 + math.Exp(-a)) }

// softplus(a) = log(1 + e^a), stable.
func softplus(a float64) float64 {
	if a > 0 {
		return a + math.Log1p(math.Exp(-a))
	}
	return math.Log1p(math.Exp(a))
}

// forward runs our GRU (as documented in tasks/gru/model.go) on seq from the
// state h0 with the parameters th in our layout, writing −log p(x_t | x_<t)
// into nll[t]. resetAfter selects Chen's candidate tanh(x·W_h + b_h +
// r⊙(h·U_h)) instead of ours, tanh(x·W_h + b_h + (r⊙h)·U_h).
func forward(l gru.Layout, th []float64, seq music.Sequence, h0 []float64, resetAfter bool, nll []float64) {
	h := append([]float64(nil), h0...)
	a := make([]float64, 3*H) // pre-activations z, r, ĥ (input part + bias)
	rh := make([]float64, H)
	uh := make([]float64, H)
	z := make([]float64, H)
	r := make([]float64, H)
	for t := 0; t < seq.T; t++ {
		x := seq.Frame(t)
		// predict frame t from h
		s := 0.0
		for j := 0; j < X; j++ {
			lg := th[l.Bo(j)]
			for i := 0; i < H; i++ {
				lg += h[i] * th[l.Wo(i, j)]
			}
			s += float64(x[j])*lg - softplus(lg)
		}
		nll[t] = -s
		// consume frame t
		for j := 0; j < 3*H; j++ {
			v := th[l.B(j)]
			for i := 0; i < X; i++ {
				if x[i] != 0 {
					v += th[l.Wx(i, j)]
				}
			}
			for i := 0; i < H && j < 2*H; i++ {
				v += h[i] * th[l.U(i, j)]
			}
			a[j] = v
		}
		for j := 0; j < H; j++ {
			z[j] = sigmoid(a[j])
			r[j] = sigmoid(a[H+j])
			rh[j] = r[j] * h[j]
		}
		for j := 0; j < H; j++ {
			v := 0.0
			if resetAfter {
				for i := 0; i < H; i++ {
					v += h[i] * th[l.U(i, 2*H+j)]
				}
				uh[j] = r[j] * v
			} else {
				for i := 0; i < H; i++ {
					v += rh[i] * th[l.U(i, 2*H+j)]
				}
				uh[j] = v
			}
		}
		for j := 0; j < H; j++ {
			hc := math.Tanh(a[2*H+j] + uh[j])
			h[j] = (1-z[j])*h[j] + z[j]*hc
		}
	}
}

// report holds the per-position sums over a split.
type report struct {
	total   float64
	frames  int
	pos     [6]float64 // t = 1..5 (index 0..4), rest (5)
	posN    [6]int
	perSeqs []float64
}

func run(l gru.Layout, th []float64, split music.Split, h0 []float64, resetAfter bool) report {
	var rp report
	for _, seq := range split {
		nll := make([]float64, seq.T)
		forward(l, th, seq, h0, resetAfter, nll)
		s := 0.0
		for t, v := range nll {
			s += v
			k := min(t, 5)
			rp.pos[k] += v
			rp.posN[k]++
		}
		rp.total += s
		rp.frames += seq.T
		rp.perSeqs = append(rp.perSeqs, -s)
	}
	return rp
}

func (rp report) String() string {
	s := fmt.Sprintf("NLL/frame %.9f  (frames %d); per position:", rp.total/float64(rp.frames), rp.frames)
	for k := range rp.pos {
		lbl := fmt.Sprint(k + 1)
		if k == 5 {
			lbl = "6+"
		}
		s += fmt.Sprintf(" t=%s %.4f (n=%d)", lbl, rp.pos[k]/float64(rp.posN[k]), rp.posN[k])
	}
	return s
}

// compare scores Chen's parameters for set through our GRU and his.
func compare(dir, set string) {
	c := loadChen(dir, set)
	ds, err := music.Load("", set)
	if err != nil {
		log.Fatal(err)
	}
	test := ds.Test
	fmt.Printf("%s: Chen's saved test_negll %.9f; test split %d sequences, %d frames\n", set, c.Meta.TestNLL, len(test), test.Frames())

	l := gru.Layout{H: H}
	th := c.toTheta(l)

	// 1. Our scorer, one chain, h0 = 0.
	sc, err := gru.NewScorer(gru.Config{Hidden: H, Chains: 1}, 0)
	if err != nil {
		log.Fatal(err)
	}
	ll := make([]float64, len(test))
	if err := sc.LogLiks(th, test, ll); err != nil {
		log.Fatal(err)
	}
	score, err := sc.Score(th, test)
	if err != nil {
		log.Fatal(err)
	}
	sc.Close()
	fmt.Printf("scorer (ours, h0=0):            NLL/frame %.9f (ensemble field %.9f, frames %d)\n", score.Chain, score.Ensemble, score.Frames)

	zero := make([]float64, H)
	h0 := make([]float64, H)
	for i, b := range c.B0 {
		h0[i] = math.Tanh(b)
	}

	// 2. Hand pass, our GRU, h0 = 0: must equal the scorer.
	a := run(l, th, test, zero, false)
	maxd := 0.0
	for n := range ll {
		maxd = math.Max(maxd, math.Abs(ll[n]-a.perSeqs[n]))
	}
	fmt.Printf("hand, ours, h0=0:               %v\n   max |Δ log p(seq)| vs scorer = %.3g\n", a, maxd)
	// 3. Our GRU with h0 = tanh(b0).
	fmt.Printf("hand, ours, h0=tanh(b0):        %v\n", run(l, th, test, h0, false))
	// 4. Chen's GRU (reset after the recurrent product), h0 = tanh(b0) and 0.
	fmt.Printf("hand, Chen's GRU, h0=tanh(b0):  %v\n", run(l, th, test, h0, true))
	fmt.Printf("hand, Chen's GRU, h0=0:         %v\n", run(l, th, test, zero, true))

	// 5. Our scorer configured as his GRU (gru.Config.InitialState and
	// ResetAfter; b₀ after bo in the layout): must equal 4 and his figure.
	cfg := gru.Config{Hidden: H, Chains: 1, InitialState: true, ResetAfter: true}
	thChen := append(slices.Clone(th), c.B0...)
	if len(thChen) != cfg.Layout().Dim() || cfg.Layout().H0(0) != l.Dim() {
		log.Fatalf("b₀ is not after bo in the layout")
	}
	sc, err = gru.NewScorer(cfg, 0)
	if err != nil {
		log.Fatal(err)
	}
	score, err = sc.Score(thChen, test)
	if err != nil {
		log.Fatal(err)
	}
	sc.Close()
	fmt.Printf("scorer (--initial-state --reset-after): NLL/frame %.9f\n", score.Chain)
}

const P = 5 // first positions reported one by one

func lme(v []float64) float64 {
	mx := math.Inf(-1)
	for _, x := range v {
		mx = math.Max(mx, x)
	}
	s := 0.0
	for _, x := range v {
		s += math.Exp(x - mx)
	}
	return mx + math.Log(s) - math.Log(float64(len(v)))
}

// positions scores the chains of the run in runDir per frame position,
// beside Chen's GRU with his parameters from dir.
func positions(dir, runDir string) {

	var cfg struct{ Flags map[string]string }
	b, err := os.ReadFile(filepath.Join(runDir, "config.json"))
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		log.Fatal(err)
	}
	H, _ := strconv.Atoi(cfg.Flags["hidden"])
	K, _ := strconv.Atoi(cfg.Flags["chains"])
	set := strings.TrimSuffix(cfg.Flags["task"], "-gru")
	dt := graph.Float64
	if cfg.Flags["float32"] == "true" {
		dt = graph.Float32
	}

	f, err := os.Open(filepath.Join(runDir, "checkpoint.json"))
	if err != nil {
		log.Fatal(err)
	}
	var ck struct {
		State struct {
			Steps int       `json:"steps"`
			Theta []float64 `json:"theta"`
		} `json:"state"`
		Rows int `json:"rows"`
	}
	if err := json.NewDecoder(f).Decode(&ck); err != nil {
		log.Fatal(err)
	}
	f.Close()
	theta := ck.State.Theta
	l := gru.Layout{H: H}
	if len(theta) != l.Dim()*K {
		log.Fatalf("theta has %d values, want %d×%d", len(theta), l.Dim(), K)
	}

	// the metrics row at the checkpoint's step, if any, and the best-valid step
	var row map[string]string
	bestStep, bestValid := 0, math.Inf(1)
	if mf, err := os.Open(filepath.Join(runDir, "metrics.csv")); err == nil {
		rows, _ := csv.NewReader(mf).ReadAll()
		mf.Close()
		for _, r := range rows[1:] {
			m := map[string]string{}
			for i, name := range rows[0] {
				m[name] = r[i]
			}
			if s, _ := strconv.Atoi(m["step"]); s == ck.State.Steps {
				row = m
			}
			if v, err := strconv.ParseFloat(m["valid_nll"], 64); err == nil && v < bestValid {
				bestValid = v
				bestStep, _ = strconv.Atoi(m["step"])
			}
		}
	}

	ds, err := music.Load("", set)
	if err != nil {
		log.Fatal(err)
	}
	test := ds.Test
	N := test.Frames()
	fmt.Printf("run %s: task %s, H=%d, K=%d, dtype %v; checkpoint at step %d (rows %d); best valid_nll %.4f at step %d\n",
		runDir, set, H, K, dt, ck.State.Steps, ck.Rows, bestValid, bestStep)

	sc, err := gru.NewScorer(gru.Config{Hidden: H, Chains: K, Dtype: dt}, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer sc.Close()
	// L[t][n·K+k] = log p(seq_n[:t] | θ_k), t = 0..P; L[P+1] the whole sequence.
	L := make([][]float64, P+2)
	L[0] = make([]float64, len(test)*K)
	var nPos [P + 1]int
	for t := 1; t <= P+1; t++ {
		split := test
		if t <= P {
			split = make(music.Split, len(test))
			for n, s := range test {
				tt := min(t, s.T)
				split[n] = music.Sequence{T: tt, Roll: s.Roll[:tt*music.Keys]}
				if s.T >= t {
					nPos[t-1]++
				}
			}
		}
		L[t] = make([]float64, len(test)*K)
		if err := sc.LogLiks(theta, split, L[t]); err != nil {
			log.Fatal(err)
		}
	}
	nPos[P] = N
	for t := 0; t < P; t++ {
		nPos[P] -= nPos[t]
	}

	// Per-position sums over sequences: chain mean and ensemble.
	var chain, ens [P + 1]float64
	perK := make([][]float64, P+2) // perK[t] per-chain totals, for the spread
	for t := 1; t <= P+1; t++ {
		perK[t] = make([]float64, K)
		for n := range test {
			cur, prev := L[t][n*K:(n+1)*K], L[t-1][n*K:(n+1)*K]
			for k := 0; k < K; k++ {
				chain[t-1] -= (cur[k] - prev[k]) / float64(K)
				perK[t][k] -= cur[k] - prev[k]
			}
			ens[t-1] -= lme(cur) - lme(prev)
		}
	}
	totC, totE := 0.0, 0.0
	for t := range chain {
		totC += chain[t]
		totE += ens[t]
	}
	totC /= float64(N)
	totE /= float64(N)
	// Scorer.Score's own numbers, from the whole-sequence log-likelihoods.
	sE, sC := 0.0, 0.0
	for n := range test {
		r := L[P+1][n*K : (n+1)*K]
		sE -= lme(r)
		for _, v := range r {
			sC -= v / float64(K)
		}
	}
	sE /= float64(N)
	sC /= float64(N)
	fmt.Printf("test split: %d sequences, %d frames\n", len(test), N)
	fmt.Printf("overall: chain-mean %.9f, ensemble %.9f (Score-style from whole sequences: %.9f, %.9f)\n", totC, totE, sC, sE)
	if row != nil {
		fmt.Printf("metrics.csv at step %s: test_nll %s, test_nll_chain %s\n", row["step"], row["test_nll"], row["test_nll_chain"])
	} else {
		fmt.Printf("metrics.csv has no row at step %d\n", ck.State.Steps)
	}

	// Chen's GRU with his parameters and h_0 = tanh(b_0)
	c := loadChen(dir, set)
	h0 := make([]float64, H)
	for i, b := range c.B0 {
		h0[i] = math.Tanh(b)
	}
	chen := run(gru.Layout{H: H}, c.toTheta(gru.Layout{H: H}), test, h0, true)
	var cp [P + 1]float64
	for t := range cp {
		cp[t] = chen.pos[t] / float64(chen.posN[t])
	}
	ct := chen.total / float64(chen.frames)
	lbl := func(t int) string {
		if t == P {
			return fmt.Sprintf("t≥%d", P+1)
		}
		return fmt.Sprintf("t=%d", t+1)
	}
	fmt.Printf("%-5s %6s %9s %9s %9s %9s %9s  %s\n", "pos", "n", "chain", "ensemble", "Chen", "Δchain", "Δens", "chain min..max over chains")
	var gfC, gfE, gbC, gbE float64
	for t := 0; t <= P; t++ {
		mc, me := chain[t]/float64(nPos[t]), ens[t]/float64(nPos[t])
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range perK[t+1] {
			lo, hi = math.Min(lo, v/float64(nPos[t])), math.Max(hi, v/float64(nPos[t]))
		}
		c := cp[t]
		fmt.Printf("%-5s %6d %9.4f %9.4f %9.4f %9.4f %9.4f  %.4f..%.4f\n", lbl(t), nPos[t], mc, me, c, mc-c, me-c, lo, hi)
		w := float64(nPos[t]) / float64(N)
		if t < P {
			gfC += (mc - c) * w
			gfE += (me - c) * w
		} else {
			gbC += (mc - c) * w
			gbE += (me - c) * w
		}
	}
	{
		fmt.Printf("%-5s %6d %9.4f %9.4f %9.4f %9.4f %9.4f\n", "all", N, totC, totE, ct, totC-ct, totE-ct)
		fmt.Printf("gap decomposition (nats/frame): chain-mean: first5 %+.4f + bulk %+.4f = %+.4f; ensemble: first5 %+.4f + bulk %+.4f = %+.4f\n",
			gfC, gbC, gfC+gbC, gfE, gbE, gfE+gbE)
	}
}

func main() {
	params := flag.String("params", "", "directory of Chen's parameters as extract.py writes them")
	set := flag.String("set", "", "compare his GRU and ours with his parameters on the test split of this set (jsb or piano)")
	runDir := flag.String("run", "", "score the chains of this music run's checkpoint per frame position")
	flag.Parse()
	switch {
	case *params == "" || (*set == "") == (*runDir == ""):
		log.Fatal("give -params DIR and one of -set SET, -run RUNDIR")
	case *set != "":
		compare(*params, *set)
	default:
		positions(*params, *runDir)
	}
}
