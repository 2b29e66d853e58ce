package samplers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers/diag"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/gaussian"
)

// userSGLD is SGLD as a user would write it outside this package: the same
// arithmetic as SGLD, but it checks neither its energies nor its states,
// and with forget it does not count its steps.
type userSGLD struct {
	t      tasks.Target
	eta    float64
	forget bool
}

func (u *userSGLD) Init(theta0, _ []float64) (*State, error) {
	return &State{Theta: append([]float64(nil), theta0...)}, nil
}

func (u *userSGLD) Step(rng *rand.Rand, s *State) error {
	if s.Eval == nil {
		s.Eval = tasks.NewEval(u.t.Dim(), u.t.Chains())
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
					return ErrStop
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
			k, err := NewSGLD(standardTarget(t, 2), 0.01)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := k.Init(theta0, nil)
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
			err = Run(ctx, k, rng, s, tc.steps, func(step int, st *State) error {
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
	for _, tc := range stateKernels {
		t.Run(tc.name, func(t *testing.T) {
			var states [2]*State
			for i := range states {
				k, err := tc.make(standardTarget(t, 2))
				if err != nil {
					t.Fatal(err)
				}
				s, _ := k.Init(theta0, p0)
				rng := rand.New(rand.NewPCG(3, 4))
				if i == 0 {
					for range 50 {
						if err := k.Step(rng, s); err != nil {
							t.Fatal(err)
						}
					}
				} else if err := Run(context.Background(), k, rng, s, 50, nil); err != nil {
					t.Fatal(err)
				}
				states[i] = s
			}
			if !reflect.DeepEqual(states[0].Theta, states[1].Theta) || !reflect.DeepEqual(states[0].P, states[1].P) || states[1].Steps != 50 {
				t.Errorf("Run differs from stepping: θ %v and %v, p %v and %v, %d steps",
					states[0].Theta, states[1].Theta, states[0].P, states[1].P, states[1].Steps)
			}
		})
	}
}

// TestRunDivergenceIsTheLoopsError: a diverging run returns the error that
// cmd/sample's loop of Step calls met, the same *DivergenceError with the
// same step and message, and leaves the same state; a kernel written
// outside the package that checks nothing gets the same error from Run's
// own check.
func TestRunDivergenceIsTheLoopsError(t *testing.T) {
	loop := func(k Kernel, s *State, rng *rand.Rand) (int, error) {
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
		make func(tasks.Target) (Kernel, error)
	}{
		{"SGLD", func(t tasks.Target) (Kernel, error) { return NewSGLD(t, 50) }},
		{"SGHMC", func(t tasks.Target) (Kernel, error) { return NewSGHMC(t, 50, 1) }},
		{"user's SGLD", func(t tasks.Target) (Kernel, error) { return &userSGLD{t: t, eta: 50}, nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, _ := tc.make(standardTarget(t, 2))
			if tc.name == "user's SGLD" {
				want, _ = NewSGLD(standardTarget(t, 2), 50) // the error SGLD's own checks give
			}
			ws, _ := want.Init(theta0, p0)
			wantSteps, wantErr := loop(want, ws, rand.New(rand.NewPCG(1, 1)))
			var de *DivergenceError
			if !errors.As(wantErr, &de) {
				t.Fatalf("the loop did not diverge: %v", wantErr)
			}

			k, _ := tc.make(standardTarget(t, 2))
			s, _ := k.Init(theta0, p0)
			steps := 0
			err := Run(context.Background(), k, rand.New(rand.NewPCG(1, 1)), s, 2000, func(step int, _ *State) error {
				steps = step
				return nil
			})
			var got *DivergenceError
			if !errors.As(err, &got) || !errors.Is(err, ErrDiverged) || *got != *de || err.Error() != wantErr.Error() {
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
	k := &userSGLD{t: standardTarget(t, 2), eta: 0.01, forget: true}
	s, _ := k.Init(theta0, nil)
	err := Run(context.Background(), k, rand.New(rand.NewPCG(1, 1)), s, 5, nil)
	if want := "samplers: Run: *samplers.userSGLD.Step took the state from step 0 to 0, want 1"; fmt.Sprint(err) != want {
		t.Errorf("Run: %v, want %q", err, want)
	}
	for _, tc := range []struct {
		name string
		k    Kernel
		s    *State
		rng  *rand.Rand
		want string
	}{
		{"nil kernel", nil, s, rand.New(rand.NewPCG(1, 1)), "samplers: Run: nil kernel"},
		{"nil state", k, nil, rand.New(rand.NewPCG(1, 1)), "samplers: Run: nil state"},
		{"nil rng", k, s, nil, "samplers: Run: nil random number generator"},
	} {
		if err := Run(context.Background(), tc.k, tc.rng, tc.s, 1, nil); fmt.Sprint(err) != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestCollectorThinsAndCounts: a Collector keeps copies of the positions of
// the steps after Burn at multiples of Thin from it, and refuses negative
// settings.
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
			k, err := NewSGHMC(standardTarget(t, 2), 0.1, 1)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := k.Init(theta0, p0)
			rng := rand.New(rand.NewPCG(5, 6))
			for range tc.pre {
				k.Step(rng, s)
			}
			c := &Collector{Thin: tc.thin, Burn: tc.burn}
			seen := map[int][]float64{}
			err = Run(context.Background(), k, rng, s, tc.steps, func(step int, s *State) error {
				seen[step] = append([]float64(nil), s.Theta...)
				return c.Hook(step, s)
			})
			if fmt.Sprint(err) != tc.wantErr && (err != nil || tc.wantErr != "") {
				t.Fatalf("Run: %v, want %q", err, tc.wantErr)
			}
			if c.Len() != len(tc.want) || len(c.Positions()) != len(tc.want) || (len(tc.want) > 0 && !reflect.DeepEqual(c.Steps(), tc.want)) {
				t.Fatalf("kept steps %v (Len %d, %d positions), want %v", c.Steps(), c.Len(), len(c.Positions()), tc.want)
			}
			for i, step := range c.Steps() {
				if !reflect.DeepEqual(c.Positions()[i], seen[step]) {
					t.Errorf("position %d (step %d) = %v, want %v", i, step, c.Positions()[i], seen[step])
				}
			}
			if len(tc.want) > 0 && &c.Positions()[len(tc.want)-1][0] == &s.Theta[0] {
				t.Error("the collector kept the state's own slice, not a copy")
			}
			c.Reset()
			if c.Len() != 0 || c.Positions() != nil || c.Thin != tc.thin || c.Burn != tc.burn {
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
	g, err := gaussian.New(corrMean, mat.NewSymDense(2, corrCov))
	if err != nil {
		t.Fatal(err)
	}
	target, err := tasks.Compile(g, chains, graph.Float64)
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewSGHMC(target, 0.01, 1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	l11, l21 := math.Sqrt(corrCov[0]), corrCov[1]/math.Sqrt(corrCov[0])
	l22 := math.Sqrt(corrCov[3] - l21*l21)
	theta, p := make([]float64, 2*chains), make([]float64, 2*chains)
	for c := 0; c < chains; c++ {
		z0, z1 := rng.NormFloat64(), rng.NormFloat64()
		theta[c], theta[chains+c] = corrMean[0]+l11*z0, corrMean[1]+l21*z0+l22*z1
		p[c], p[chains+c] = rng.NormFloat64(), rng.NormFloat64()
	}
	s, err := k.Init(theta, p)
	if err != nil {
		t.Fatal(err)
	}
	samples := &Collector{Thin: thin}
	if err := Run(context.Background(), k, rng, s, steps, samples.Hook); err != nil {
		t.Fatal(err)
	}
	if samples.Len() != steps/thin {
		t.Fatalf("%d samples kept, want %d", samples.Len(), steps/thin)
	}
	coords, err := diag.CoordinateChains(samples.Positions(), chains)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range coords {
		sq := make([][]float64, len(x)) // (x − μ)², whose mean is the variance
		for c, draws := range x {
			sq[c] = make([]float64, len(draws))
			for j, v := range draws {
				sq[c][j] = (v - corrMean[i]) * (v - corrMean[i])
			}
		}
		for _, m := range []struct {
			name   string
			chains [][]float64
			truth  float64
		}{{fmt.Sprintf("mean %d", i+1), x, corrMean[i]}, {fmt.Sprintf("variance %d", i+1), sq, corrCov[3*i]}} {
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
