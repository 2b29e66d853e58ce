package nnkernel

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
	"github.com/metasgmcmc/metasgmcmc/internal/spans"
	"github.com/metasgmcmc/metasgmcmc/internal/vec"
	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// Gamma selects how NNSGHMC computes its correction term Γ.
type Gamma string

// The ways to compute Γ.
const (
	// GammaExact differentiates the step's Gorgonia graph: Γ is exact.
	GammaExact Gamma = "exact"
	// GammaFD uses the paper's finite differences (appendix A): no
	// differentiation, one extra f_D pass per step.
	GammaFD Gamma = "fd"
	// GammaNone drops Γ. This is an ablation, NOT a valid sampler: with
	// state-dependent Q_f and D_f its stationary distribution is not the
	// target.
	GammaNone Gamma = "none"
	// GammaAuthors is the authors' training-mode step on the Bayesian
	// networks (BNN_MNIST/BNN_Sampler.py with mode_train=True, and
	// BNN_Q_D.py, github.com/WenboGong/MetaSGMCMC), which differs from
	// GammaExact in three places: ∂Q_f/∂θ takes the code's sign,
	// +f_Q'(u)·∇Ũ/N where u = −Ũ/N (the chain rule's sign flipped when the
	// energy scale is negative); ∂(s_D|f_D|)/∂p
	// stays in Γ_p where D_f's clamp binds (they differentiate the network
	// part, not the clamped D_f; the 2α·Q_f·∂Q_f/∂p part is gated as in
	// GammaExact); and the position update takes Q_f at (θ_t, p_t) where
	// it should take it at (θ_t, p_{t+1}). Meta-training copies it
	// (train.Config.AuthorsStep). It is NOT a valid sampler where D_f's
	// clamp binds, and ParseGamma does not offer it.
	GammaAuthors Gamma = "authors"
)

// ParseGamma returns the Gamma named s.
func ParseGamma(s string) (Gamma, error) {
	switch g := Gamma(s); g {
	case GammaExact, GammaFD, GammaNone:
		return g, nil
	}
	return "", fmt.Errorf("unknown gamma %q (want exact, fd or none)", s)
}

// Friction selects how NNSGHMC integrates the friction −D_f⊙p and its
// noise over a step.
type Friction string

// The friction steps.
const (
	// FrictionExponential damps the momentum by e^{−η·D_f} in place of
	// the explicit step's 1 − η·D_f, with the noise variance
	// 2·(1 − e^{−η·D_f}) in place of 2η·D_f:
	//
	//	p ← e^{−η·D_f}⊙p + √(2·(1 − e^{−η·D_f}))⊙ξ.
	//
	// It agrees with FrictionExplicit to first order in η·D_f, damps every
	// momentum whatever η·D_f is, and keeps what the explicit step gets
	// right: with this ordering (momentum, then position with the new
	// momentum), a step that decays the momentum by c and adds noise of
	// variance σ² = 2·(1 − c) leaves the positions of a Gaussian target
	// with the target's variance up to O(η²) whatever c is; both steps are
	// of this form. (The exact Ornstein–Uhlenbeck step, with
	// σ² = 1 − e^{−2η·D_f}, keeps the momentum's variance at 1 instead and
	// shrinks the positions' variance towards half the target's as η·D_f
	// grows: 0.68 of it at η·D_f = 1.) The momentum's stationary variance
	// is 2/(1 + e^{−η·D_f}), between 1 and 2. The zero Friction is this
	// one.
	FrictionExponential Friction = "exponential"
	// FrictionExplicit is the paper's Euler step,
	//
	//	p ← (1 − η·D_f)⊙p + √(2η·D_f)⊙ξ,
	//
	// which reproduces the paper and the authors' code. Its momentum's
	// stationary variance is 1/(1 − η·D_f/2), which grows without bound as
	// η·D_f nears 2, and beyond 2 the step throws the chain out.
	FrictionExplicit Friction = "explicit"
)

