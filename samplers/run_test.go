package samplers_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/diag"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// userSGLD is SGLD as a user would write it outside this package: the same
// arithmetic as SGLD, but it checks neither its energies nor its states,
// and with forget it does not count its steps.
type userSGLD struct {
	t      samplers.Target
	eta    float64
	forget bool
}

func (u *userSGLD) Init(theta0, _ []float64) (*samplers.State, error) {
	return &samplers.State{Theta: append([]float64(nil), theta0...)}, nil
}

func (u *userSGLD) Step(rng *rand.Rand, s *samplers.State) error {
	if s.Eval == nil {
		s.Eval = samplers.NewEval(u.t.Dim(), u.t.Chains())
	}
	if err := u.t.Evaluate(rng, s.Theta, s.Eval); err != nil {
		return err
	}
	sd := math.Sqrt(2 * u.eta)
	for i, g := range s.Eval.Grad {
		s.Theta[i] += -u.eta*g + sd*rng.NormFloat64()
	}
	if !u.forget {
		s.Steps++
	}
	return nil
}

var errHook = errors.New("the hook's own error")

// TestRunStopsWhereItShould: Run takes the steps asked, numbers them as
// State.Steps does, and stops early, with the steps done, for the hook's
// error, ErrStop, a cancelled context (whose cause and error it wraps) or
// an expired deadline.
func TestRunStopsWhereItShould(t *testing.T) {
	cause := errors.New("stopped by the user")
	steps := func(from, to int) []int {
		var s []int
		for i := from; i <= to; i++ {
			s = append(s, i)
		}
		return s
	}
	for _, tc := range []struct {
		name      string
		pre       int // steps taken before Run
		steps     int
		ctx       func() (context.Context, context.CancelCauseFunc)
		hook      func(step int, cancel context.CancelCauseFunc) error
		wantCalls []int // the steps the hook saw
		wantErr   string
		wantIs    []error
	}{
		{name: "all steps", steps: 7, wantCalls: steps(1, 7)},
		{name: "no steps", steps: 0},
		{name: "resumed state", pre: 3, steps: 4, wantCalls: steps(4, 7)},
		{name: "hook error", steps: 10, wantCalls: steps(1, 5), wantErr: errHook.Error(), wantIs: []error{errHook},
			hook: func(step int, _ context.CancelCauseFunc) error {
				if step == 5 {
					return errHook
				}
				return nil
			}},
		{name: "ErrStop", steps: 10, wantCalls: steps(1, 5),
			hook: func(step int, _ context.CancelCauseFunc) error {
				if step == 5 {
					return samplers.ErrStop
				}
				return nil
			}},
		{name: "cancelled mid-run", steps: 10, wantCalls: steps(1, 4),
			wantErr: "samplers: run interrupted after 4 steps: stopped by the user", wantIs: []error{cause, context.Canceled},
			hook: func(step int, cancel context.CancelCauseFunc) error {
				if step == 4 {
					cancel(cause)
				}
				return nil
			}},
		{name: "cancelled mid-run without a cause", pre: 2, steps: 10, wantCalls: steps(3, 6),
			wantErr: "samplers: run interrupted after 6 steps: context canceled", wantIs: []error{context.Canceled},
			hook: func(step int, cancel context.CancelCauseFunc) error {
				if step == 6 {
					cancel(nil)
				}
				return nil
			}},
		{name: "cancelled before", steps: 10, wantErr: "samplers: run interrupted after 0 steps: stopped by the user",
			wantIs: []error{cause, context.Canceled},
			ctx: func() (context.Context, context.CancelCauseFunc) {
				ctx, cancel := context.WithCancelCause(context.Background())
				cancel(cause)
				return ctx, cancel
			}},
		{name: "deadline", steps: 10, wantErr: "samplers: run interrupted after 0 steps: context deadline exceeded",
			wantIs: []error{context.DeadlineExceeded},
			ctx: func() (context.Context, context.CancelCauseFunc) {
				ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
				return ctx, func(error) { cancel() }
			}},
		{name: "negative steps", steps: -1, wantErr: "samplers: Run: -1 steps, want 0 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := samplers.NewSGLD(samplerstest.StandardTarget(t, 2), samplers.SGLDSettings{StepSize: samplers.Constant(0.01)})
			if err != nil {
				t.Fatal(err)
			}
			s, _ := k.Init(samplerstest.Theta0, nil)
			rng := rand.New(rand.NewPCG(1, 2))
			for range tc.pre {
				if err := k.Step(rng, s); err != nil {
					t.Fatal(err)
				}
			}
			newCtx := tc.ctx
			if newCtx == nil {
				newCtx = func() (context.Context, context.CancelCauseFunc) {
					return context.WithCancelCause(context.Background())
				}
			}
			ctx, cancel := newCtx()
			defer cancel(nil)
			var calls []int
			err = samplers.Run(ctx, k, rng, s, tc.steps, func(step int, st *samplers.State) error {
				if st != s || step != s.Steps {
					t.Errorf("hook called with step %d and state %p; want step %d and %p", step, st, s.Steps, s)
				}
				calls = append(calls, step)
				if tc.hook != nil {
					return tc.hook(step, cancel)
				}
				return nil
			})
			if got := fmt.Sprint(err); (err != nil || tc.wantErr != "") && got != tc.wantErr {
				t.Errorf("Run: %v, want %q", err, tc.wantErr)
			}
			for _, target := range tc.wantIs {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(%v, %v) is false", err, target)
				}
			}
			if !reflect.DeepEqual(calls, tc.wantCalls) {
				t.Errorf("hook saw steps %v, want %v", calls, tc.wantCalls)
			}
			wantSteps := tc.pre + len(tc.wantCalls)
			if s.Steps != wantSteps {
				t.Errorf("state at step %d, want %d", s.Steps, wantSteps)
			}
		})
	}
}

