package catalog

import (
	"slices"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// TestToySettingsAreThePresets ties the Gaussian tasks' NNSGHMC settings
// to nnsghmc.ToySettings, the paper's toy settings, for sampling, and to
// nnkernel.DefaultSettings for meta-training, so that neither drifts from
// the other.
func TestToySettingsAreThePresets(t *testing.T) {
	toy := nnsghmc.ToySettings()
	def := nnkernel.DefaultSettings(0.01)
	for _, name := range []string{"gaussian10", "gaussian20", "gaussian2d"} {
		task, err := New(name, DefaultOptions)
		if err != nil {
			t.Fatal(err)
		}
		d := task.Defaults
		s := d.NN
		if s.StepSize != nil || s.Alpha != toy.Alpha || s.Beta != toy.Beta || s.C != toy.C || s.ClampQ != toy.ClampQ || s.DMax != toy.DMax || s.Gamma != toy.Gamma ||
			d.NNDScale != 1 || d.NNInputs != (nnsghmc.Inputs{EnergyScale: 1, GradScale: 1, MomentumScale: 1}) ||
			!slices.Equal(d.QHidden, []int{40, 40}) || !slices.Equal(d.DHidden, []int{40, 40}) {
			t.Errorf("%s: settings %+v, inputs %+v, d_scale %v, hidden %v and %v; ToySettings has %+v and 40×40 networks", name, s, d.NNInputs, d.NNDScale, d.QHidden, d.DHidden, toy)
		}
		if tr := task.Training; tr != nil {
			cfg := tr.NN
			cfg.StepSize, cfg.Gamma = tr.StepSize, def.Gamma
			if cfg != def {
				t.Errorf("%s training: settings %+v (η %v); nnkernel.DefaultSettings has %+v", name, tr.NN, tr.StepSize, def)
			}
		}
	}
}
