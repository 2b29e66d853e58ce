package main

import (
	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// nnFlags are NNSGHMC's run settings as flags. A flag that is given
// overrides the task's default. The networks' input scalings are the
// trained sampler's (--meta), or the task's for random networks.
type nnFlags struct {
	alpha, beta, c, clampQ, dMax float64
	thermostat, adaptiveFriction float64
	qHidden, dHidden             []int
	friction                     string
}

// register adds the flags to fs.
func (n *nnFlags) register(fs *pflag.FlagSet) {
	fs.Float64Var(&n.alpha, "alpha", 0, "NNSGHMC: weight α of f_Q² in D_f (default: --alpha-coef/η)")
	fs.Float64Var(&n.beta, "beta", 0, "NNSGHMC: offset β added to Q_f; it speeds the chains where it has f_Q's sign (figures nets shows f_Q), and one of the other sign first brings Q_f towards 0 (default: the task's size, 1.5 on nott-gru, muse-gru and jsb-gru, 0 elsewhere, with the sign of the sampler's f_Q where its chains ran in training)")
	fs.Float64Var(&n.c, "c", 0, "NNSGHMC: constant c added to D_f (default: the task's)")
	fs.Float64Var(&n.clampQ, "clamp-q", 0, "NNSGHMC: clamp f_Q to ±clamp-q, 0 for none (default: the task's)")
	fs.Float64Var(&n.dMax, "d-max", 0, "NNSGHMC: clamp D_f to [0, d-max], 0 for none (default: the task's)")
	fs.Float64Var(&n.thermostat, "thermostat", 0, "NNSGHMC: where a coordinate's running mean of p² over about 50 steps exceeds this temperature (1 at equilibrium; 3 is what the NT set-up validates with), multiply its Q_f by temperature/mean, so that a learned step that is unstable there shrinks instead of throwing the chain out; 0: off, the paper's sampler (default: the task's)")
	fs.Float64Var(&n.adaptiveFriction, "adaptive-friction", 0, "NNSGHMC: rate κ of a per-coordinate Nosé–Hoover friction: the momentum damped by c = e^{−η·D_f·max(0, 1 + ζ)}, the injected noise D_f's, and ζ ← ζ + κ·(p² − 2/(1 + c)) after each step, so that a coordinate that minibatch noise heats gets the friction that holds it at temperature 1 (in about 1/κ steps; 0.001 is a start; needs the exponential --friction-step; with shuffled minibatches, whose noise cancels over a pass, it can cool the positions below the posterior: figures lastlayer reads an MLP's last layer in its positions); 0: off, the paper's sampler (the default)")
	fs.StringVar(&n.friction, "friction-step", "", "NNSGHMC's friction step: exponential (e^{−η·D_f}·p, stable at any η) or explicit (the paper's (1 − η·D_f)·p, which throws chains out where η·D_f > 2) (default: the one the --meta sampler was trained with, explicit for files before version 3; exponential for random networks)")
	fs.IntSliceVar(&n.qHidden, "q-hidden", nil, "NNSGHMC: hidden widths of random f_Q (default: the task's)")
	fs.IntSliceVar(&n.dHidden, "d-hidden", nil, "NNSGHMC: hidden widths of random f_D (default: the task's)")
}

// apply copies the flags that were given into s.
func (n *nnFlags) apply(fs *pflag.FlagSet, s *nnsghmc.Settings) error {
	if fs.Changed("friction-step") {
		f, err := nnsghmc.ParseFriction(n.friction)
		if err != nil {
			return cli.Usagef("--friction-step: %v", err)
		}
		s.Friction = f
	}
	for name, set := range map[string]func(){
		"alpha":             func() { s.Alpha = n.alpha },
		"beta":              func() { s.Beta = n.beta },
		"c":                 func() { s.C = n.c },
		"clamp-q":           func() { s.ClampQ = n.clampQ },
		"d-max":             func() { s.DMax = n.dMax },
		"thermostat":        func() { s.Thermostat = n.thermostat },
		"adaptive-friction": func() { s.AdaptiveFriction = n.adaptiveFriction },
	} {
		if fs.Changed(name) {
			set()
		}
	}
	return nil
}