// ParseFriction returns the Friction named s (exponential or explicit).
func ParseFriction(s string) (Friction, error) {
	switch f := Friction(s); f {
	case FrictionExponential, FrictionExplicit:
		return f, nil
	}
	return "", fmt.Errorf("unknown friction step %q (want exponential or explicit)", s)
}

// Config is a complete NNSGHMC: its settings and its networks, written
// to JSON as one object (meta-training's checkpoints and configuration). The networks f_Q
// and f_D act on each coordinate i of each chain with inputs
//
//	f_Q(u, m·p_i)   and   f_D(u, m·p_i, s_g·∂_iŨ/N),
//
// where u = s_u·(Ũ(θ) + (coef − 1)·U_prior(θ))/N is the pre-processed energy
// of the chain (appendix C of the paper; coef = D_train/D_test corrects the
// prior term for the change of dimension), N the data size, m the momentum
// scale, s_g the gradient scale and s_u the energy scale. Then
//
//	Q_f = β + clamp(f_Q, ±ClampQ),   D_f = clamp(α·Q_f² + s_D·|f_D| + c, 0, DMax),
//
// with Q_f multiplied by the coordinate's cooling factor under the
// thermostat (Settings.Thermostat).
type Config struct {
	Settings
	Nets
}

// Settings are NNSGHMC's settings apart from its networks: the step
// size, the scales of the networks' inputs, the form of Q_f and D_f, and how
// Γ is computed (see Config). DefaultSettings gives the paper's.
type Settings struct {
	StepSize      float64 `json:"step_size"`      // η
	Alpha         float64 `json:"alpha"`          // α ≥ 0
	Beta          float64 `json:"beta"`           // β
	C             float64 `json:"c"`              // c ≥ 0
	ClampQ        float64 `json:"clamp_q"`        // f_Q clamped to ±ClampQ; 0: no clamp
	DMax          float64 `json:"d_max"`          // D_f ≤ DMax; 0: no upper clamp
	DScale        float64 `json:"d_scale"`        // s_D
	EnergyScale   float64 `json:"energy_scale"`   // s_u (the authors use −1 on data tasks: u = log-joint/N)
	GradScale     float64 `json:"grad_scale"`     // s_g
	MomentumScale float64 `json:"momentum_scale"` // m
	TrainDim      int     `json:"train_dim"`      // D_train; 0 means coef = 1
	Gamma         Gamma   `json:"gamma"`
	// Friction is how the friction and its noise are integrated; the zero
	// value is FrictionExponential.
	Friction Friction `json:"friction,omitempty"`
	// NoiseCorrection subtracts the estimated gradient noise
	// B̂ = ½·η·Q_f²·V̂ from the injected noise, on targets that estimate
	// V̂ (samplers.Eval.NoiseVar).
	NoiseCorrection bool `json:"noise_correction,omitempty"`
	// Thermostat τ > 1 cools the coordinates whose momentum heats up: each
	// coordinate keeps T_i, a running mean of p_i² over about the last 50
	// steps (T_i ← 0.98·T_i + 0.02·p_i², from 1; 1 at equilibrium), and
	// where T_i > τ its Q_f is multiplied by τ/T_i for the step, in
	// the update and in Γ alike. A learned Q_f whose step η·Q_f is
	// unstable on a coordinate (η·Q_f·√λ ≳ 2 on curvature λ) throws that
	// coordinate's momentum out exponentially; the factor shrinks the step
	// until it is stable again, and where T_i ≤ τ, as at equilibrium, the
	// sampler is the learned one. A coordinate whose learned step is r
	// times its stable limit settles near T_i ≈ τ·r (a factor √(τ/T_i)
	// would let it settle near τ·r²). Within a step the factor is a
	// constant of the state, so each step is a valid complete-recipe step.
	// 0: off (the paper's sampler). Sampling only: meta-training refuses
	// it.
	Thermostat float64 `json:"thermostat,omitempty"`
	// AdaptiveFriction κ > 0 raises the friction of the coordinates that
	// gradient noise heats, as a per-coordinate Nosé–Hoover thermostat
	// does (SGNHT, Ding et al. 2014): each coordinate keeps ζ_i, from 0,
	// and its exponential friction step damps by c = e^{−η·D_f·max(0, 1 +
	// ζ_i)} while injecting D_f's noise; after the step ζ_i ← ζ_i +
	// κ·(p_i² − 2/(1 + c)), 2/(1 + c) being the stationary p² of a step
	// that damps by c and whose noise balances it (1 as η·D_f → 0), at
	// which the positions have the target's variance. Where the momentum
	// is at that equilibrium ζ_i wanders about 0 (a standard deviation of
	// about √(κ/(2η·D_f)) for small η·D_f) and the sampler is the learned
	// one on average; where minibatch noise adds heat that D_f does not
	// carry off (temperature 1 + B̂/D_f, B̂ = ½·η·Q_f²·V̂), ζ_i climbs
	// until the extra friction does (ζ_i ≈ B̂/D_f, in about 1/κ steps).
	// That holds the positions at the target's variance where the
	// gradient noise is independent from step to step; shuffled
	// minibatches' noise cancels over a pass, the positions feel less of
	// it than the momenta, and it cools them below the target.
	// 0: off (the paper's sampler). It needs FrictionExponential.
	// Sampling only: meta-training refuses it.
	AdaptiveFriction float64 `json:"adaptive_friction,omitempty"`
}

