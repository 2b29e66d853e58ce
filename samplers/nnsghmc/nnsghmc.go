// Package nnsghmc runs NNSGHMC, the meta-learned sampler of Gong, Li &
// Hernández-Lobato (ICLR 2019), on any samplers.Target: SG-MCMC in the
// complete recipe of Ma et al. (2015) whose curl Q_f and diffusion D_f
// are set per coordinate by two small networks, with the correction term Γ
// that keeps the target stationary whatever the networks are.
//
// A trained sampler (Trained, read by Load from the file that cmd/train
// writes) holds the networks, the scalings of their inputs and the domain
// they were trained on; how it runs (the step size, the form of Q_f and
// D_f, how Γ is computed) is a Settings, given at run time:
//
//	trained, err := nnsghmc.Load("experiments/gaussian/sampler.json")
//	kernel, err := nnsghmc.New(target, trained, nnsghmc.ToySettings())
//
// ToySettings, BNNSettings and RNNSettings are the paper's settings for its
// toy, its Bayesian MLPs and its GRUs. When a run feeds the networks inputs
// far outside the ranges they saw in training, or runs at a step size far
// from the trained one, the sampler says so once (Settings.Warn): a learned
// sampler extrapolates there, and may give a wrong posterior while its
// chains mix well.
//
// Meta-training (package train) differentiates the step of the same
// sampler through a Gorgonia graph; this package needs no Gorgonia.
package nnsghmc

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// Gamma selects how NNSGHMC computes its correction term Γ: GammaExact
// differentiates the networks exactly; GammaFD uses the paper's finite
// differences along the chain (appendix A; cheaper, one step stale);
// GammaNone drops Γ, an ablation and NOT a valid sampler.
type Gamma = nnkernel.Gamma

// The ways to compute Γ.
const (
	GammaExact = nnkernel.GammaExact
	GammaFD    = nnkernel.GammaFD
	GammaNone  = nnkernel.GammaNone
)

// ParseGamma returns the Gamma named s (exact, fd or none).
func ParseGamma(s string) (Gamma, error) { return nnkernel.ParseGamma(s) }

// Friction selects how NNSGHMC integrates its friction −D_f⊙p and the
// noise that goes with it: FrictionExponential damps the momentum by
// e^{−η·D_f}, stable at every step size; FrictionExplicit by 1 − η·D_f, the
// paper's Euler step, which throws chains out where η·D_f > 2. The
// exponential step's noise variance is 2·(1 − e^{−η·D_f}), not the exact
// Ornstein–Uhlenbeck step's 1 − e^{−2η·D_f}: with the position updated by
// the new momentum, a decay c with noise variance 2·(1 − c) leaves a
// Gaussian target's positions with its variance up to O(η²) for any c, as
// the explicit step does where it is stable, while the exact step's
// positions shrink towards half the target's variance as η·D_f grows.
type Friction = nnkernel.Friction

// The friction steps (see Friction).
const (
	FrictionExponential = nnkernel.FrictionExponential
	FrictionExplicit    = nnkernel.FrictionExplicit
)

// ParseFriction returns the Friction named s (exponential or explicit).
func ParseFriction(s string) (Friction, error) { return nnkernel.ParseFriction(s) }

