package nnsghmc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
)

// FileFormat and FileVersion identify trained-sampler files.
const (
	FileFormat  = "metasgmcmc/nnsghmc"
	FileVersion = 3
)

// Trained is a meta-trained NNSGHMC as a trained-sampler file holds it:
// the networks f_Q and f_D, the scalings of their inputs and of f_D's
// output that they were trained with, and the domain they were trained on.
// How it is run (the step size, the form of Q_f and D_f, Γ) is supplied at
// run time, by Settings.
//
// The networks act on each coordinate i of each chain with inputs
//
//	f_Q(u, m·p_i)   and   f_D(u, m·p_i, s_g·∂_iŨ/N),
//
// where u = s_u·(Ũ(θ) + (D_train/D − 1)·U_prior(θ))/N is the
// pre-processed energy of the chain (appendix C of the paper, with the
// prior term corrected for the change of dimension), N the data size, m
// the momentum scale, s_g the gradient scale and s_u the energy scale; D_f
// takes s_D·|f_D|.
type Trained struct {
	Q *coordnet.Weights `json:"f_q"` // f_Q: 2 inputs
	D *coordnet.Weights `json:"f_d"` // f_D: 3 inputs
	// Inputs are the scalings of the networks' inputs.
	Inputs Inputs `json:"inputs"`
	// DScale is s_D, the scale of |f_D| in D_f.
	DScale float64 `json:"d_scale"`
	// Domain is what the networks were trained on.
	Domain Domain `json:"domain"`
	// Training says how it was trained (task, epochs, seed, …; for
	// people, not read).
	Training map[string]any `json:"training,omitempty"`
}

// Inputs are the scalings of the networks' inputs (see Trained).
type Inputs struct {
	EnergyScale   float64 `json:"energy_scale"`   // s_u (the authors use −1 on data tasks: u = log-joint/N)
	GradScale     float64 `json:"grad_scale"`     // s_g
	MomentumScale float64 `json:"momentum_scale"` // m
}

// Domain is what a trained sampler's networks were trained on: the
// target's dimension and data size, the step sizes, and the ranges of the
// networks' inputs during training. A run far outside it is extrapolation
// (NNSGHMC warns, once).
type Domain struct {
	// Dim is D_train, the dimension of the training target; 0 when not
	// recorded (then the prior correction is 1).
	Dim int `json:"dim"`
	// DataSize is the training target's N (1 without data); 0 when not
	// recorded.
	DataSize float64 `json:"data_size,omitempty"`
	// StepSize is the smallest and the largest η of training.
	StepSize Range `json:"step_size"`
	// Energy, Momentum and Gradient are the ranges of the inputs u, m·p
	// and s_g·∇Ũ/N the networks saw in training; nil when not recorded
	// (files written before they were).
	Energy   *Range `json:"energy,omitempty"`
	Momentum *Range `json:"momentum,omitempty"`
	Gradient *Range `json:"gradient,omitempty"`
	// Friction is the friction step the networks were trained with: a
	// sampler runs with it unless Settings.Friction says otherwise. Files
	// of versions 1 and 2 were all trained with FrictionExplicit; empty
	// for networks never trained (RandomTrained).
	Friction Friction `json:"friction,omitempty"`
}

// Range is a closed interval [Min, Max].
type Range struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// Add widens r to include x.
func (r *Range) Add(x float64) {
	r.Min, r.Max = math.Min(r.Min, x), math.Max(r.Max, x)
}

// Validate reports the first thing that makes t unusable.
func (t *Trained) Validate() error {
	switch {
	case t.Q == nil || t.D == nil:
		return errors.New("nnsghmc: a trained sampler needs both networks f_Q and f_D")
	case t.Q.Inputs != 2 || t.D.Inputs != 3:
		return fmt.Errorf("nnsghmc: f_Q takes 2 inputs and f_D 3, got %d and %d", t.Q.Inputs, t.D.Inputs)
	case !(t.DScale >= 0) || math.IsInf(t.DScale, 0):
		return fmt.Errorf("nnsghmc: d_scale must be a non-negative number, got %v", t.DScale)
	case t.Domain.Dim < 0:
		return fmt.Errorf("nnsghmc: domain.dim must be non-negative, got %d", t.Domain.Dim)
	}
	if _, err := ParseFriction(string(t.Domain.Friction)); err != nil && t.Domain.Friction != "" {
		return fmt.Errorf("nnsghmc: domain.friction: %w", err)
	}
	if err := t.Q.Validate(); err != nil {
		return fmt.Errorf("nnsghmc: f_Q: %w", err)
	}
	if err := t.D.Validate(); err != nil {
		return fmt.Errorf("nnsghmc: f_D: %w", err)
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"energy_scale", t.Inputs.EnergyScale}, {"grad_scale", t.Inputs.GradScale}, {"momentum_scale", t.Inputs.MomentumScale}} {
		if math.IsNaN(c.v) || math.IsInf(c.v, 0) {
			return fmt.Errorf("nnsghmc: inputs.%s must be finite, got %v", c.name, c.v)
		}
	}
	return nil
}

