package catalog

import (
	"slices"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers"
)

// TestToySettingsAreTheDefaultNNConfig ties the Gaussian tasks' NNSGHMC
// settings (sampling and meta-training) to samplers.DefaultNNSettings, the
// paper's toy settings, so that neither drifts from the other.
func TestToySettingsAreTheDefaultNNConfig(t *testing.T) {
	def := samplers.DefaultNNSettings(0.01)
	for _, name := range []string{"gaussian10", "gaussian20", "gaussian2d"} {
		task, err := New(name, DefaultOptions)
		if err != nil {
			t.Fatal(err)
		}
		d := task.Defaults
		cfg := d.NN
		cfg.StepSize, cfg.Gamma = def.StepSize, d.Gamma
		if cfg != def || !slices.Equal(d.QHidden, []int{40, 40}) || !slices.Equal(d.DHidden, []int{40, 40}) {
			t.Errorf("%s: settings %+v, hidden %v and %v; DefaultNNSettings has %+v and DefaultNNConfig 40×40 networks", name, d.NN, d.QHidden, d.DHidden, def)
		}
		if tr := task.Training; tr != nil {
			cfg := tr.NN
			cfg.StepSize, cfg.Gamma = tr.StepSize, def.Gamma
			if cfg != def {
				t.Errorf("%s training: settings %+v (η %v); DefaultNNSettings has %+v", name, tr.NN, tr.StepSize, def)
			}
		}
	}
}