// thermostatDecay is the thermostat's running mean's weight of the past.
const thermostatDecay = 0.98

// cooling is the thermostat's factor of Q_f on a coordinate at
// temperature t (1 when the thermostat is off or t ≤ τ).
func (cfg *Settings) cooling(t float64) float64 {
	if tau := cfg.Thermostat; tau > 0 && t > tau {
		return tau / t
	}
	return 1
}

// warm is the thermostat's running mean t after a step that ends at the
// momentum p.
func warm(t, p float64) float64 {
	return thermostatDecay*t + (1-thermostatDecay)*p*p
}

// cools sets out to the thermostat's factors of Q_f for the running means
// temp (nil: the thermostat is off, every factor 1).
func (cfg *Settings) cools(out, temp []float64) {
	if temp == nil {
		for i := range out {
			out[i] = 1
		}
		return
	}
	for i, t := range temp {
		out[i] = cfg.cooling(t)
	}
}

// warmAll updates the thermostat's running means temp (nil: off) after a
// step that ends at the momenta p.
func warmAll(temp, p []float64) {
	for i, t := range temp {
		temp[i] = warm(t, p[i])
	}
}

// damping is e_a = e^{−η·a·D_f} − 1, the exponential friction step's
// damping of coordinate i with diffusion d, where a = max(0, 1 + ζ_i) is
// the adaptive friction's factor of D_f and e = e^{−η·D_f} − 1 (e itself
// when the adaptive friction is off: zeta nil).
func (cfg *Settings) damping(zeta []float64, i int, d, e float64) float64 {
	if zeta == nil {
		return e
	}
	return math.Expm1(cfg.dampingExponent(zeta[i], d))
}

// dampingExponent is −η·max(0, 1 + ζ)·d, the exponent of damping's
// e^{…} − 1 at the adaptive friction's ζ and the diffusion d.
func (cfg *Settings) dampingExponent(zeta, d float64) float64 {
	return -cfg.StepSize * max(0, 1+zeta) * d
}

// adapt updates the adaptive friction's ζ (nil: off) at coordinate i
// after a step that ends at the momentum p with the damping e_a
// (damping): ζ follows p² less 2/(2 + e_a), the stationary p² of a
// friction step that damps by 1 + e_a and whose noise, injected and the
// gradient's, balances it (1 as η·D_f → 0).
func (cfg *Settings) adapt(zeta []float64, i int, p, ea float64) {
	if zeta != nil {
		zeta[i] += cfg.AdaptiveFriction * (p*p - 2/(2+ea))
	}
}

