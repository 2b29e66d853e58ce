package samplers

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// SamplerFileFormat and SamplerFileVersion identify trained-sampler files.
const (
	SamplerFileFormat  = "metasgmcmc/nnsghmc"
	SamplerFileVersion = 1
)

// SamplerFile is a trained NNSGHMC sampler as saved to disk (JSON): its
// networks and every setting needed to run the same sampler again, plus how
// it was trained.
type SamplerFile struct {
	Format   string         `json:"format"`
	Version  int            `json:"version"`
	Config   NNConfig       `json:"config"`
	Training map[string]any `json:"training,omitempty"` // task, epochs, seed, … (informative)
}

// NewSamplerFile wraps cfg with the current format and version.
func NewSamplerFile(cfg NNConfig, training map[string]any) *SamplerFile {
	return &SamplerFile{Format: SamplerFileFormat, Version: SamplerFileVersion, Config: cfg, Training: training}
}

// Encode writes f as indented JSON. Floats are written in their shortest
// exact form, so a file read back gives bit-identical weights.
func (f *SamplerFile) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(f)
}

// ReadSamplerFile reads and validates a trained-sampler file.
func ReadSamplerFile(path string) (*SamplerFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read sampler file: %w", err)
	}
	var f SamplerFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("sampler file %s is not valid: %w", path, err)
	}
	if f.Format != SamplerFileFormat {
		return nil, fmt.Errorf("%s is not a trained-sampler file (format %q, want %q)", path, f.Format, SamplerFileFormat)
	}
	if f.Version != SamplerFileVersion {
		return nil, fmt.Errorf("sampler file %s has version %d; this program reads version %d", path, f.Version, SamplerFileVersion)
	}
	if f.Config.Gamma == "" {
		f.Config.Gamma = GammaExact
	}
	if err := f.Config.Validate(); err != nil {
		return nil, fmt.Errorf("sampler file %s: %w", path, err)
	}
	return &f, nil
}
