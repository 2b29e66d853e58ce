package gaussian

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// TestEnergyHasTheAuthorsConstant checks U(μ) = ½·log(2π·det Σ), the
// authors' normalisation, which the networks see as their energy input.
func TestEnergyHasTheAuthorsConstant(t *testing.T) {
	cov := mat.NewSymDense(3, []float64{2, 0, 0, 0, 0.5, 0, 0, 0, 3})
	g, err := Toy(cov)
	if err != nil {
		t.Fatal(err)
	}
	mean := []float64{3, 3, 3}
	if got, want := g.Energy(mean), 0.5*math.Log(2*math.Pi*2*0.5*3); math.Abs(got-want) > 1e-12 {
		t.Errorf("U(μ) = %v, want ½·log(2π·det Σ) = %v", got, want)
	}
	// one unit of Mahalanobis distance adds ½
	x := []float64{3 + math.Sqrt(2), 3, 3}
	if got, want := g.Energy(x)-g.Energy(mean), 0.5; math.Abs(got-want) > 1e-12 {
		t.Errorf("U(μ + √2·e_1) − U(μ) = %v, want %v", got, want)
	}
}

func TestReadCov(t *testing.T) {
	cases := []struct {
		name, text string
		want       []float64 // row-major; nil: an error naming errText
		errText    string
	}{
		{name: "numpy", text: "2.000000000000000000e+00 5.000000000000000000e-01\n5.000000000000000000e-01 1.000000000000000000e+00\n",
			want: []float64{2, 0.5, 0.5, 1}},
		{name: "blank lines and tabs", text: "\n1\t0\n\n0\t4\n\n", want: []float64{1, 0, 0, 4}},
		{name: "rounding asymmetry", text: "1 0.3\n0.3000000001 1\n", want: []float64{1, 0.30000000005, 0.30000000005, 1}},
		{name: "empty", text: "\n \n", errText: "empty"},
		{name: "not square", text: "1 0 0\n0 1 0\n", errText: "not square"},
		{name: "ragged", text: "1 0\n0\n", errText: "not square"},
		{name: "not a number", text: "1 x\n0 1\n", errText: "not a finite number"},
		{name: "nan", text: "1 NaN\nNaN 1\n", errText: "not a finite number"},
		{name: "asymmetric", text: "1 0.5\n0.2 1\n", errText: "not symmetric"},
		{name: "not positive definite", text: "1 2\n2 1\n", errText: "positive definite"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			cov, err := ReadCov(path)
			if c.want == nil {
				if err == nil || !strings.Contains(err.Error(), c.errText) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error %v, want one naming %s and %q", err, path, c.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := cov.SymmetricDim()
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					if got := cov.At(i, j); math.Abs(got-c.want[i*d+j]) > 1e-15 {
						t.Errorf("Σ[%d,%d] = %v, want %v", i, j, got, c.want[i*d+j])
					}
				}
			}
		})
	}
	if _, err := ReadCov(filepath.Join(dir, "absent")); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("missing file: error %v", err)
	}
}

// TestReadsTheAuthorsCovariances reads the authors' toy covariances from the
// data directory: a 10-D training one and four 20-D test ones.
func TestReadsTheAuthorsCovariances(t *testing.T) {
	dir := filepath.Join(datatest.Need(t, "gaussian"), "gaussian")
	for name, d := range map[string]int{
		"Cov_train_10d": 10, "Cov_rand_1_scale_0.6": 20, "Cov_rand_2_scale_0.6": 20,
		"Cov_rand_3_scale_0.5": 20, "Cov_rand_4_scale_0.5": 20,
	} {
		cov, err := ReadCov(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if cov.SymmetricDim() != d {
			t.Errorf("%s: dimension %d, want %d", name, cov.SymmetricDim(), d)
		}
	}
}
