package samplers_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/samplerstest"
)

// dataSized is a target that reports n data, so that Santa divides its
// gradients by n for its preconditioner.
type dataSized struct {
	samplers.Target
	n float64
}

func (d dataSized) DataSize() float64 { return d.n }

// TestOptimisersMatchHandComputation runs two steps of Adam, SGD with
// momentum and Santa on the standard target (2 chains in 2-D, ∇U = θ − μ)
// from samplerstest.Theta0 and checks every position and momentum against
// the update formulas of their doc comments, written out here step by step
// with the same noise (samplerstest.Normals): Adam's bias correction at
// t = 1 and 2, SGD-M's velocity from given momenta, Santa's drawn u_0 and
// exploration step (with the SDE's noise) followed by a refinement step,
// and Santa from given momenta exploring twice with the Algorithm's noise,
// where the second step's noise takes g_1, on a target of N = 4 data, so
// that its preconditioner divides by N².
func TestOptimisersMatchHandComputation(t *testing.T) {
	const eta, seed = 0.1, 42
	type state struct{ theta, p []float64 }
	tests := []struct {
		name   string
		target func(t *testing.T) samplers.Target
		make   func(samplers.Target) (samplers.Kernel, error)
		p0     []float64
		// want returns the states after steps 1 and 2 by hand, from the
		// gradient of the standard target and the noise xi
		want func(xi []float64) [2]state
	}{
		{
			name: "Adam",
			make: func(tg samplers.Target) (samplers.Kernel, error) {
				return samplers.NewAdam(tg, samplers.AdamSettings{StepSize: samplers.Constant(eta), Beta1: 0.8, Beta2: 0.9, Epsilon: 0.01})
			},
			want: func([]float64) (out [2]state) {
				theta := append([]float64(nil), samplerstest.Theta0...)
				m, v := make([]float64, 4), make([]float64, 4)
				for step := 1; step <= 2; step++ {
					g := samplerstest.GradAt(theta)
					for i := range theta {
						m[i] = 0.8*m[i] + 0.2*g[i]
						v[i] = 0.9*v[i] + 0.1*g[i]*g[i]
						mHat := m[i] / (1 - math.Pow(0.8, float64(step)))
						vHat := v[i] / (1 - math.Pow(0.9, float64(step)))
						theta[i] -= eta * mHat / (math.Sqrt(vHat) + 0.01)
					}
					out[step-1] = state{theta: append([]float64(nil), theta...)}
				}
				return out
			},
		},
		{
			// as the music code of Chen et al. (2016) writes it (b1 = 1 − β₁,
			// b2 = 1 − β₂), each chain's gradient rescaled to norm 5
			name: "Adam, Chen et al.'s code",
			make: func(tg samplers.Target) (samplers.Kernel, error) {
				return samplers.NewAdam(tg, samplers.AdamSettings{StepSize: samplers.Constant(eta), Beta1: 0.8, Beta2: 0.9, Epsilon: 0.01, Rescale: 5, ChenCorrections: true})
			},
			want: func([]float64) (out [2]state) {
				theta := append([]float64(nil), samplerstest.Theta0...)
				m, v := make([]float64, 4), make([]float64, 4)
				const b1, b2, e = 0.2, 0.1, 0.01
				for step := 1; step <= 2; step++ {
					g := samplerstest.GradAt(theta)
					for k := range 2 { // chain k: coordinates k and 2 + k
						norm := math.Hypot(g[k], g[2+k])
						g[k], g[2+k] = g[k]*5/norm, g[2+k]*5/norm
					}
					lrT := eta * math.Sqrt(1-math.Pow(b2, float64(step))) / (1 - math.Pow(b1, float64(step)))
					for i := range theta {
						m[i] = b1*g[i] + (1-b1)*m[i]
						v[i] = b2*g[i]*g[i] + (1-b2)*v[i]
						theta[i] -= lrT * m[i] / (math.Sqrt(v[i]) + e)
					}
					out[step-1] = state{theta: append([]float64(nil), theta...)}
				}
				return out
			},
		},
		{
			name: "SGD-M",
			make: func(tg samplers.Target) (samplers.Kernel, error) {
				return samplers.NewSGDM(tg, samplers.SGDMSettings{StepSize: samplers.Constant(eta), Momentum: 0.7})
			},
			p0: samplerstest.P0,
			want: func([]float64) (out [2]state) {
				theta := append([]float64(nil), samplerstest.Theta0...)
				v := append([]float64(nil), samplerstest.P0...)
				for step := 0; step < 2; step++ {
					g := samplerstest.GradAt(theta)
					for i := range theta {
						v[i] = 0.7*v[i] - eta*g[i]
						theta[i] += v[i]
					}
					out[step] = state{append([]float64(nil), theta...), append([]float64(nil), v...)}
				}
				return out
			},
		},
		{
			name: "Santa u_0 drawn, exploration then refinement",
			make: func(tg samplers.Target) (samplers.Kernel, error) {
				return samplers.NewSanta(tg, samplers.SantaSettings{StepSize: samplers.Constant(eta), Decay: 0.9, Lambda: 0.01, Alpha0: 0.3, Anneal: 0.5, Explore: 1})
			},
			want: func(xi []float64) (out [2]state) {
				// step 1 (t = 1, β = 1): u_0 = √η·xi[0:4], ζ_1 = xi[4:8]
				theta := append([]float64(nil), samplerstest.Theta0...)
				g := samplerstest.GradAt(theta)
				u, v, alpha, pre := make([]float64, 4), make([]float64, 4), make([]float64, 4), make([]float64, 4)
				for i := range theta {
					u0 := math.Sqrt(eta) * xi[i]
					v[i] = 0.1 * g[i] * g[i] // v_0 = 0, N = 1
					pre[i] = 1 / math.Sqrt(0.01+math.Sqrt(v[i]))
					half := theta[i] + pre[i]*u0/2
					a := 0.3 + (u0*u0-eta)/2
					u[i] = math.Exp(-a/2) * u0
					u[i] += -eta*pre[i]*g[i] + math.Sqrt(2*pre[i]*math.Pow(eta, 1.5))*xi[4+i] // g_0 = g_1
					u[i] *= math.Exp(-a / 2)
					alpha[i] = a + (u[i]*u[i]-eta)/2
					theta[i] = half + pre[i]*u[i]/2
				}
				out[0] = state{append([]float64(nil), theta...), append([]float64(nil), u...)}
				// step 2 (t = 2): refinement, no noise, α frozen
				g = samplerstest.GradAt(theta)
				for i := range theta {
					v[i] = 0.9*v[i] + 0.1*g[i]*g[i]
					pre[i] = 1 / math.Sqrt(0.01+math.Sqrt(v[i]))
					half := theta[i] + pre[i]*u[i]/2
					u[i] = math.Exp(-alpha[i]/2) * u[i]
					u[i] -= eta * pre[i] * g[i]
					u[i] *= math.Exp(-alpha[i] / 2)
					theta[i] = half + pre[i]*u[i]/2
				}
				out[1] = state{append([]float64(nil), theta...), append([]float64(nil), u...)}
				return out
			},
		},
		{
			name:   "Santa from given momenta, N = 4, exploring twice, the Algorithm's noise",
			target: func(t *testing.T) samplers.Target { return dataSized{samplerstest.StandardTarget(t, 2), 4} },
			make: func(tg samplers.Target) (samplers.Kernel, error) {
				return samplers.NewSanta(tg, samplers.SantaSettings{StepSize: samplers.Constant(eta), Decay: 0.9, Lambda: 0.01, Alpha0: 0.3, Anneal: 0.5, Explore: 2,
					Noise: samplers.SantaNoiseAlgorithm})
			},
			p0: samplerstest.P0,
			want: func(xi []float64) (out [2]state) {
				theta := append([]float64(nil), samplerstest.Theta0...)
				u := append([]float64(nil), samplerstest.P0...)
				v, alpha, prev := make([]float64, 4), []float64{0.3, 0.3, 0.3, 0.3}, make([]float64, 4)
				for step := 1; step <= 2; step++ {
					temp := eta / math.Sqrt(float64(step)) // η/β_t, β_t = t^0.5
					g := samplerstest.GradAt(theta)
					for i := range theta {
						fn := g[i] / 4
						v[i] = 0.9*v[i] + 0.1*fn*fn
						pre := 1 / math.Sqrt(0.01+math.Sqrt(v[i]))
						if step == 1 {
							prev[i] = pre // g_0 = g_1
						}
						half := theta[i] + pre*u[i]/2
						a := alpha[i] + (u[i]*u[i]-temp)/2
						u[i] = math.Exp(-a/2) * u[i]
						u[i] += -eta*pre*g[i] + math.Sqrt(2*prev[i]*temp)*xi[4*(step-1)+i]
						u[i] *= math.Exp(-a / 2)
						alpha[i] = a + (u[i]*u[i]-temp)/2
						theta[i] = half + pre*u[i]/2
						prev[i] = pre
					}
					out[step-1] = state{append([]float64(nil), theta...), append([]float64(nil), u...)}
				}
				return out
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target := samplerstest.StandardTarget(t, 2)
			if tc.target != nil {
				target = tc.target(t)
			}
			k, err := tc.make(target)
			if err != nil {
				t.Fatal(err)
			}
			st, err := k.Init(samplerstest.Theta0, tc.p0)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want(samplerstest.Normals(seed, 8))
			rng := rand.New(rand.NewPCG(seed, 0))
			for step, w := range want {
				if err := k.Step(rng, st); err != nil {
					t.Fatal(err)
				}
				samplerstest.AssertClose(t, "θ", st.Theta, w.theta)
				if w.p != nil {
					samplerstest.AssertClose(t, "momentum", st.P, w.p)
				}
				if t.Failed() {
					t.Fatalf("step %d differs", step+1)
				}
			}
		})
	}
}