// TestRunMatchesStepping: Run gives bit for bit the chains of calling Step
// in a loop, for every sampler (stateKernels), with a nil hook.
func TestRunMatchesStepping(t *testing.T) {
	samplerstest.RunMatchesStepping(t, stateKernels)
}

// TestRunDivergenceIsTheLoopsError: a diverging run returns the error that
// cmd/sample's loop of Step calls met, the same *DivergenceError with the
// same step and message, and leaves the same state; a kernel written
// outside the package that checks nothing gets the same error from Run's
// own check.
func TestRunDivergenceIsTheLoopsError(t *testing.T) {
	loop := func(k samplers.Kernel, s *samplers.State, rng *rand.Rand) (int, error) {
		steps := 0
		for step := 1; step <= 2000; step++ {
			if err := k.Step(rng, s); err != nil {
				return steps, err
			}
			steps = step
		}
		return steps, nil
	}
	for _, tc := range []struct {
		name string
		make func(samplers.Target) (samplers.Kernel, error)
	}{
		{"SGLD", func(t samplers.Target) (samplers.Kernel, error) {
			return samplers.NewSGLD(t, samplers.SGLDSettings{StepSize: samplers.Constant(50)})
		}},
		{"SGHMC", func(t samplers.Target) (samplers.Kernel, error) {
			return samplers.NewSGHMC(t, samplers.SGHMCSettings{StepSize: samplers.Constant(50), Friction: 1})
		}},
		{"user's SGLD", func(t samplers.Target) (samplers.Kernel, error) { return &userSGLD{t: t, eta: 50}, nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, _ := tc.make(samplerstest.StandardTarget(t, 2))
			if tc.name == "user's SGLD" {
				want, _ = samplers.NewSGLD(samplerstest.StandardTarget(t, 2), samplers.SGLDSettings{StepSize: samplers.Constant(50)}) // the error SGLD's own checks give
			}
			ws, _ := want.Init(samplerstest.Theta0, samplerstest.P0)
			wantSteps, wantErr := loop(want, ws, rand.New(rand.NewPCG(1, 1)))
			var de *samplers.DivergenceError
			if !errors.As(wantErr, &de) {
				t.Fatalf("the loop did not diverge: %v", wantErr)
			}

			k, _ := tc.make(samplerstest.StandardTarget(t, 2))
			s, _ := k.Init(samplerstest.Theta0, samplerstest.P0)
			steps := 0
			err := samplers.Run(context.Background(), k, rand.New(rand.NewPCG(1, 1)), s, 2000, func(step int, _ *samplers.State) error {
				steps = step
				return nil
			})
			var got *samplers.DivergenceError
			if !errors.As(err, &got) || !errors.Is(err, samplers.ErrDiverged) || *got != *de || err.Error() != wantErr.Error() {
				t.Errorf("Run: %v, want the loop's %v", err, wantErr)
			}
			if steps != wantSteps || got == nil || got.Step != steps+1 {
				t.Errorf("the hook saw %d steps and the error names step %d; the loop took %d good steps", steps, got.Step, wantSteps)
			}
			if !reflect.DeepEqual(s.Theta, ws.Theta) || s.Steps != ws.Steps {
				t.Errorf("Run left the state at step %d, θ %v; the loop at step %d, θ %v", s.Steps, s.Theta, ws.Steps, ws.Theta)
			}
		})
	}
}

