package samplers

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSamplerFileRoundTripIsBitExact(t *testing.T) {
	cfg := NNConfig{NNSettings: NNSettings{StepSize: math.Sqrt(0.007 / 60000), Alpha: 0.01 / math.Sqrt(0.007/60000), Beta: -1.5, C: 100,
		ClampQ: 5, DMax: 1000, DScale: 50, EnergyScale: -1, GradScale: 70, MomentumScale: 1, TrainDim: 15910, Gamma: GammaFD}}
	cfg.RandomNets([]int{10}, []int{10}, rand.New(rand.NewPCG(1, 2)))
	var buf bytes.Buffer
	if err := NewSamplerFile(cfg, map[string]any{"task": "mnist-relu"}).Encode(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sampler.json")
	os.WriteFile(path, buf.Bytes(), 0o644)
	f, err := ReadSamplerFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Config
	if !reflect.DeepEqual(got, cfg) { // DeepEqual compares floats exactly
		t.Errorf("round trip changed the configuration:\n got %+v\nwant %+v", got, cfg)
	}
	for i, p := range append(cfg.Q.Params(), cfg.D.Params()...) {
		q := append(got.Q.Params(), got.D.Params()...)[i]
		for j := range p {
			if math.Float64bits(p[j]) != math.Float64bits(q[j]) {
				t.Fatalf("weight %d[%d]: %v became %v", i, j, p[j], q[j])
			}
		}
	}
	if f.Training["task"] != "mnist-relu" {
		t.Errorf("training info: %v", f.Training)
	}
}

func TestReadSamplerFileRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"not json":      "{",
		"wrong format":  `{"format":"other","version":1}`,
		"wrong version": `{"format":"metasgmcmc/nnsghmc","version":99}`,
		"no networks":   `{"format":"metasgmcmc/nnsghmc","version":1,"config":{"step_size":0.1}}`,
	}
	for name, body := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		os.WriteFile(path, []byte(body), 0o644)
		if _, err := ReadSamplerFile(path); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := ReadSamplerFile(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("missing file: %v", err)
	}
}