// TestOptimisersReachTheMinimum runs each optimiser on the correlated 2-D
// quadratic U = ½(θ−μ)ᵀΣ⁻¹(θ−μ) + const (samplerstest.CorrMean, CorrCov,
// exact gradients) from four starting points up to 5 away and requires
// every coordinate of every chain within the stated tolerance of the
// minimum μ. Adam and SGD-M converge to it to rounding. Santa, after 500
// steps of noisy exploration (β_t = √t), refines to within about η of it
// and no closer: its RMSprop average of squared gradients forgets within
// about 1/(1−σ) = 20 steps (σ = 0.95, the authors' music setting), so near
// the minimum its step η·g²·f̃ = η·f̃/(λ + √v) is about η whatever the
// gradient, a sign-like descent that circles the minimum at a distance of
// the order of η (it shrinks with η, as a decaying step size would make it).
func TestOptimisersReachTheMinimum(t *testing.T) {
	const k = 4
	tests := []struct {
		name  string
		make  func(samplers.Target) (samplers.Kernel, error)
		steps int
		tol   float64
	}{
		{"Adam", func(tg samplers.Target) (samplers.Kernel, error) {
			s := samplers.DefaultAdamSettings()
			s.StepSize = samplers.Constant(0.01)
			return samplers.NewAdam(tg, s)
		}, 10000, 1e-9},
		{"SGD-M", func(tg samplers.Target) (samplers.Kernel, error) {
			return samplers.NewSGDM(tg, samplers.SGDMSettings{StepSize: samplers.Constant(0.05), Momentum: 0.9})
		}, 2000, 1e-9},
		{"Santa", func(tg samplers.Target) (samplers.Kernel, error) {
			s := samplers.DefaultSantaSettings()
			s.StepSize, s.Explore = samplers.Constant(0.001), 500
			return samplers.NewSanta(tg, s)
		}, 5000, 2 * 0.001},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kern, err := tc.make(samplerstest.GaussianTarget(t, samplerstest.CorrMean, samplerstest.CorrCov, k))
			if err != nil {
				t.Fatal(err)
			}
			theta0 := []float64{-4, 5, 1, 0, 3, -5, 2, -1} // coordinate-major: chain c at (theta0[c], theta0[k+c])
			st, err := kern.Init(theta0, nil)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(5, 5))
			for range tc.steps {
				if err := kern.Step(rng, st); err != nil {
					t.Fatal(err)
				}
			}
			for i, x := range st.Theta {
				if d := math.Abs(x - samplerstest.CorrMean[i/k]); !(d <= tc.tol) {
					t.Errorf("chain %d, coordinate %d: %.12g after %d steps, %.3g from the minimum %g (tolerance %g)", i%k, i/k, x, tc.steps, d, samplerstest.CorrMean[i/k], tc.tol)
				}
			}
		})
	}
}

// TestOptimiserSnapshotsAtEveryStage: a state of Adam, SGD-M and Santa
// saved as JSON before the first step (Santa's u_0 not yet drawn), at the
// last step of Santa's exploration and after it, and restored into a fresh
// kernel, continues bit for bit as the uninterrupted run. (TestSnapshot-
// ResumesExactly saves every kernel mid-run.)
func TestOptimiserSnapshotsAtEveryStage(t *testing.T) {
	var optimisers []samplerstest.Kernel
	for _, c := range stateKernels {
		if c.Name == "Adam" || c.Name == "SGD-M" || c.Name == "Santa" {
			optimisers = append(optimisers, c)
		}
	}
	samplerstest.SnapshotResumesAt(t, optimisers, 0, 8, 9) // Santa explores for 8 steps
}
