package gru

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/graph/graphtest"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
	"github.com/metasgmcmc/metasgmcmc/tasks/music"
)

// randomSequence returns T frames with each key on with probability p.
func randomSequence(rng *rand.Rand, T int, p float64) music.Sequence {
	roll := make([]uint8, T*Keys)
	for i := range roll {
		if rng.Float64() < p {
			roll[i] = 1
		}
	}
	return music.Sequence{T: T, Roll: roll}
}

// randomTheta returns positions of k chains with N(0, σ²) entries.
func randomTheta(rng *rand.Rand, h, k int, sigma float64) []float64 {
	return randomThetaOf(rng, Layout{H: h}, k, sigma)
}

// randomThetaOf returns positions of k chains of a GRU laid out as l with
// N(0, σ²) entries.
func randomThetaOf(rng *rand.Rand, l Layout, k int, sigma float64) []float64 {
	theta := make([]float64, l.Dim()*k)
	for i := range theta {
		theta[i] = sigma * rng.NormFloat64()
	}
	return theta
}

// relErr returns max |a − b| / max |b|.
func relErr(a, b []float64) float64 {
	num, den := 0.0, 0.0
	for i := range a {
		num = math.Max(num, math.Abs(a[i]-b[i]))
		den = math.Max(den, math.Abs(b[i]))
	}
	return num / den
}

// oracleEnergy is the energy of seq as a minibatch of a training split of
// n frames, from the oracle: U and its gradient, prior included.
func oracleEnergy(h, k, n int, theta []float64, seq music.Sequence) (u, grad []float64) {
	return oracleEnergyOf(Layout{H: h}, k, n, theta, seq)
}

// oracleEnergyOf is oracleEnergy for a GRU laid out as l.
func oracleEnergyOf(l Layout, k, n int, theta []float64, seq music.Sequence) (u, grad []float64) {
	return oracleEnergyFor(Config{Hidden: l.H, Chains: k, InitialState: l.InitialState}, n, theta, seq)
}

// oracleEnergyFor is oracleEnergy for cfg's GRU.
func oracleEnergyFor(cfg Config, n int, theta []float64, seq music.Sequence) (u, grad []float64) {
	k := cfg.Chains
	scale := float64(n) / float64(seq.T)
	u = make([]float64, k)
	grad = make([]float64, len(theta))
	newOracleFor(cfg).nllGrad(theta, seq, scale, u, grad)
	pu, pg := make([]float64, k), make([]float64, len(theta))
	Prior(theta, k, pu, pg)
	for c := range u {
		u[c] = scale*u[c] + pu[c]
	}
	for i := range grad {
		grad[i] += pg[i]
	}
	return u, grad
}

func TestLayout(t *testing.T) {
	for h, want := range map[int]int{100: 65588, 200: 191088, 3: 1180} {
		l := Layout{H: h}
		if got := l.Dim(); got != want {
			t.Errorf("H=%d: D = %d, want %d", h, got, want)
		}
		if l.Wx(0, 0) != 0 || l.U(0, 0) != l.Wx(Keys-1, 3*h-1)+1 || l.B(0) != l.U(h-1, 3*h-1)+1 ||
			l.Wo(0, 0) != l.B(3*h-1)+1 || l.Bo(0) != l.Wo(h-1, Keys-1)+1 || l.Bo(Keys-1) != l.Dim()-1 {
			t.Errorf("H=%d: blocks are not contiguous in the documented order", h)
		}
		li := Layout{H: h, InitialState: true}
		if li.Dim() != want+h || li.H0(0) != li.Bo(Keys-1)+1 || li.H0(h-1) != li.Dim()-1 || li.Bo(0) != l.Bo(0) {
			t.Errorf("H=%d: the initial state's parameters are not the %d after bo", h, h)
		}
	}
	// kernel layout round trip, and every coordinate in exactly one place
	const h, k = 3, 4
	l := Layout{H: h}
	theta := make([]float64, l.Dim()*k)
	for i := range theta {
		theta[i] = float64(i + 1)
	}
	kn := newKernel(h, k)
	l.toKernel(theta, k, kn)
	total := 0
	for _, p := range kn {
		total += len(p)
		for _, v := range p {
			if v == 0 {
				t.Fatal("a kernel entry is not set")
			}
		}
	}
	if total != len(theta) {
		t.Errorf("kernel holds %d values for %d coordinates", total, len(theta))
	}
	back := make([]float64, len(theta))
	l.fromKernel(kn, k, 1, back)
	if !slices.Equal(back, theta) {
		t.Error("fromKernel(toKernel(θ)) ≠ θ")
	}
	// a spot check of the documented kernel layout: U_r[i][j] of chain c
	i, j, c := 2, 1, 3
	if got, want := kn[kU+gateR][(c*h+i)*h+j], theta[l.U(i, h+j)*k+c]; got != want {
		t.Errorf("U_r kernel entry %v, want %v", got, want)
	}
}