// blockOf is v[lo:hi], or nil for nil v.
func blockOf(v []float64, lo, hi int) []float64 {
	if v == nil {
		return nil
	}
	return v[lo:hi]
}

// Nets are NNSGHMC's networks, learned by meta-training (package train)
// or drawn at random (RandomNets).
type Nets struct {
	Q *coordnet.Weights `json:"f_q"` // f_Q: 2 inputs
	D *coordnet.Weights `json:"f_d"` // f_D: 3 inputs
}

// DefaultSettings returns the paper's settings for a target without data
// (its toy, appendix D.1, as the authors' code runs it; what cmd/train and
// cmd/sample use on the Gaussian tasks) with step size stepSize:
//
//	Q_f = clamp(f_Q(u, p_i), ±5),   D_f = clamp(|f_D(u, p_i, ∂_iŨ)|, 0, 5),
//
// that is α = 0, β = 0, c = 0, s_D = 1, ClampQ = DMax = 5, the raw energy,
// momentum and gradient as inputs (scales 1) and exact Γ. On data tasks
// the paper also scales the inputs by the data size N (EnergyScale −1:
// u = log-joint/N), adds α = 0.01/η, and raises DMax and DScale (see the
// MNIST and music tasks of cmd/internal/catalog).
func DefaultSettings(stepSize float64) Settings {
	return Settings{StepSize: stepSize, ClampQ: 5, DMax: 5, DScale: 1, EnergyScale: 1, GradScale: 1, MomentumScale: 1, Gamma: GammaExact}
}

// DefaultConfig returns NNSGHMC with the paper's settings for a target
// without data (DefaultSettings), step size stepSize and untrained
// networks of two hidden layers of 40 ReLU units drawn from rng.
//
// Random networks make a valid sampler, not a meta-learned one: Γ keeps
// the target stationary whatever they are. Load trained ones with
// nnsghmc.Load.
func DefaultConfig(stepSize float64, rng *rand.Rand) Config {
	cfg := Config{Settings: DefaultSettings(stepSize)}
	cfg.RandomNets([]int{40, 40}, []int{40, 40}, rng)
	return cfg
}

// RandomNets sets n.Q and n.D to randomly initialised ReLU networks with
// the given hidden widths, drawn from rng.
func (n *Nets) RandomNets(qHidden, dHidden []int, rng *rand.Rand) {
	n.Q = coordnet.New(2, qHidden, coordnet.ReLU, rng)
	n.D = coordnet.New(3, dHidden, coordnet.ReLU, rng)
}

