package main

import (
	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// nnFlags are NNSGHMC's settings as flags. A flag that is given overrides
// the task's default or the trained sampler's value.
type nnFlags struct {
	alpha, beta, c, clampQ, dMax, dScale  float64
	energyScale, gradScale, momentumScale float64
	trainDim                              int
	qHidden, dHidden                      []int
}

// register adds the flags to fs.
func (n *nnFlags) register(fs *pflag.FlagSet) {
	fs.Float64Var(&n.alpha, "alpha", 0, "NNSGHMC: weight α of f_Q² in D_f")
	fs.Float64Var(&n.beta, "beta", 0, "NNSGHMC: offset β added to Q_f")
	fs.Float64Var(&n.c, "c", 0, "NNSGHMC: constant c added to D_f")
	fs.Float64Var(&n.clampQ, "clamp-q", 0, "NNSGHMC: clamp f_Q to ±clamp-q (0: none)")
	fs.Float64Var(&n.dMax, "d-max", 0, "NNSGHMC: clamp D_f to [0, d-max] (0: none)")
	fs.Float64Var(&n.dScale, "d-scale", 0, "NNSGHMC: D_f uses d-scale·|f_D|")
	fs.Float64Var(&n.energyScale, "energy-scale", 0, "NNSGHMC: energy input u = energy-scale·Ũ/N (the authors use −1 on data tasks)")
	fs.Float64Var(&n.gradScale, "grad-scale", 0, "NNSGHMC: gradient input of f_D = grad-scale·∇Ũ/N")
	fs.Float64Var(&n.momentumScale, "momentum-scale", 0, "NNSGHMC: momentum input = momentum-scale·p")
	fs.IntVar(&n.trainDim, "train-dim", 0, "NNSGHMC: dimension D_train of the training task, for the D_train/D_test prior correction (0: none)")
	fs.IntSliceVar(&n.qHidden, "q-hidden", nil, "NNSGHMC: hidden widths of random f_Q (default: the task's)")
	fs.IntSliceVar(&n.dHidden, "d-hidden", nil, "NNSGHMC: hidden widths of random f_D (default: the task's)")
}

// apply copies the flags that were given into cfg.
func (n *nnFlags) apply(fs *pflag.FlagSet, cfg *samplers.NNConfig) error {
	for name, set := range map[string]func(){
		"alpha":          func() { cfg.Alpha = n.alpha },
		"beta":           func() { cfg.Beta = n.beta },
		"c":              func() { cfg.C = n.c },
		"clamp-q":        func() { cfg.ClampQ = n.clampQ },
		"d-max":          func() { cfg.DMax = n.dMax },
		"d-scale":        func() { cfg.DScale = n.dScale },
		"energy-scale":   func() { cfg.EnergyScale = n.energyScale },
		"grad-scale":     func() { cfg.GradScale = n.gradScale },
		"momentum-scale": func() { cfg.MomentumScale = n.momentumScale },
		"train-dim":      func() { cfg.TrainDim = n.trainDim },
	} {
		if fs.Changed(name) {
			set()
		}
	}
	if cfg.Q != nil && (fs.Changed("q-hidden") || fs.Changed("d-hidden")) && fs.Lookup("meta").Value.String() != "" {
		return cli.Usagef("--q-hidden and --d-hidden shape random networks; a trained sampler (--meta) brings its own")
	}
	return nil
}