// The energy and its gradient against the hand-written oracle, for segment
// sizes that divide the sequence and that do not, with all, some and none
// of the gate activations kept between the passes.
func TestEnergyAgainstOracle(t *testing.T) {
	const H, K, T = 5, 3, 150
	rng := rand.New(rand.NewPCG(1, 2))
	seq := randomSequence(rng, T, 0.1)
	train := music.Split{randomSequence(rng, 40, 0.1), seq}
	theta := randomTheta(rng, H, K, 0.5)
	wantU, wantGrad := oracleEnergy(H, K, train.Frames(), theta, seq)
	perSeg := func(s int) int64 { return int64(8 * nGates * K * s * H) }
	for _, c := range []struct {
		s   int
		mem int64
	}{{7, 0}, {16, 0}, {25, 0}, {64, 0}, {16, -1}, {16, 3 * perSeg(16)}} {
		e, err := NewEnergy(train, Config{Hidden: H, Chains: K, Segment: c.s, ActivationMemory: c.mem})
		if err != nil {
			t.Fatal(err)
		}
		ev := samplers.NewEval(e.Dim(), K)
		for rep := 0; rep < 2; rep++ { // the second evaluation reuses every buffer
			if err := e.SequenceEnergy(theta, seq, ev); err != nil {
				t.Fatal(err)
			}
		}
		eu, eg := relErr(ev.U, wantU), relErr(ev.Grad, wantGrad)
		t.Logf("S=%d memory %d: U error %.2g, gradient error %.2g", c.s, c.mem, eu, eg)
		if eu > 1e-9 || eg > 1e-9 {
			t.Errorf("S=%d memory %d: U error %.3g, gradient error %.3g (U %v, want %v)", c.s, c.mem, eu, eg, ev.U, wantU)
		}
		// the log-likelihood of the forward program
		ll := make([]float64, K)
		if err := e.LogLik(theta, seq, ll); err != nil {
			t.Fatal(err)
		}
		scale := float64(train.Frames()) / T
		for k := range ll {
			if u := -scale*ll[k] + ev.Prior[k]; math.Abs(u-wantU[k]) > 1e-9*math.Abs(wantU[k]) {
				t.Errorf("S=%d: LogLik gives U_%d = %v, want %v", c.s, k, u, wantU[k])
			}
		}
		e.Close()
	}
}

// The float32 graphs agree with the float64 oracle to float32 accuracy.
func TestEnergyFloat32(t *testing.T) {
	const H, K, T = 5, 3, 150
	rng := rand.New(rand.NewPCG(3, 4))
	seq := randomSequence(rng, T, 0.1)
	train := music.Split{seq}
	theta := randomTheta(rng, H, K, 0.5)
	wantU, wantGrad := oracleEnergy(H, K, train.Frames(), theta, seq)
	e, err := NewEnergy(train, Config{Hidden: H, Chains: K, Segment: 16, Dtype: graph.Float32})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ev := samplers.NewEval(e.Dim(), K)
	if err := e.SequenceEnergy(theta, seq, ev); err != nil {
		t.Fatal(err)
	}
	eu, eg := relErr(ev.U, wantU), relErr(ev.Grad, wantGrad)
	t.Logf("float32: U error %.2g, gradient error %.2g", eu, eg)
	if eu > 1e-5 || eg > 1e-4 {
		t.Errorf("float32: U error %.3g, gradient error %.3g", eu, eg)
	}
}