// Validate reports the first invalid setting. Besides settings out of
// range it refuses a D_f that can only be 0 (α, s_D and c all 0): with no
// friction and no noise the dynamics are not a sampler. The zero Config
// is one; DefaultConfig gives the paper's settings.
func (cfg *Config) Validate() error {
	if *cfg == (Config{}) {
		return errors.New("nnsghmc: the zero Config is not a sampler (no step size, no networks, D_f = 0); start from DefaultConfig")
	}
	if err := positive("NNSGHMC step size", cfg.StepSize); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"alpha", cfg.Alpha}, {"c", cfg.C}, {"clamp_q", cfg.ClampQ}, {"d_max", cfg.DMax}, {"d_scale", cfg.DScale}} {
		if err := nonNegative("NNSGHMC "+c.name, c.v); err != nil {
			return err
		}
	}
	if cfg.Alpha == 0 && cfg.DScale == 0 && cfg.C == 0 {
		return errors.New("nnsghmc: NNSGHMC with alpha, d_scale and c all 0 has D_f = 0, no friction and no noise: not a sampler (set d_scale, alpha or c; DefaultConfig has the paper's d_scale 1)")
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"beta", cfg.Beta}, {"energy_scale", cfg.EnergyScale}, {"grad_scale", cfg.GradScale}, {"momentum_scale", cfg.MomentumScale}} {
		if math.IsNaN(c.v) || math.IsInf(c.v, 0) {
			return fmt.Errorf("nnsghmc: NNSGHMC %s must be finite, got %v", c.name, c.v)
		}
	}
	if t := cfg.Thermostat; !(t == 0 || t > 1) || math.IsInf(t, 0) {
		return fmt.Errorf("nnsghmc: NNSGHMC thermostat must be 0 (off) or a temperature above 1, the equilibrium's (3 is what the NT set-up validates with), got %v", t)
	}
	if k := cfg.AdaptiveFriction; !(k >= 0 && k < 1) {
		return fmt.Errorf("nnsghmc: NNSGHMC adaptive_friction κ must be 0 (off) or a rate in (0, 1) (0.001 reacts in about a thousand steps), got %v", k)
	}
	if cfg.AdaptiveFriction != 0 && cfg.Friction == FrictionExplicit {
		return errors.New("nnsghmc: NNSGHMC's adaptive friction needs the exponential friction step (the explicit one overshoots where the added friction takes η·D_f past 2)")
	}
	if cfg.TrainDim < 0 {
		return fmt.Errorf("nnsghmc: NNSGHMC train_dim must be non-negative, got %d", cfg.TrainDim)
	}
	if _, err := ParseGamma(string(cfg.Gamma)); err != nil && cfg.Gamma != GammaAuthors {
		return fmt.Errorf("nnsghmc: NNSGHMC: %w", err)
	}
	if _, err := ParseFriction(string(cfg.Friction)); err != nil && cfg.Friction != "" {
		return fmt.Errorf("nnsghmc: NNSGHMC: %w", err)
	}
	if cfg.Q == nil || cfg.D == nil {
		return errors.New("nnsghmc: NNSGHMC needs both networks f_Q and f_D (use RandomNets or load trained weights)")
	}
	if err := cfg.Q.Validate(); err != nil {
		return fmt.Errorf("nnsghmc: NNSGHMC f_Q: %w", err)
	}
	if err := cfg.D.Validate(); err != nil {
		return fmt.Errorf("nnsghmc: NNSGHMC f_D: %w", err)
	}
	if cfg.Q.Inputs != 2 || cfg.D.Inputs != 3 {
		return fmt.Errorf("nnsghmc: NNSGHMC f_Q takes 2 inputs and f_D 3, got %d and %d", cfg.Q.Inputs, cfg.D.Inputs)
	}
	return nil
}

// Features are the pre-processed inputs of the networks for K chains, as
// computed by Config.Features.
type Features struct {
	U     []float64 // u per coordinate (the chain's u repeated), length D·K
	DU    []float64 // ∂u/∂θ_i = s_u·(∇Ũ + (coef−1)·∇U_prior)/N, length D·K
	GFeat []float64 // s_g·∇Ũ/N, length D·K
}

// Features computes the networks' inputs from an evaluation of a target of
// dimension d and data size n with k chains.
func (cfg *Config) Features(e *samplers.Eval, d, k int, n float64, f *Features) {
	f.U = grow(f.U, d*k)
	f.DU = grow(f.DU, d*k)
	f.GFeat = grow(f.GFeat, d*k)
	sc := cfg.scales(e, d, n)
	u, su, sg, coef := sc.u, sc.su, sc.sg, sc.coef
	spans.Share(d*k, 1<<14, func() (func(lo, hi int), func()) {
		return func(lo, hi int) {
			for j := lo; j < hi; j++ {
				f.U[j] = u[j%k]
				f.DU[j] = su * (e.Grad[j] + (coef-1)*e.PriorGrad[j])
				f.GFeat[j] = sg * e.Grad[j]
			}
		}, nil
	})
}