// Settings are how an NNSGHMC runs:
//
//	Q_f = β + clamp(f_Q, ±ClampQ),   D_f = clamp(α·Q_f² + s_D·|f_D| + c, 0, DMax)
//
// (Q_f cooled where a coordinate runs hot under Thermostat; the damping's
// D_f raised by the factor max(0, 1 + ζ) under AdaptiveFriction), one
// step, momentum first, with the exponential friction step,
//
//	p_{t+1} = e^{−η·D_f}⊙p_t − η·Q_f⊙∇Ũ(θ_t) + η·Γ_p + √(2·(1 − e^{−η·D_f}) − 2η·B̂)⊙ξ_t
//	θ_{t+1} = θ_t + η·Q'_f⊙p_{t+1} + η·Γ'_θ,
//
// or with the paper's explicit one (Friction),
//
//	p_{t+1} = p_t − η·Q_f⊙∇Ũ(θ_t) − η·D_f⊙p_t + η·Γ_p + √(2η·(D_f − B̂))⊙ξ_t,
//
// with B̂ = ½·η·Q_f²·V̂ under NoiseCorrection on targets that estimate the
// gradient noise V̂ (samplers.TargetSettings.NoiseEstimate), else 0. The
// networks and s_D come from the Trained sampler. The presets below are the
// paper's; their Friction is the trained sampler's (explicit for files of
// versions 1 and 2, which reproduces the paper).
type Settings struct {
	// StepSize gives η at each step.
	StepSize samplers.Schedule `json:"-"`
	Alpha    float64           `json:"alpha"` // α ≥ 0
	// Beta is the offset β of Q_f = β + f_Q. It speeds the chains only
	// where it has f_Q's sign (Trained.QSign); one of the other sign first
	// brings Q_f towards 0 (chains that barely move) before it flips it.
	Beta   float64 `json:"beta"`
	C      float64 `json:"c"`       // c ≥ 0
	ClampQ float64 `json:"clamp_q"` // f_Q clamped to ±ClampQ; 0: no clamp
	DMax   float64 `json:"d_max"`   // D_f ≤ DMax; 0: no upper clamp
	Gamma  Gamma   `json:"gamma"`
	// Friction is the friction step. The zero value runs the trained
	// sampler's (Domain.Friction), or FrictionExponential where it has
	// none; a friction other than the trained one is warned of, once.
	Friction Friction `json:"friction,omitempty"`
	// NoiseCorrection subtracts the estimated gradient noise from the
	// injected noise (see above).
	NoiseCorrection bool `json:"noise_correction,omitempty"`
	// Thermostat τ > 1 cools a coordinate whose momentum heats up: where
	// the running mean of its p² over about the last 50 steps exceeds τ (it
	// is 1 at equilibrium), its Q_f is multiplied by τ/mean for the
	// step, Γ alike, so each step is still a valid one. A learned Q_f
	// whose step is unstable somewhere (η·Q_f·√λ ≳ 2 on a coordinate of
	// curvature λ: a stiffer target, a larger η or a hotter chain than in
	// training) otherwise throws the momentum out exponentially; the
	// thermostat shrinks the step there until it is stable, and leaves the
	// learned sampler as it is where the chains are at equilibrium. A
	// coordinate that stays unstable at its learned Q_f stays warm, which
	// the chains' kinetic temperature shows (samplers.KineticTemperatures).
	// The NT set-up validates and evaluates with 3
	// (experiments/mnist-nt/thermostat.sweep chose it). 0: off, the
	// paper's sampler (the presets).
	Thermostat float64 `json:"thermostat,omitempty"`
	// AdaptiveFriction κ > 0 adds friction where minibatch gradient noise
	// heats a coordinate, as a per-coordinate Nosé–Hoover thermostat
	// (SGNHT) does: each coordinate keeps ζ, from 0, its momentum is
	// damped by c = e^{−η·D_f·max(0, 1 + ζ)} while the injected noise
	// stays D_f's, and after each step ζ ← ζ + κ·(p² − 2/(1 + c)), p² less
	// the stationary p² of a step that damps by c and whose noise balances
	// it (1 as η·D_f → 0). At equilibrium ζ wanders about 0; where the
	// noise B̂ adds heat that D_f does not carry off (the chain's
	// temperature 1 + B̂/D_f), ζ climbs to about B̂/D_f, in about 1/κ
	// steps, and holds the temperature at 1. It needs no
	// estimate of the noise, and the exponential friction step. It reads
	// the momenta's heat, which stands for the positions' only where the
	// gradient noise is independent from step to step (minibatches drawn
	// with replacement); with shuffled minibatches, whose noise cancels
	// over a pass, it can cool the positions below the posterior
	// (ExampleSettings_adaptiveFriction), so check them there (for a
	// Bayesian MLP's last layer, bnn.Energy.LastLayerHeat). 0: off, the
	// paper's sampler (the presets).
	AdaptiveFriction float64 `json:"adaptive_friction,omitempty"`
	// Warn receives the warnings (the standard logger when nil).
	Warn samplers.Warn `json:"-"`
}