// energyPoints is how many evenly spaced energies of the training range
// the checks of f_Q over it read (energyGrid).
const energyPoints = 61

// energyGrid returns energyPoints evenly spaced points of r, both ends
// included.
func energyGrid(r Range) []float64 {
	us := make([]float64, energyPoints)
	for i := range us {
		us[i] = r.Min + (r.Max-r.Min)*float64(i)/(energyPoints-1)
	}
	return us
}

// QSign is the sign of f_Q(u, 0) where the chains run: +1 or −1, the
// sign of its mean over 61 points of the energy range of training
// (Domain.Energy), or of f_Q(0, 0) where that range is not recorded; +1
// for a mean of 0. An offset β of this sign enlarges |Q_f| = |β + f_Q|
// there; one of the other sign first brings Q_f towards 0.
func (t *Trained) QSign() float64 {
	us := []float64{0}
	if r := t.Domain.Energy; r != nil {
		us = energyGrid(*r)
	}
	sum, out := 0.0, []float64{0}
	for _, u := range us {
		t.Q.Eval([]float64{u, 0}, out)
		sum += out[0]
	}
	if sum < 0 {
		return -1
	}
	return 1
}

// file is a trained-sampler file of version 3.
type file struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	*Trained
}

// Encode writes t as a trained-sampler file: indented JSON, floats in
// their shortest exact form, so a file read back gives bit-identical
// weights.
func (t *Trained) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(file{Format: FileFormat, Version: FileVersion, Trained: t})
}

// Load reads and validates a trained-sampler file. A file of version 1,
// which held run settings beside the networks, gives its networks, input
// scalings, d_scale, training dimension and step size; its run settings
// are not read (Settings supplies them) and its domain has no input
// ranges. Files of versions 1 and 2 record no friction step: they were
// trained with the explicit one, and Load says so in Domain.Friction.
func Load(path string) (*Trained, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read sampler file: %w", err)
	}
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("sampler file %s is not valid JSON: %w", path, err)
	}
	if head.Format != FileFormat {
		return nil, fmt.Errorf("%s is not a trained-sampler file (format %q, want %q)", path, head.Format, FileFormat)
	}
	var t *Trained
	switch head.Version {
	case 1:
		if t, err = decodeV1(b); err == nil {
			t.Domain.Friction = FrictionExplicit
		}
	case 2, FileVersion:
		var f file
		f.Trained = new(Trained)
		err = json.Unmarshal(b, &f)
		t = f.Trained
		if head.Version == 2 {
			t.Domain.Friction = FrictionExplicit
		}
	default:
		return nil, fmt.Errorf("sampler file %s has version %d; this program reads versions 1 to %d", path, head.Version, FileVersion)
	}
	if err != nil {
		return nil, fmt.Errorf("sampler file %s is not valid: %w", path, err)
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("sampler file %s: %w", path, err)
	}
	return t, nil
}

// decodeV1 reads a file of version 1: {"config": {settings and networks},
// "training": …}.
func decodeV1(b []byte) (*Trained, error) {
	var f struct {
		Config struct {
			StepSize      float64           `json:"step_size"`
			DScale        float64           `json:"d_scale"`
			EnergyScale   float64           `json:"energy_scale"`
			GradScale     float64           `json:"grad_scale"`
			MomentumScale float64           `json:"momentum_scale"`
			TrainDim      int               `json:"train_dim"`
			Q             *coordnet.Weights `json:"f_q"`
			D             *coordnet.Weights `json:"f_d"`
		} `json:"config"`
		Training map[string]any `json:"training"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	c := f.Config
	t := &Trained{
		Q: c.Q, D: c.D,
		Inputs:   Inputs{EnergyScale: c.EnergyScale, GradScale: c.GradScale, MomentumScale: c.MomentumScale},
		DScale:   c.DScale,
		Domain:   Domain{Dim: c.TrainDim, StepSize: Range{Min: c.StepSize, Max: c.StepSize}},
		Training: f.Training,
	}
	if eta, ok := f.Training["continue_step_size"].(float64); ok && eta > 0 {
		t.Domain.StepSize.Add(eta)
	}
	return t, nil
}

// RandomTrained returns untrained networks of the given hidden widths
// (ReLU) drawn from rng, with input scalings in and f_D's scale dScale and
// no recorded domain: a valid sampler, since Γ keeps the target stationary
// whatever the networks are, but not a meta-learned one.
func RandomTrained(qHidden, dHidden []int, in Inputs, dScale float64, rng *rand.Rand) *Trained {
	return &Trained{
		Q:      coordnet.New(2, qHidden, coordnet.ReLU, rng),
		D:      coordnet.New(3, dHidden, coordnet.ReLU, rng),
		Inputs: in, DScale: dScale,
	}
}