// featureScales are what the features of one evaluation share: u per
// chain, coef = D_train/D, s_u/N and s_g/N.
type featureScales struct {
	u            []float64
	coef, su, sg float64
}

// scales returns the feature scales of the evaluation e of a target of
// dimension d and data size n.
func (cfg *Config) scales(e *samplers.Eval, d int, n float64) featureScales {
	sc := featureScales{coef: 1, su: cfg.EnergyScale / n, sg: cfg.gradScale(n), u: make([]float64, len(e.U))}
	if cfg.TrainDim > 0 {
		sc.coef = float64(cfg.TrainDim) / float64(d)
	}
	for c := range sc.u {
		sc.u[c] = sc.su * (e.U[c] + (sc.coef-1)*e.Prior[c])
	}
	return sc
}

// gradScale is s_g/N, the factor of the gradient feature for data size n.
func (cfg *Config) gradScale(n float64) float64 { return cfg.GradScale / n }

// GradFeatures writes into dst the gradient feature s_g·∇Ũ/N of the
// gradient grad and data size n: Features' GFeat, bit for bit, rebuilt from
// the gradient alone (meta-training keeps the gradient, not the feature).
func (cfg *Config) GradFeatures(dst, grad []float64, n float64) {
	sg := cfg.gradScale(n)
	for j, g := range grad {
		dst[j] = sg * g
	}
}

func grow(x []float64, n int) []float64 {
	if cap(x) < n {
		return make([]float64, n)
	}
	return x[:n]
}

// Kernel is NNSGHMC, the meta-learned sampler of Gong, Li & Hernández-Lobato (2019):
// SG-MCMC in the complete recipe of Ma et al. (2015) with
//
//	Q(z) = [[0, −Q_f], [Q_f, 0]],   D(z) = [[0, 0], [0, D_f]],
//
// Q_f and D_f diagonal and set per coordinate by the networks (see
// Config). One step, momentum first, as the authors' code orders it:
//
//	p_{t+1} = p_t − η·Q_f⊙∇Ũ(θ_t) − η·D_f⊙p_t + η·Γ_p + √(2η·D_f)⊙ξ_t
//	θ_{t+1} = θ_t + η·Q'_f⊙p_{t+1} + η·Γ'_θ
//
// with the explicit friction step (FrictionExplicit); the exponential one
// (FrictionExponential, the zero Friction) is the same step with D_f
// replaced by D_eff = (1 − e^{−η·D_f})/η, in the friction, the noise and
// Γ_p's ∂D/∂p. Q_f, D_f and Γ_p are at z_t = (θ_t, p_t), Q'_f and Γ'_θ at
// (θ_t, p_{t+1}), ξ_t ~ N(0, I), and the correction terms are
//
//	Γ_θ,i = −∂Q_f,i/∂p_i
//	Γ_p,i = ∂Q_f,i/∂θ_i + ∂D_f,i/∂p_i = (∂Q_f,i/∂u)·(∂u/∂θ_i) + ∂D_f,i/∂p_i.
//
// ∂D_f/∂p includes the α·Q_f² term. With GammaExact, Γ comes from the
// networks' exact input gradients, computed without a graph and equal to
// differentiating the step's Gorgonia graph (train.StepGraph, whose network
// inputs pass through stop-gradients; meta-training unrolls it); GammaFD
// uses finite differences of the networks along the chain; GammaNone drops
// Γ (an invalid-sampler ablation).
//
// ∂u/∂θ_i uses the chain rule with the true sign of the energy scale; the
// authors' code uses +f'(u)·∇Ũ/N even where u = −Ũ/N, a sign slip that is
// practically negligible (it is O(1/N) relative to the drift).
//
// An NNSGHMC keeps scratch space for its steps: it is not safe for
// concurrent use (see samplers.Kernel). Its memory of the chains, for the
// finite-difference Γ, is in each State.
type Kernel struct {
	target samplers.Target
	d, k   int
	cfg    Config
	feat   Features

	update *memory // Update's scratch

	// scratch
	in, dx, gate, ones     []float64
	q, q2, dpart, dhat, dd []float64
	dQdu, dQdp             []float64
	cool                   []float64 // the thermostat's factors

	excess NoiseExcess // of the last step
	watch  [2]*Bounds  // of the momentum and gradient inputs (Watch)
	far    [2]Outlier  // the last step's inputs outside watch (Far)
	finds  []finds     // the fused steps' finds, by span
}