// checkFD compares the gradient of Σ_k U_k with central differences (step
// h) of the forward program's energy, on at most maxPer coordinates (all
// when 0).
func checkFD(t *testing.T, e *Energy, theta []float64, seq music.Sequence, h float64, maxPer int, tol float64) {
	t.Helper()
	k := e.Chains()
	ev := samplers.NewEval(e.Dim(), k)
	if err := e.SequenceEnergy(theta, seq, ev); err != nil {
		t.Fatal(err)
	}
	scale := e.DataSize() / float64(seq.T)
	ll, pu, pg := make([]float64, k), make([]float64, k), make([]float64, len(theta))
	f := func() (float64, error) {
		if err := e.LogLik(theta, seq, ll); err != nil {
			return 0, err
		}
		Prior(theta, k, pu, pg)
		u := 0.0
		for c := range ll {
			u += -scale*ll[c] + pu[c]
		}
		return u, nil
	}
	res, err := graphtest.CheckGradient(f, [][]float64{theta}, [][]float64{ev.Grad}, h, maxPer)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	if res.Worst > tol {
		t.Errorf("gradient vs finite differences: %v", res)
	}
}

// Finite differences across segment boundaries: 19 frames in segments of 4.
func TestFiniteDifferences(t *testing.T) {
	const H, K, S, T = 3, 2, 4, 19
	rng := rand.New(rand.NewPCG(5, 6))
	seq := randomSequence(rng, T, 0.3)
	e, err := NewEnergy(music.Split{seq, randomSequence(rng, 7, 0.3)}, Config{Hidden: H, Chains: K, Segment: S})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	checkFD(t, e, randomTheta(rng, H, K, 0.5), seq, 1e-5, 700, 1e-6)
}

// A sequence of 300 frames (more than 256) in segments of 128: finite
// differences on a few coordinates, and the oracle on all.
func TestLongSequence(t *testing.T) {
	const H, K, S, T = 2, 2, 128, 300
	rng := rand.New(rand.NewPCG(7, 8))
	seq := randomSequence(rng, T, 0.2)
	train := music.Split{seq}
	e, err := NewEnergy(train, Config{Hidden: H, Chains: K, Segment: S})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	theta := randomTheta(rng, H, K, 0.7)
	checkFD(t, e, theta, seq, 1e-4, 40, 1e-6)
	wantU, wantGrad := oracleEnergy(H, K, train.Frames(), theta, seq)
	ev := samplers.NewEval(e.Dim(), K)
	if err := e.SequenceEnergy(theta, seq, ev); err != nil {
		t.Fatal(err)
	}
	if eu, eg := relErr(ev.U, wantU), relErr(ev.Grad, wantGrad); eu > 1e-9 || eg > 1e-9 {
		t.Errorf("%d frames: U error %.3g, gradient error %.3g against the oracle", T, eu, eg)
	}
}