// ToySettings are the paper's settings for its toy Gaussians (appendix
// D.1, as the authors' code runs it): η = 0.025, Q_f = clamp(f_Q, ±5),
// D_f = clamp(s_D·|f_D|, 0, 5), exact Γ.
func ToySettings() Settings {
	return Settings{StepSize: samplers.Constant(0.025), ClampQ: 5, DMax: 5, Gamma: GammaExact}
}

// DefaultSettings are ToySettings.
func DefaultSettings() Settings { return ToySettings() }

// BNNSettings are the paper's settings for its Bayesian MLPs on MNIST
// (appendix D.2, as the authors' code runs them) at step size eta:
// α = 0.01/η, f_Q clamped to ±5, D_f to [0, 1000], finite-difference Γ.
// The authors start with a smaller η for the first data epoch
// (samplers.Warmup); α stays that of the first η.
func BNNSettings(eta float64) Settings {
	return Settings{StepSize: samplers.Constant(eta), Alpha: 0.01 / eta, ClampQ: 5, DMax: 1000, Gamma: GammaFD}
}

// RNNSettings are the paper's settings for its Bayesian GRUs on
// polyphonic music (appendix D.4) at step size eta: α = 0.002/η, c = 100,
// f_Q clamped to ±5, D_f to [0, 1000], exact Γ (the paper tunes an offset
// β on the validation set).
func RNNSettings(eta float64) Settings {
	return Settings{StepSize: samplers.Constant(eta), Alpha: 0.002 / eta, C: 100, ClampQ: 5, DMax: 1000, Gamma: GammaExact}
}

// NNSGHMC is a trained NNSGHMC on a target: a samplers.Kernel. Its memory
// of the chains, for the finite-difference Γ, is in each State; it keeps
// scratch space and is not safe for concurrent use (see samplers.Kernel).
type NNSGHMC struct {
	k      *nnkernel.Kernel
	target samplers.Target
	tr     *Trained
	s      Settings
	once   *samplers.Once
	coef   float64 // D_train/D, the prior correction of the energy input
}

// New returns the trained sampler tr with settings s on target t.
func New(t samplers.Target, tr *Trained, s Settings) (*NNSGHMC, error) {
	if t == nil {
		return nil, fmt.Errorf("nnsghmc: nil target")
	}
	if tr == nil {
		return nil, fmt.Errorf("nnsghmc: no trained sampler (Load one, or make one with RandomTrained)")
	}
	if err := tr.Validate(); err != nil {
		return nil, err
	}
	if s.StepSize == nil {
		return nil, fmt.Errorf("nnsghmc: no step size (set Settings.StepSize, e.g. samplers.Constant(0.01))")
	}
	if s.Friction == "" {
		s.Friction = tr.Domain.Friction
	}
	if s.Friction == "" {
		s.Friction = FrictionExponential
	}
	cfg := engineConfig(tr, s, s.StepSize(1))
	k, err := nnkernel.New(t, cfg)
	if err != nil {
		return nil, err
	}
	n := &NNSGHMC{k: k, target: t, tr: tr, s: s, once: s.Warn.Once(), coef: 1}
	if tr.Domain.Dim > 0 {
		n.coef = float64(tr.Domain.Dim) / float64(t.Dim())
	}
	n.checkBeta()
	if f := tr.Domain.Friction; f != "" && f != s.Friction {
		n.once.Say("friction", fmt.Sprintf("nnsghmc: the sampler was trained with the %s friction step and runs with the %s one: its networks were not trained for it (set Settings.Friction, or sample's --friction-step, to %s to run it as trained)", f, s.Friction, f))
	}
	return n, nil
}

