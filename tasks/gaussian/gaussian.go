// Package gaussian provides Gaussian targets: the paper's toy training target
// (10-D, diagonal covariance) and test target (20-D, correlated covariance),
// and any Gaussian given its mean and covariance.
package gaussian

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// Gaussian is the energy of N(μ, Σ) with the authors' normalisation
// (Toy Example/Util.py, U_Gaussian):
//
//	U(θ) = ½(θ−μ)ᵀΣ⁻¹(θ−μ) + ½·log(2π·det Σ),
//
// which is −log N(θ; μ, Σ) less ½(d−1)·log 2π. The constant does not change
// the distribution, but NNSGHMC's networks take the raw energy as an input
// on the toy: with this constant they see the values the authors' samplers
// were trained on (about 2 at equilibrium on the 10-D training target, 18 to
// 22 on the 20-D test targets, where −log N gives 10 and 35 to 39).
type Gaussian struct {
	mean    []float64
	cov     *mat.SymDense
	prec    *mat.SymDense
	logNorm float64
}

// New returns the Gaussian N(mean, cov); cov must be symmetric positive
// definite.
func New(mean []float64, cov mat.Symmetric) (*Gaussian, error) {
	d := len(mean)
	if d == 0 || cov.SymmetricDim() != d {
		return nil, fmt.Errorf("gaussian: mean of length %d but covariance of size %d", d, cov.SymmetricDim())
	}
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		return nil, fmt.Errorf("gaussian: the covariance is not positive definite")
	}
	prec := mat.NewSymDense(d, nil)
	if err := ch.InverseTo(prec); err != nil {
		return nil, fmt.Errorf("gaussian: inverting the covariance: %w", err)
	}
	c := mat.NewSymDense(d, nil)
	c.CopySym(cov)
	return &Gaussian{
		mean:    append([]float64(nil), mean...),
		cov:     c,
		prec:    prec,
		logNorm: 0.5 * (math.Log(2*math.Pi) + ch.LogDet()),
	}, nil
}

// Train10 is the paper's training target: 10-D, mean 3, diagonal covariance
// with variances drawn from U[0, 1) by a PCG generator seeded with seed.
func Train10(seed uint64) *Gaussian {
	rng := rand.New(rand.NewPCG(seed, 0x7261696e3130)) // "rain10"
	const d = 10
	cov := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		v := rng.Float64()
		for v == 0 {
			v = rng.Float64()
		}
		cov.SetSym(i, i, v)
	}
	return must(New(constant(d, 3), cov))
}

// NewTest20 returns the paper's test target: 20-D, mean 3, Σ = L·Lᵀ with
// L = scale·N(0, 1)^{20×20} drawn by a PCG generator seeded with seed (the
// authors used scale 0.6 and 0.5). It returns an error unless scale is
// positive and finite and Σ = L·Lᵀ is positive definite in float64
// (scales below about 1e-150 underflow, above about 1e150 overflow).
func NewTest20(seed uint64, scale float64) (*Gaussian, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return nil, fmt.Errorf("gaussian: the 20-D test target's scale must be a positive number, got %v", scale)
	}
	rng := rand.New(rand.NewPCG(seed, 0x7465737432)) // "test2"
	const d = 20
	l := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			l.Set(i, j, scale*rng.NormFloat64())
		}
	}
	cov := mat.NewSymDense(d, nil)
	cov.SymOuterK(1, l)
	g, err := New(constant(d, 3), cov)
	if err != nil {
		return nil, fmt.Errorf("gaussian: the 20-D test target of scale %v has no valid covariance in float64 (%v); want a scale between about 1e-150 and 1e150", scale, err)
	}
	return g, nil
}

func constant(d int, v float64) []float64 {
	x := make([]float64, d)
	for i := range x {
		x[i] = v
	}
	return x
}

func must(g *Gaussian, err error) *Gaussian {
	if err != nil {
		panic(err)
	}
	return g
}

// Dim implements tasks.Energy.
func (g *Gaussian) Dim() int { return len(g.mean) }

// Mean returns a copy of μ.
func (g *Gaussian) Mean() []float64 { return append([]float64(nil), g.mean...) }

// Cov returns a copy of Σ.
func (g *Gaussian) Cov() *mat.SymDense {
	c := mat.NewSymDense(g.Dim(), nil)
	c.CopySym(g.cov)
	return c
}