// With the learned initial state h_0 = tanh(b₀), the energy and its
// gradient (b₀'s included) against the oracle and finite differences, across
// segment boundaries and with no activations kept; the Scorer's
// log-likelihoods against the oracle's; and at b₀ = 0 the model without it,
// bit for bit.
func TestInitialState(t *testing.T) {
	const H, K, T = 4, 3, 45
	l := Layout{H: H, InitialState: true}
	rng := rand.New(rand.NewPCG(31, 32))
	seq := randomSequence(rng, T, 0.2)
	train := music.Split{randomSequence(rng, 12, 0.2), seq}
	theta := randomThetaOf(rng, l, K, 0.5)
	wantU, wantGrad := oracleEnergyOf(l, K, train.Frames(), theta, seq)
	for _, c := range []struct {
		s   int
		mem int64
	}{{7, 0}, {64, 0}, {16, -1}} {
		e, err := NewEnergy(train, Config{Hidden: H, Chains: K, Segment: c.s, ActivationMemory: c.mem, InitialState: true})
		if err != nil {
			t.Fatal(err)
		}
		if e.Dim() != l.Dim() {
			t.Fatalf("D = %d, want %d", e.Dim(), l.Dim())
		}
		ev := samplers.NewEval(e.Dim(), K)
		if err := e.SequenceEnergy(theta, seq, ev); err != nil {
			t.Fatal(err)
		}
		if eu, eg := relErr(ev.U, wantU), relErr(ev.Grad, wantGrad); eu > 1e-9 || eg > 1e-9 {
			t.Errorf("S=%d memory %d: U error %.3g, gradient error %.3g against the oracle", c.s, c.mem, eu, eg)
		}
		b0 := ev.Grad[l.H0(0)*K : (l.H0(H-1)+1)*K]
		if eb := relErr(b0, wantGrad[l.H0(0)*K:(l.H0(H-1)+1)*K]); eb > 1e-9 || slices.Max(b0) == slices.Min(b0) {
			t.Errorf("S=%d: b₀'s gradient %v, error %.3g against the oracle", c.s, b0, eb)
		}
		if c.s == 7 {
			checkFD(t, e, theta, seq, 1e-5, 300, 1e-6)
		}
		e.Close()
	}
	split := music.Split{seq, randomSequence(rng, 9, 0.3), randomSequence(rng, 30, 0.1)}
	sc, _ := checkScorer(t, Config{Hidden: H, Chains: K, Segment: 8, InitialState: true}, 2, newOracleOf(l, K), theta, split)
	sc.Close()
	// b₀ = 0: the model without the initial state, on its coordinates
	plain := theta[:Layout{H: H}.Dim()*K]
	zero := slices.Clone(theta)
	clear(zero[l.H0(0)*K:])
	run := func(cfg Config, theta []float64) ([]float64, []float64) {
		m, err := NewModel(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		nll, grad := make([]float64, K), make([]float64, len(theta))
		if err := m.NLLGrad(theta, seq, 1, nll, grad); err != nil {
			t.Fatal(err)
		}
		return nll, grad
	}
	nll0, g0 := run(Config{Hidden: H, Chains: K, Segment: 8}, plain)
	nll1, g1 := run(Config{Hidden: H, Chains: K, Segment: 8, InitialState: true}, zero)
	if !slices.Equal(nll0, nll1) || !slices.Equal(g0, g1[:len(g0)]) {
		t.Error("with b₀ = 0 the model differs from the one without an initial state")
	}
}

// The GRU with the reset gate after the recurrent product (Config.ResetAfter),
// with and without the initial state: energy and gradient against the
// oracle (segments shorter and longer than the sequence, and no
// activations kept), finite differences across segment boundaries, the
// Scorer against the oracle; and a GRU other than the one without it.
func TestResetAfter(t *testing.T) {
	const H, K, T = 4, 3, 45
	rng := rand.New(rand.NewPCG(41, 42))
	seq := randomSequence(rng, T, 0.2)
	train := music.Split{randomSequence(rng, 12, 0.2), seq}
	split := music.Split{seq, randomSequence(rng, 9, 0.3), randomSequence(rng, 30, 0.1)}
	for _, initial := range []bool{false, true} {
		cfg := Config{Hidden: H, Chains: K, InitialState: initial, ResetAfter: true}
		theta := randomThetaOf(rng, cfg.Layout(), K, 0.7)
		wantU, wantGrad := oracleEnergyFor(cfg, train.Frames(), theta, seq)
		before := cfg
		before.ResetAfter = false
		if u, _ := oracleEnergyFor(before, train.Frames(), theta, seq); relErr(u, wantU) < 1e-3 {
			t.Fatalf("initial state %v: the oracle's energies %v with the reset after the product, %v before: too close to tell them apart", initial, wantU, u)
		}
		for _, c := range []struct {
			s   int
			mem int64
		}{{7, 0}, {64, 0}, {16, -1}} {
			cfg.Segment, cfg.ActivationMemory = c.s, c.mem
			e, err := NewEnergy(train, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ev := samplers.NewEval(e.Dim(), K)
			if err := e.SequenceEnergy(theta, seq, ev); err != nil {
				t.Fatal(err)
			}
			if eu, eg := relErr(ev.U, wantU), relErr(ev.Grad, wantGrad); eu > 1e-9 || eg > 1e-9 {
				t.Errorf("initial state %v, S=%d memory %d: U error %.3g, gradient error %.3g against the oracle", initial, c.s, c.mem, eu, eg)
			}
			if c.s == 7 {
				checkFD(t, e, theta, seq, 1e-5, 300, 1e-6)
			}
			e.Close()
		}
		cfg.Segment, cfg.ActivationMemory = 8, 0
		sc, _ := checkScorer(t, cfg, 2, newOracleFor(cfg), theta, split)
		sc.Close()
	}
}

// Evaluate draws the training sequences in a seeded order, each once per
// data epoch, and returns the energy of the one it drew, prior parts apart.
func TestEvaluate(t *testing.T) {
	const H, K = 2, 2
	rng := rand.New(rand.NewPCG(9, 10))
	var train music.Split
	for _, T := range []int{5, 9, 3, 12, 7} {
		train = append(train, randomSequence(rng, T, 0.2))
	}
	e, err := NewEnergy(train, Config{Hidden: H, Chains: K, Segment: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.DataSize() != 36 {
		t.Errorf("DataSize = %v, want 36", e.DataSize())
	}
	theta := randomTheta(rng, H, K, 0.5)
	ev := samplers.NewEval(e.Dim(), K)
	visits := func(seed uint64) []int {
		e.Batches().Reset()
		r := rand.New(rand.NewPCG(seed, 1))
		var order []int
		for i := 0; i < 3*len(train); i++ {
			if err := e.Evaluate(r, theta, ev); err != nil {
				t.Fatal(err)
			}
			order = append(order, e.last)
		}
		return order
	}
	a, b, c := visits(1), visits(1), visits(2)
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different orders: %v and %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 give the same order %v", a)
	}
	for ep := 0; ep < 3; ep++ {
		got := slices.Sorted(slices.Values(a[ep*len(train) : (ep+1)*len(train)]))
		if !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
			t.Errorf("epoch %d visits %v, want each sequence once", ep+1, a[ep*len(train):(ep+1)*len(train)])
		}
	}
	if slices.Equal(a[:5], a[5:10]) && slices.Equal(a[5:10], a[10:]) {
		t.Errorf("the same permutation every epoch: %v", a)
	}
	// the last evaluation is the energy of sequence e.last
	wantU, wantGrad := oracleEnergy(H, K, 36, theta, train[e.last])
	if eu, eg := relErr(ev.U, wantU), relErr(ev.Grad, wantGrad); eu > 1e-9 || eg > 1e-9 {
		t.Errorf("Evaluate: U error %.3g, gradient error %.3g", eu, eg)
	}
	d := float64(e.Dim())
	for k := 0; k < K; k++ {
		p := 0.5 * d * math.Log(2*math.Pi)
		for i := 0; i < e.Dim(); i++ {
			p += 0.5 * theta[i*K+k] * theta[i*K+k]
		}
		if math.Abs(ev.Prior[k]-p) > 1e-12*p {
			t.Errorf("prior of chain %d: %v, want %v", k, ev.Prior[k], p)
		}
	}
	if !slices.Equal(ev.PriorGrad, theta) {
		t.Error("PriorGrad ≠ θ")
	}
}

// loadData loads a data set from $METASGMCMC_DATA (or ./data), skipping the
// test when it is absent.
func loadData(t *testing.T, name string) *music.Dataset {
	t.Helper()
	d, err := music.Load(datadir.Dir(""), name)
	var missing *datadir.MissingError
	if errors.As(err, &missing) {
		datatest.Skip(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The energy of a short real JSB chorale against the oracle.
func TestRealJSB(t *testing.T) {
	d := loadData(t, "jsb")
	const H, K = 8, 2
	seq := d.Train[0]
	for _, s := range d.Train {
		if s.T < seq.T {
			seq = s
		}
	}
	e, err := NewEnergy(d.Train, Config{Hidden: H, Chains: K, Segment: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	theta := randomTheta(rand.New(rand.NewPCG(11, 12)), H, K, 0.3)
	ev := samplers.NewEval(e.Dim(), K)
	if err := e.SequenceEnergy(theta, seq, ev); err != nil {
		t.Fatal(err)
	}
	wantU, wantGrad := oracleEnergy(H, K, d.Train.Frames(), theta, seq)
	eu, eg := relErr(ev.U, wantU), relErr(ev.Grad, wantGrad)
	t.Logf("JSB sequence of %d frames (N = %d): U %v, errors %.2g %.2g", seq.T, d.Train.Frames(), ev.U, eu, eg)
	if eu > 1e-9 || eg > 1e-9 {
		t.Errorf("U error %.3g, gradient error %.3g", eu, eg)
	}
}

// checkScorer compares the log-likelihoods of the Scorer of cfg, running
// batch sequences side by side, with those of the oracle o on split at
// theta; it returns the Scorer, for the caller to close, and the oracle's
// log-likelihoods.
func checkScorer(t *testing.T, cfg Config, batch int, o *oracle, theta []float64, split music.Split) (*Scorer, []float64) {
	t.Helper()
	K := cfg.Chains
	want := make([]float64, len(split)*K)
	for n, seq := range split {
		o.logLik(theta, seq, want[n*K:(n+1)*K])
	}
	sc, err := NewScorer(cfg, batch)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, len(want))
	if err := sc.LogLiks(theta, split, got); err != nil {
		sc.Close()
		t.Fatal(err)
	}
	if e := relErr(got, want); e > 1e-9 {
		t.Errorf("log-likelihoods: error %.3g against the oracle\ngot  %v\nwant %v", e, got, want)
	}
	return sc, want
}

// Scores of a split with more sequences than slots against the oracle's
// log-likelihoods.
func TestScore(t *testing.T) {
	const H, K, S = 4, 3, 8
	rng := rand.New(rand.NewPCG(13, 14))
	var split music.Split
	for _, T := range []int{5, 40, 17, 100, 1, 33, 8} {
		split = append(split, randomSequence(rng, T, 0.15))
	}
	theta := randomTheta(rng, H, K, 0.5)
	sc, want := checkScorer(t, Config{Hidden: H, Chains: K, Segment: S}, 3, newOracle(H, K), theta, split)
	defer sc.Close()
	s, err := sc.Score(theta, split)
	if err != nil {
		t.Fatal(err)
	}
	// the ensemble and the chain average, directly
	ens, chain := 0.0, 0.0
	for n := range split {
		row := want[n*K : (n+1)*K]
		mx := slices.Max(row)
		p := 0.0 // the chain average of p(seq | θ_k), divided by e^mx
		for _, v := range row {
			p += math.Exp(v-mx) / K
			chain -= v / K
		}
		ens -= mx + math.Log(p)
	}
	frames := float64(split.Frames())
	if s.Frames != split.Frames() || math.Abs(s.Ensemble-ens/frames) > 1e-9 || math.Abs(s.Chain-chain/frames) > 1e-9 {
		t.Errorf("Score = %+v, want ensemble %v and chain %v over %v frames", s, ens/frames, chain/frames, frames)
	}
	if s.Ensemble > s.Chain {
		t.Errorf("the ensemble (%v) is worse than the chains on average (%v)", s.Ensemble, s.Chain)
	}
}

func TestMonitor(t *testing.T) {
	const H, K = 3, 2
	rng := rand.New(rand.NewPCG(15, 16))
	test := music.Split{randomSequence(rng, 12, 0.2), randomSequence(rng, 30, 0.2)}
	valid := music.Split{randomSequence(rng, 9, 0.2)}
	cfg := Config{Hidden: H, Chains: K, Segment: 8}
	m, err := NewMonitor(cfg, test, valid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Metrics(); err == nil {
		t.Error("Metrics before any observation: no error")
	}
	theta := randomTheta(rng, H, K, 0.5)
	if err := m.Observe(1, theta); err != nil {
		t.Fatal(err)
	}
	ms, err := m.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := NewScorer(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	st, _ := sc.Score(theta, test)
	sv, _ := sc.Score(theta, valid)
	want := []tasks.Metric{{Name: "test_nll", Value: st.Ensemble}, {Name: "test_nll_chain", Value: st.Chain}, {Name: "valid_nll", Value: sv.Ensemble}}
	if len(ms) != len(want) {
		t.Fatalf("metrics %v, want %v", ms, want)
	}
	for i := range ms {
		if ms[i].Name != want[i].Name || math.Abs(ms[i].Value-want[i].Value) > 1e-12 {
			t.Errorf("metric %d: %v, want %v", i, ms[i], want[i])
		}
	}
	if sum, err := m.Summary(); err != nil || !slices.Equal(sum, ms) {
		t.Errorf("Summary = %v, %v; want %v", sum, err, ms)
	}
}

// TestChainGroupsGiveIdenticalResults evaluates 5 chains in one graph
// (GOMAXPROCS 1), split into three groups run in parallel (GOMAXPROCS 3)
// and split by the cache budget into five groups of one on one CPU
// (GOMAXPROCS 1, groupCacheBytes below one chain's recurrent weights), over a sequence of several segments with part of the activations
// recomputed, and scores a split: log-likelihoods, values and gradients
// must agree bit for bit,
// so results do not depend on the machine's number of CPUs.
func TestChainGroupsGiveIdenticalResults(t *testing.T) {
	const h, k = 6, 5
	rng := rand.New(rand.NewPCG(21, 22))
	seq := randomSequence(rng, 37, 0.2)
	theta := randomTheta(rng, h, k, 0.5)
	split := music.Split{seq, randomSequence(rng, 11, 0.3), randomSequence(rng, 20, 0.1)}
	run := func(procs, cache, groups int) (ll, nll, grad, scores []float64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		defer func(b int) { groupCacheBytes = b }(groupCacheBytes)
		groupCacheBytes = cache
		sc, err := NewScorer(Config{Hidden: h, Chains: k, Segment: 8}, 2)
		if err != nil {
			t.Fatal(err)
		}
		defer sc.Close()
		if len(sc.groups) != groups {
			t.Fatalf("GOMAXPROCS %d, cache %d: %d scorer groups, want %d", procs, cache, len(sc.groups), groups)
		}
		scores = make([]float64, len(split)*k)
		if err := sc.LogLiks(theta, split, scores); err != nil {
			t.Fatal(err)
		}
		m, err := NewModel(Config{Hidden: h, Chains: k, Segment: 8, ActivationMemory: 3 * k * 8 * h * 8 * 2})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if len(m.groups) != groups {
			t.Fatalf("GOMAXPROCS %d, cache %d: %d chain groups, want %d", procs, cache, len(m.groups), groups)
		}
		ll, nll, grad = make([]float64, k), make([]float64, k), make([]float64, m.Dim()*k)
		if err := m.LogLik(theta, seq, ll); err != nil {
			t.Fatal(err)
		}
		if err := m.NLLGrad(theta, seq, 2.5, nll, grad); err != nil {
			t.Fatal(err)
		}
		return ll, nll, grad, scores
	}
	const big, small = 1 << 30, 3 * h * h * 8 // one chain's U: 864 bytes
	ll1, nll1, g1, s1 := run(1, big, 0)
	for _, r := range []struct {
		name                 string
		procs, cache, groups int
	}{{"three groups on 3 CPUs", 3, big, 3}, {"five groups on one CPU", 1, small, 5}, {"four groups on 2 CPUs", 2, 2 * small, 4}} {
		ll3, nll3, g3, s3 := run(r.procs, r.cache, r.groups)
		for _, c := range []struct {
			name string
			a, b []float64
		}{{"log-likelihood", ll1, ll3}, {"NLL", nll1, nll3}, {"gradient", g1, g3}, {"Scorer's log-likelihoods", s1, s3}} {
			for i := range c.a {
				if math.Float64bits(c.a[i]) != math.Float64bits(c.b[i]) {
					t.Fatalf("%s[%d]: %v in one graph, %v in %s", c.name, i, c.a[i], c.b[i], r.name)
				}
			}
		}
	}
}

// Chains are split into as few groups as reach the largest group that one
// group per CPU gives and the cache allows (maxSize), with sizes that differ
// by at most one, and more groups than CPUs in a multiple of the CPUs.
func TestSplitChains(t *testing.T) {
	for _, c := range []struct{ k, procs, maxSize, groups, largest int }{
		{20, 1, 20, 0, 0}, {1, 4, 20, 0, 0}, {20, 2, 20, 2, 10}, {20, 3, 20, 3, 7}, {20, 4, 20, 4, 5}, {20, 8, 20, 7, 3},
		{20, 16, 20, 10, 2}, {20, 20, 20, 20, 1}, {20, 64, 20, 20, 1}, {5, 3, 5, 3, 2}, {7, 6, 7, 4, 2},
		// The cache bound, on one CPU and with more CPUs: the larger count wins.
		{20, 1, 4, 5, 4}, {20, 1, 3, 7, 3}, {20, 1, 1, 20, 1}, {20, 1, 0, 20, 1}, {20, 1, 100, 0, 0},
		{20, 2, 4, 6, 4}, {20, 8, 4, 7, 3}, {20, 2, 2, 10, 2}, {1, 1, 1, 0, 0},
		// More groups than CPUs come in whole rounds.
		{20, 2, 8, 4, 5}, {20, 3, 4, 6, 4}, {7, 2, 2, 4, 2}, {5, 2, 1, 5, 1},
	} {
		gs := splitChains(c.k, c.procs, c.maxSize)
		largest, smallest, next := 0, c.k, 0
		for _, g := range gs {
			if g.off != next {
				t.Errorf("k %d, %d CPUs: group at %d, want %d", c.k, c.procs, g.off, next)
			}
			next += g.k
			largest, smallest = max(largest, g.k), min(smallest, g.k)
		}
		if len(gs) != c.groups || largest != c.largest || (gs != nil && (next != c.k || largest-smallest > 1)) {
			t.Errorf("k %d, %d CPUs: %v, want %d groups of at most %d", c.k, c.procs, gs, c.groups, c.largest)
		}
	}
}