// TestRunRefusesAKernelThatDoesNotCount: a Step that leaves State.Steps
// alone would number every step 0.
func TestRunRefusesAKernelThatDoesNotCount(t *testing.T) {
	k := &userSGLD{t: samplerstest.StandardTarget(t, 2), eta: 0.01, forget: true}
	s, _ := k.Init(samplerstest.Theta0, nil)
	err := samplers.Run(context.Background(), k, rand.New(rand.NewPCG(1, 1)), s, 5, nil)
	if want := "samplers: Run: *samplers_test.userSGLD.Step took the state from step 0 to 0, want 1"; fmt.Sprint(err) != want {
		t.Errorf("Run: %v, want %q", err, want)
	}
	for _, tc := range []struct {
		name string
		k    samplers.Kernel
		s    *samplers.State
		rng  *rand.Rand
		want string
	}{
		{"nil kernel", nil, s, rand.New(rand.NewPCG(1, 1)), "samplers: Run: nil kernel"},
		{"nil state", k, nil, rand.New(rand.NewPCG(1, 1)), "samplers: Run: nil state"},
		{"nil rng", k, s, nil, "samplers: Run: nil random number generator"},
	} {
		if err := samplers.Run(context.Background(), tc.k, tc.rng, tc.s, 1, nil); fmt.Sprint(err) != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestCollectorThinsAndCounts: a Collector keeps the positions of the
// steps after Burn at multiples of Thin from it as draws of each chain, and
// refuses negative settings.
func TestCollectorThinsAndCounts(t *testing.T) {
	for _, tc := range []struct {
		name        string
		thin, burn  int
		pre, steps  int
		want        []int
		wantErr     string
		resetBefore bool
	}{
		{name: "zero value keeps every step", steps: 5, want: []int{1, 2, 3, 4, 5}},
		{name: "thin 1", thin: 1, steps: 3, want: []int{1, 2, 3}},
		{name: "thin 3", thin: 3, steps: 10, want: []int{3, 6, 9}},
		{name: "burn and thin", thin: 3, burn: 4, steps: 12, want: []int{7, 10}},
		{name: "burn only", burn: 8, steps: 10, want: []int{9, 10}},
		{name: "all burnt", thin: 2, burn: 10, steps: 10},
		{name: "resumed state", thin: 5, burn: 2, pre: 6, steps: 10, want: []int{7, 12}},
		{name: "negative thin", thin: -1, steps: 3, wantErr: "samplers: Collector.Thin is -1, want 0 or more"},
		{name: "negative burn", burn: -2, steps: 3, wantErr: "samplers: Collector.Burn is -2, want 0 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := samplers.NewSGHMC(samplerstest.StandardTarget(t, 2), samplers.SGHMCSettings{StepSize: samplers.Constant(0.1), Friction: 1})
			if err != nil {
				t.Fatal(err)
			}
			s, _ := k.Init(samplerstest.Theta0, samplerstest.P0)
			rng := rand.New(rand.NewPCG(5, 6))
			for range tc.pre {
				k.Step(rng, s)
			}
			c := &samplers.Collector{Thin: tc.thin, Burn: tc.burn}
			seen := map[int][]float64{}
			err = samplers.Run(context.Background(), k, rng, s, tc.steps, func(step int, s *samplers.State) error {
				seen[step] = append([]float64(nil), s.Theta...)
				return c.Hook(step, s)
			})
			if fmt.Sprint(err) != tc.wantErr && (err != nil || tc.wantErr != "") {
				t.Fatalf("Run: %v, want %q", err, tc.wantErr)
			}
			kept := 0
			if d := c.Draws(); d != nil {
				if k, _, dim := d.Dims(); k != 2 || dim != 2 {
					t.Fatalf("draws of %d chains in %d dimensions, want 2 and 2", k, dim)
				}
				_, kept, _ = d.Dims()
			}
			if c.Len() != len(tc.want) || kept != len(tc.want) || (len(tc.want) > 0 && !reflect.DeepEqual(c.Steps(), tc.want)) {
				t.Fatalf("kept steps %v (Len %d, %d draws), want %v", c.Steps(), c.Len(), kept, tc.want)
			}
			for i, step := range c.Steps() {
				for ch := 0; ch < 2; ch++ { // coordinate j of chain ch at j·K + ch
					if got, want := c.Draws().Draw(ch, i), []float64{seen[step][ch], seen[step][2+ch]}; !reflect.DeepEqual(got, want) {
						t.Errorf("draw %d (step %d) of chain %d = %v, want %v", i, step, ch, got, want)
					}
				}
			}
			c.Reset()
			if c.Len() != 0 || c.Draws() != nil || c.Thin != tc.thin || c.Burn != tc.burn {
				t.Errorf("after Reset: Len %d, Thin %d, Burn %d", c.Len(), c.Thin, c.Burn)
			}
		})
	}
}

// TestRunCollectorHitsGaussianMoments samples the correlated 2-D Gaussian
// of the moment tests with SGHMC through Run and a Collector, from exact
// draws, and checks both means and variances within 2.33 Monte-Carlo
// standard errors, as TestSamplersHitGaussianMoments does for the loop of
// Step calls. The seed is fixed; over seven seeds, one put one of the four
// statistics beyond 2.33 MCSE (3.25), about the rate the bound implies.
func TestRunCollectorHitsGaussianMoments(t *testing.T) {
	const chains, steps, thin = 500, 3000, 10
	target := samplerstest.GaussianTarget(t, samplerstest.CorrMean, samplerstest.CorrCov, chains)
	k, err := samplers.NewSGHMC(target, samplers.SGHMCSettings{StepSize: samplers.Constant(0.01), Friction: 1})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	l11, l21 := math.Sqrt(samplerstest.CorrCov[0]), samplerstest.CorrCov[1]/math.Sqrt(samplerstest.CorrCov[0])
	l22 := math.Sqrt(samplerstest.CorrCov[3] - l21*l21)
	theta, p := make([]float64, 2*chains), make([]float64, 2*chains)
	for c := 0; c < chains; c++ {
		z0, z1 := rng.NormFloat64(), rng.NormFloat64()
		theta[c], theta[chains+c] = samplerstest.CorrMean[0]+l11*z0, samplerstest.CorrMean[1]+l21*z0+l22*z1
		p[c], p[chains+c] = rng.NormFloat64(), rng.NormFloat64()
	}
	s, err := k.Init(theta, p)
	if err != nil {
		t.Fatal(err)
	}
	samples := &samplers.Collector{Thin: thin}
	if err := samplers.Run(context.Background(), k, rng, s, steps, samples.Hook); err != nil {
		t.Fatal(err)
	}
	if samples.Len() != steps/thin {
		t.Fatalf("%d samples kept, want %d", samples.Len(), steps/thin)
	}
	for i := range 2 {
		x := samples.Draws().Coordinate(nil, i)
		sq := make([][]float64, len(x)) // (x − μ)², whose mean is the variance
		for c, draws := range x {
			sq[c] = make([]float64, len(draws))
			for j, v := range draws {
				sq[c][j] = (v - samplerstest.CorrMean[i]) * (v - samplerstest.CorrMean[i])
			}
		}
		for _, m := range []struct {
			name   string
			chains [][]float64
			truth  float64
		}{{fmt.Sprintf("mean %d", i+1), x, samplerstest.CorrMean[i]}, {fmt.Sprintf("variance %d", i+1), sq, samplerstest.CorrCov[3*i]}} {
			mcse, err := diag.MCSE(m.chains)
			if err != nil {
				t.Fatal(err)
			}
			est, n := 0.0, 0
			for _, draws := range m.chains {
				for _, v := range draws {
					est += v
					n++
				}
			}
			est /= float64(n)
			z := math.Abs(est-m.truth) / mcse
			t.Logf("%s: estimate %.4f, truth %.4f, MCSE %.4f, |error|/MCSE %.2f", m.name, est, m.truth, mcse, z)
			if z >= 2.33 {
				t.Errorf("%s: estimate %.4f is %.2f MCSE from the truth %.4f", m.name, est, z, m.truth)
			}
		}
	}
}