// NoiseExcess is where a step's gradient noise B̂ = ½·η·Q_f²·V̂ exceeded
// the diffusion D_f by the most (B and D zero when it exceeded it nowhere
// or the target estimates no noise).
type NoiseExcess struct {
	B, D  float64
	Coord int // the coordinate, i·K + k
}

// Excess returns where the last step's gradient noise exceeded D_f by the
// most.
func (s *Kernel) Excess() NoiseExcess { return s.excess }

// StepChunk is the largest number of coordinates one step graph handles at
// once; larger problems run it block by block, which bounds its memory.
const StepChunk = 1 << 15

// New returns NNSGHMC with settings cfg on target t.
func New(t samplers.Target, cfg Config) (*Kernel, error) {
	if t == nil || t.Dim() < 1 || t.Chains() < 1 {
		return nil, errors.New("nnsghmc: a target of at least one dimension and one chain is needed")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Kernel{target: t, d: t.Dim(), k: t.Chains(), cfg: cfg, far: noOutliers}, nil
}

// Config returns the sampler's settings.
func (s *Kernel) Config() Config { return s.cfg }

// SetStepSize changes η for the following steps (the authors raise it after
// the first data epochs); α and the other settings stay as they are.
func (s *Kernel) SetStepSize(eta float64) error {
	if err := positive("NNSGHMC step size", eta); err != nil {
		return err
	}
	s.cfg.StepSize = eta
	return nil
}

// Init implements Kernel.
func (s *Kernel) Init(theta0, p0 []float64) (*samplers.State, error) {
	return samplers.InitState(s.target, theta0, p0, true, &memory{})
}

// memory is NNSGHMC's State.Aux: what the finite-difference Γ keeps from
// the previous step, and the step's noise and correction terms.
type memory struct {
	started   bool
	u, p      []float64 // u_{t−1} (per coordinate), p_{t−1}
	q, qhat   []float64 // Q_f(u_{t−1}, p_{t−1}), Q_f(u_{t−1}, p_t)
	noise     []float64
	newP      []float64
	gammaP    []float64
	gammaThet []float64
	temp      []float64 // the thermostat's running means of p², T_i
	zeta      []float64 // the adaptive friction's ζ_i
}

// temperatures returns the thermostat's running means in m for n
// coordinates, starting them at 1, or nil with the thermostat off.
func (s *Kernel) temperatures(m *memory, n int) []float64 {
	if s.cfg.Thermostat == 0 {
		return nil
	}
	if len(m.temp) != n {
		m.temp = make([]float64, n)
		for i := range m.temp {
			m.temp[i] = 1
		}
	}
	return m.temp
}

// zetas returns the adaptive friction's ζ in m for n coordinates,
// starting them at 0, or nil with it off.
func (s *Kernel) zetas(m *memory, n int) []float64 {
	if s.cfg.AdaptiveFriction == 0 {
		return nil
	}
	if len(m.zeta) != n {
		m.zeta = make([]float64, n)
	}
	return m.zeta
}

// Cooled returns the first coordinate of st that the thermostat cools at
// its next step (its running mean of p² above τ) and that mean, or −1
// where it cools none or is off.
func (s *Kernel) Cooled(st *samplers.State) (coord int, temp float64) {
	m := mem(st)
	if s.cfg.Thermostat == 0 || m == nil || m.temp == nil {
		return -1, 0
	}
	i := vec.FirstOutside(m.temp, math.Inf(-1), s.cfg.Thermostat)
	if i < 0 {
		return -1, 0
	}
	return i, m.temp[i]
}

// mem returns NNSGHMC's memory in st, or nil if st has none.
func mem(st *samplers.State) *memory {
	m, _ := st.Aux.(*memory)
	return m
}

// Step implements Kernel.
func (s *Kernel) Step(rng *rand.Rand, st *samplers.State) error {
	s.far = noOutliers
	m := mem(st)
	if m == nil {
		return errors.New("nnsghmc: NNSGHMC state was not made by NNSGHMC.Init")
	}
	if err := samplers.EvaluateState(s.target, rng, st); err != nil {
		return err
	}
	n := s.d * s.k
	m.noise = grow(m.noise, n)
	spans.Normals(rng, m.noise)
	if s.stepFused(st, m) {
		f := first(s.finds)
		s.far = f.far
		st.Steps++
		return f.divergence(st, s.k)
	}
	s.cfg.Features(st.Eval, s.d, s.k, s.target.DataSize(), &s.feat)
	s.far = [2]Outlier{outlier(s.watch[0], s.cfg.MomentumScale, st.P), outlier(s.watch[1], 1, s.feat.GFeat)}
	s.stepPlain(st)
	st.Steps++
	return samplers.CheckState(st, s.k)
}

// stepFused takes one of the fused steps where one applies, leaving what
// it found in s.finds, and reports whether it did.
func (s *Kernel) stepFused(st *samplers.State, m *memory) bool {
	switch {
	case st.Eval.NoiseVar != nil: // the gradient noise is handled per coordinate in the plain step
		return false
	case s.canFuse(m):
		s.stepFusedFD(st, st.Eval)
	case s.canFuseExact():
		s.cfg.Features(st.Eval, s.d, s.k, s.target.DataSize(), &s.feat)
		s.stepFusedExact(st)
	default:
		return false
	}
	return true
}

// Update applies one step's update to (theta, p) in place, given the
// networks' features f and the energy's gradient grad at theta and the noise
// ξ: what Step does after evaluating the target, and the value that the step
// graph (StepGraph) computes. Meta-training runs its unrolls forward with
// it. Finite-difference Γ follows the chain, which Update does not keep, so
// it needs GammaExact or GammaNone.
func (s *Kernel) Update(theta, p []float64, f *Features, grad, noise []float64) error {
	if s.cfg.Gamma == GammaFD {
		return errors.New("nnsghmc: NNSGHMC.Update computes Γ exactly or not at all, not by finite differences")
	}
	if s.cfg.Thermostat != 0 || s.cfg.AdaptiveFriction != 0 {
		return errors.New("nnsghmc: NNSGHMC.Update runs the step graph's update, which has no thermostat and no adaptive friction (set Thermostat and AdaptiveFriction 0)")
	}
	n := s.d * s.k
	for _, v := range [][]float64{theta, p, f.U, f.DU, f.GFeat, grad, noise} {
		if len(v) != n {
			return fmt.Errorf("nnsghmc: NNSGHMC.Update: a vector of length %d, want %d", len(v), n)
		}
	}
	if s.update == nil {
		s.update = &memory{}
	}
	s.update.noise = noise
	s.feat = *f
	st := &samplers.State{Theta: theta, P: p, Eval: &samplers.Eval{Grad: grad}, Aux: s.update}
	if s.canFuseExact() {
		s.stepFusedExact(st)
	} else {
		s.stepPlain(st)
	}
	return nil
}

// positive refuses a value that is not a positive number.
func positive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("nnsghmc: %s must be a positive number, got %v", name, v)
	}
	return nil
}

// nonNegative refuses a value that is not a non-negative number.
func nonNegative(name string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return fmt.Errorf("nnsghmc: %s must be a non-negative number, got %v", name, v)
	}
	return nil
}