// engineConfig is the internal kernel's configuration of tr with settings
// s at step size eta.
func engineConfig(tr *Trained, s Settings, eta float64) nnkernel.Config {
	return nnkernel.Config{
		Settings: nnkernel.Settings{
			StepSize: eta, Alpha: s.Alpha, Beta: s.Beta, C: s.C, ClampQ: s.ClampQ, DMax: s.DMax, DScale: tr.DScale,
			EnergyScale: tr.Inputs.EnergyScale, GradScale: tr.Inputs.GradScale, MomentumScale: tr.Inputs.MomentumScale,
			TrainDim: tr.Domain.Dim, Gamma: s.Gamma, Friction: s.Friction, NoiseCorrection: s.NoiseCorrection, Thermostat: s.Thermostat,
			AdaptiveFriction: s.AdaptiveFriction,
		},
		Nets: nnkernel.Nets{Q: tr.Q, D: tr.D},
	}
}

// Settings returns the sampler's settings.
func (n *NNSGHMC) Settings() Settings { return n.s }

// Trained returns the trained sampler it runs.
func (n *NNSGHMC) Trained() *Trained { return n.tr }

// Init implements samplers.Kernel.
func (n *NNSGHMC) Init(theta0, p0 []float64) (*samplers.State, error) { return n.k.Init(theta0, p0) }

// Step implements samplers.Kernel.
func (n *NNSGHMC) Step(rng *rand.Rand, st *samplers.State) error {
	eta := n.s.StepSize(st.Steps + 1)
	if eta != n.k.Config().StepSize {
		if err := n.k.SetStepSize(eta); err != nil {
			return fmt.Errorf("nnsghmc: step %d: %w", st.Steps+1, err)
		}
	}
	n.checkStepSize(eta)
	step := st.Steps + 1
	n.k.Watch(n.watched("momentum", n.tr.Domain.Momentum), n.watched("gradient", n.tr.Domain.Gradient))
	err := n.k.Step(rng, st)
	mom, grad := n.k.Far()
	if mom.Coord >= 0 {
		n.outside("momentum", "momentum input m·p", mom.Value, *n.tr.Domain.Momentum, step, mom.Coord%n.target.Chains())
	}
	if err != nil {
		return err
	}
	n.checkEnergy(st)
	n.checkThermostat(st)
	if grad.Coord >= 0 {
		n.outside("gradient", "gradient input s_g·∇Ũ/N", grad.Value, *n.tr.Domain.Gradient, step, grad.Coord%n.target.Chains())
	}
	if x := n.k.Excess(); x.B > 0 {
		k := n.target.Chains()
		n.once.Say("noise", fmt.Sprintf("nnsghmc: the minibatch gradient noise B̂ = ½·η·Q_f²·V̂ reaches %.3g at step %d (coordinate %d of chain %d), above the diffusion D_f = %.3g there: "+
			"the learned friction is too small for this gradient noise and the chains run hotter than the target; lower the step size, enlarge the minibatch, or raise c (Settings.C)",
			x.B, st.Steps, x.Coord/k, x.Coord%k, x.D))
	}
	return nil
}

// ChecksState implements samplers.SelfChecking: Step returns a
// *samplers.DivergenceError for a state that diverged.
func (n *NNSGHMC) ChecksState() {}

// Warned implements samplers.WarnsOnce.
func (n *NNSGHMC) Warned() *samplers.Once { return n.once }

// checkThermostat warns once when the thermostat starts to cool a
// coordinate: the learned step is unstable there.
func (n *NNSGHMC) checkThermostat(st *samplers.State) {
	if n.s.Thermostat == 0 || n.once.Said("thermostat") {
		return
	}
	i, t := n.k.Cooled(st)
	if i < 0 {
		return
	}
	k := n.target.Chains()
	n.once.Say("thermostat", fmt.Sprintf("nnsghmc: the thermostat cools coordinate %d of chain %d from step %d on (the running mean of its p² is %.4g, above τ = %g): "+
		"the learned step was unstable there and shrinks; while it is cooled the chain's moves depend on its past, so check the posterior against another sampler (diag.KSD)",
		i/k, i%k, st.Steps+1, t, n.s.Thermostat))
}