// Build implements tasks.Energy: U_k = ½ Σ_i r_ik (Σ⁻¹r)_ik + ½log(2π det Σ)
// with r = θ − μ for the K columns of theta.
func (g *Gaussian) Build(gr *G.ExprGraph, theta *G.Node) (*tasks.Model, error) {
	d := g.Dim()
	s := theta.Shape()
	if len(s) != 2 || s[0] != d {
		return nil, fmt.Errorf("gaussian: positions of shape %v, want (%d, K)", s, d)
	}
	dt := theta.Dtype()
	mu := graph.Constant(gr, dt, "gaussian.mean", g.mean, d, 1)
	pd := make([]float64, 0, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			pd = append(pd, g.prec.At(i, j))
		}
	}
	prec := graph.Constant(gr, dt, "gaussian.precision", pd, d, d)
	r, err := G.BroadcastSub(theta, mu, nil, []byte{1})
	if err != nil {
		return nil, err
	}
	pr, err := G.Mul(prec, r)
	if err != nil {
		return nil, err
	}
	q, err := G.HadamardProd(r, pr)
	if err != nil {
		return nil, err
	}
	qs, err := G.Sum(q, 0)
	if err != nil {
		return nil, err
	}
	half, err := G.Mul(qs, graph.Scalar(gr, dt, 0.5))
	if err != nil {
		return nil, err
	}
	u, err := G.Add(half, graph.Scalar(gr, dt, g.logNorm))
	if err != nil {
		return nil, err
	}
	return &tasks.Model{Lik: u, DataSize: 1}, nil
}

// Energy returns U(x) computed directly, for tests and checks.
func (g *Gaussian) Energy(x []float64) float64 {
	d := g.Dim()
	r := mat.NewVecDense(d, nil)
	for i := range r.RawVector().Data {
		r.SetVec(i, x[i]-g.mean[i])
	}
	return 0.5*mat.Inner(r, g.prec, r) + g.logNorm
}

// Score writes ∇ log N(x; μ, Σ) = −Σ⁻¹(x − μ) into out (length D): the
// exact score, for a kernel Stein discrepancy (diag.KSD) of draws.
func (g *Gaussian) Score(x, out []float64) {
	d := g.Dim()
	for i := 0; i < d; i++ {
		s := 0.0
		for j := 0; j < d; j++ {
			s -= g.prec.At(i, j) * (x[j] - g.mean[j])
		}
		out[i] = s
	}
}

// Toy returns the toy's Gaussian with covariance cov: mean 3 in every
// coordinate, as all of the paper's toy targets.
func Toy(cov mat.Symmetric) (*Gaussian, error) {
	return New(constant(cov.SymmetricDim(), 3), cov)
}

// ReadCov reads a covariance matrix from a plain-text file with one row per
// line and the numbers separated by white space (numpy.savetxt's format, in
// which the authors saved their toy covariances). The matrix must be square,
// symmetric up to rounding (|a_ij − a_ji| ≤ 1e-6·max|a|; it is made exactly
// symmetric by averaging) and positive definite.
func ReadCov(path string) (*mat.SymDense, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the covariance: %w", err)
	}
	var rows [][]float64
	for n, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		row := make([]float64, len(fields))
		for j, f := range fields {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("covariance %s, line %d: %q is not a finite number", path, n+1, f)
			}
			row[j] = v
		}
		rows = append(rows, row)
	}
	d := len(rows)
	if d == 0 {
		return nil, fmt.Errorf("covariance %s is empty (want one matrix row per line)", path)
	}
	scale := 0.0
	for i, row := range rows {
		if len(row) != d {
			return nil, fmt.Errorf("covariance %s is not square: row %d has %d numbers for %d rows", path, i+1, len(row), d)
		}
		for _, v := range row {
			scale = math.Max(scale, math.Abs(v))
		}
	}
	cov := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			if math.Abs(rows[i][j]-rows[j][i]) > 1e-6*scale {
				return nil, fmt.Errorf("covariance %s is not symmetric: entries (%d, %d) and (%d, %d) are %v and %v", path, i+1, j+1, j+1, i+1, rows[i][j], rows[j][i])
			}
			cov.SetSym(i, j, (rows[i][j]+rows[j][i])/2)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		return nil, fmt.Errorf("covariance %s is not positive definite", path)
	}
	return cov, nil
}
