package catalog

import (
	"math"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/train"
)

func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		b    float64
		want string
	}{
		{0, "0 B"}, {1000, "1e+03 B"}, {1536, "1.5 KiB"}, {4 << 30, "4 GiB"}, {150 << 30, "150 GiB"},
		{175 << 40, "175 TiB"}, {3 << 60, "3 EiB"}, {4096 << 60, "4.1e+03 EiB"},
	} {
		if got := FormatBytes(tc.b); got != tc.want {
			t.Errorf("FormatBytes(%v) = %q, want %q", tc.b, got, tc.want)
		}
	}
}

// TestMemoryEstimates checks the sizes that SampleBytes and TrainBytes
// count, and that they do not overflow where D·K does not fit in an int.
func TestMemoryEstimates(t *testing.T) {
	g, err := New("gaussian20", DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New("gaussian2d", DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		// state: 10 vectors of D·K float64; the Gaussian monitor: one per
		// step; metrics.csv: a row per score
		{"gaussian20, 50 chains, 12000 steps", g.SampleBytes(50, 12000, 100), 8*20*50*(10+12000) + 64*121},
		{"gaussian2d, 5 chains, 100 steps", m.SampleBytes(5, 100, 10), 8*2*5*(10+100) + 64*11},
		{"2e18 chains", g.SampleBytes(2e18, 1, 1), 8*20*2e18*11 + 64*2},
		{"a score every step", m.SampleBytes(1, 1e12, 1), 8*2*(10+1e12) + 64*(1e12+1)},
		// training: state and 4 vectors a step of the window; the times
		// of the cross-chain loss
		{"training, window 20", g.TrainBytes(train.Config{Chains: 50, Steps: 100, Window: 20, Cross: &train.CrossChain{Every: 2}}),
			8*20*50*(10+4*20) + 48*50},
		// with an in-chain loss, of every step from its burn-in on, and
		// positions and gradients at its times
		{"training with an in-chain loss", g.TrainBytes(train.Config{Chains: 50, Steps: 100, Window: 20, InChain: &train.InChain{Burn: 50, Thin: 3}}),
			8*20*50*(10+4*51) + (48+2*8*20*50)*51.0/3},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v bytes, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestMemoryLimitIsSomething(t *testing.T) {
	b, source := MemoryLimit()
	if !(b > 0 && b <= 1<<47) || source == "" {
		t.Errorf("MemoryLimit() = %v, %q", b, source)
	}
	if p := physicalMemory(); p > 0 && b > p {
		t.Errorf("limit %v is above the physical memory %v", b, p)
	}
}

// TestCheckRefusesWithTheFigures checks the messages of runs that cannot
// fit in any 64-bit process.
func TestCheckRefusesWithTheFigures(t *testing.T) {
	g, err := New("gaussian20", DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{g.CheckSample(2e18, 12000, 100), []string{"--chains 2000000000000000000 on gaussian20 (20 dimensions) for --steps 12000 needs at least about 3.33e+06 EiB of memory, more than the ",
			"lower --chains or --steps (the task's monitor keeps every position of every step)"}},
		{g.CheckSample(50, 1e15, 100), []string{"--chains 50 on gaussian20 (20 dimensions) for --steps 1000000000000000 needs at least about 6.94 EiB"}},
		{g.CheckTrain(train.Config{Chains: 2e15, Steps: 100, Window: 20}), []string{"--chains 2000000000000000 on gaussian20 (20 dimensions) with --steps 100 and --window 20 needs at least about 25 EiB",
			"lower --chains, --steps or --window"}},
	} {
		if tc.err == nil {
			t.Errorf("accepted; want %q", tc.want[0])
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(tc.err.Error(), w) {
				t.Errorf("%q lacks %q", tc.err, w)
			}
		}
	}
	if err := g.CheckSample(50, 12000, 100); err != nil {
		t.Errorf("the task's defaults refused: %v", err)
	}
}

// TestSizeOptionsAreValidated is the regression test of the panics of
// --target-scale NaN and of out-of-range GRU widths: catalog.New refuses
// them with errors naming the flag, before any data is read.
func TestSizeOptionsAreValidated(t *testing.T) {
	for _, tc := range []struct {
		task string
		set  func(*Options)
		want string
	}{
		{"gaussian20", func(o *Options) { o.TargetScale = math.NaN() }, "--target-scale must be a positive number, got NaN"},
		{"gaussian20", func(o *Options) { o.TargetScale = -1 }, "--target-scale must be a positive number, got -1"},
		{"gaussian20", func(o *Options) { o.TargetScale = 1e-200 }, "has no valid covariance in float64"},
		{"gaussian20", func(o *Options) { o.TargetScale = 1e200 }, "has no valid covariance in float64"},
		{"piano-gru", func(o *Options) { o.Hidden = -1 }, "--hidden must be between 1 and 1048576, got -1"},
		{"jsb-gru", func(o *Options) { o.Hidden = 1 << 21 }, "--hidden must be between 1 and 1048576, got 2097152"},
	} {
		o := DefaultOptions
		o.DataDir = t.TempDir() // empty: the size is checked first
		tc.set(&o)
		_, err := New(tc.task, o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.task, err, tc.want)
		}
	}
}

// TestNetworkSizesAreChecked is the regression test of --q-hidden -3 (a
// makeslice panic) and --d-hidden 100000000 or --q-hidden 100000,100000
// (fatal out-of-memory errors): widths out of range and networks beyond
// memory are refused with one line.
func TestNetworkSizesAreChecked(t *testing.T) {
	g, err := New("gaussian20", DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	// f_Q 2→3→1, f_D 3→1 on 20×2 = 40 coordinates
	if got, want := g.NetBytes([]int{3}, nil, 2), 8*(2*3+3+40*3+3+1)+8*(3+1.0); got != want {
		t.Errorf("NetBytes = %v, want %v", got, want)
	}
	// at most samplers.StepChunk coordinates at a time
	if got, want := g.NetBytes(nil, []int{2}, 1e9), 8*(2+1.0)+8*(3*2+2+32768*2+2+1.0); got != want {
		t.Errorf("NetBytes of a large run = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		q, d []int
		want string
	}{
		{[]int{-3}, []int{40}, "--q-hidden: widths must be between 1 and 1048576, got [-3]"},
		{[]int{40, 0}, []int{40}, "--q-hidden: widths must be between 1 and 1048576, got [40 0]"},
		{[]int{40}, []int{100000000}, "--d-hidden: widths must be between 1 and 1048576, got [100000000]"},
		{[]int{1 << 20, 1 << 20}, []int{40}, "NNSGHMC with --q-hidden [1048576 1048576] and --d-hidden [40] on --chains 50 of gaussian20 (20 dimensions) needs at least about 8.02 TiB of memory"},
	} {
		err := g.CheckNets(tc.q, tc.d, 50)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("q %v, d %v: error %v, want %q", tc.q, tc.d, err, tc.want)
		}
	}
	if err := g.CheckNets([]int{40, 40}, []int{40, 40}, 50); err != nil {
		t.Errorf("the task's networks refused: %v", err)
	}
}