// checkBeta warns once when the offset β, of the sign opposite to f_Q,
// brings Q_f = β + f_Q(u, 0) within half of f_Q of 0 somewhere on the
// energy range of training (energyGrid), naming the worst point.
func (n *NNSGHMC) checkBeta() {
	r, b := n.tr.Domain.Energy, n.s.Beta
	if b == 0 || r == nil {
		return
	}
	worst, wu, wf := 0.5, 0.0, 0.0
	out := []float64{0}
	for _, u := range energyGrid(*r) {
		n.tr.Q.Eval([]float64{u, 0}, out)
		f := out[0]
		if c := n.s.ClampQ; c > 0 {
			f = math.Max(-c, math.Min(c, f))
		}
		if f*b < 0 && math.Abs(b+f) < worst*math.Abs(f) {
			worst, wu, wf = math.Abs(b+f)/math.Abs(f), u, f
		}
	}
	if wf != 0 {
		n.once.Say("beta", fmt.Sprintf("nnsghmc: the offset β = %g has the sign opposite to f_Q and brings Q_f = β + f_Q towards 0 on the energy range of training (at u = %.3g, p = 0: f_Q = %.3g, Q_f = %.3g): "+
			"chains there barely move; a β of f_Q's sign speeds them (figures nets draws f_Q)", b, wu, wf, b+wf))
	}
}

// checkStepSize warns once when eta is more than twice as far from the
// step sizes of training.
func (n *NNSGHMC) checkStepSize(eta float64) {
	r := n.tr.Domain.StepSize
	if r.Min > 0 && (eta < r.Min/2 || eta > 2*r.Max) {
		n.once.Say("step size", fmt.Sprintf("nnsghmc: step size η = %.4g is far from the step sizes it was trained at, %.4g to %.4g: "+
			"the learned sampler extrapolates, and may sample a wrong posterior while it seems to mix; tune η (samplers.TuneStepSize) and compare with another sampler", eta, r.Min, r.Max))
	}
}

// checkEnergy warns once when the energy input of the evaluation st.Eval
// is far outside its training range. The kernel looks at the momentum and
// gradient inputs during the step (watched).
func (n *NNSGHMC) checkEnergy(st *samplers.State) {
	e, r := st.Eval, n.tr.Domain.Energy
	if r == nil {
		return
	}
	size := n.target.DataSize()
	for c, u := range e.U {
		x := n.tr.Inputs.EnergyScale * (u + (n.coef-1)*e.Prior[c]) / size
		if far(*r, x) {
			n.outside("energy", "energy input u", x, *r, st.Steps, c)
			break
		}
	}
}

// watched returns the bounds beyond which an input is far from its
// training range r (see near), or nil when it has no range or has been
// warned of.
func (n *NNSGHMC) watched(key string, r *Range) *nnkernel.Bounds {
	if r == nil || n.once.Said(key) {
		return nil
	}
	lo, hi := near(*r)
	return &nnkernel.Bounds{Lo: lo, Hi: hi}
}

// outside warns once that an input is far outside its training range;
// the inputs are not checked for it again.
func (n *NNSGHMC) outside(key, what string, x float64, r Range, step, chain int) {
	n.once.Say(key, fmt.Sprintf("nnsghmc: the networks' %s reaches %.4g at step %d (chain %d), far outside the range it had in training, [%.4g, %.4g]: "+
		"the learned sampler extrapolates there, and may sample a wrong posterior while it seems to mix; lower the step size, "+
		"check the posterior against another sampler (diag.KSD), or meta-train on a target like this one", what, x, step, chain, r.Min, r.Max))
}

// near returns the bounds beyond which an input is far from r: r widened
// by its width on each side (or, for a range of one point, by its
// magnitude).
func near(r Range) (lo, hi float64) {
	w := r.Max - r.Min
	if w <= 0 {
		w = math.Max(math.Abs(r.Max), 1e-12)
	}
	return r.Min - w, r.Max + w
}

// far reports whether x lies far from r (see near).
func far(r Range, x float64) bool {
	lo, hi := near(r)
	return x < lo || x > hi
}
