package diag

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// closeRel reports whether got and want agree to within relative tolerance
// tol (absolute tolerance tol when |want| < 1).
func closeRel(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestKLGaussian(t *testing.T) {
	// Σ = [[2,1],[1,2]]: det Σ = 3, Σ⁻¹ = (1/3)[[2,−1],[−1,2]].
	sigma := mat.NewSymDense(2, []float64{2, 1, 1, 2})
	eye := mat.NewSymDense(2, []float64{1, 0, 0, 1})
	for _, tc := range []struct {
		name          string
		meanHat, mean []float64
		covHat, cov   mat.Symmetric
		want          float64
	}{
		{
			// KL(N((1,1), I) ‖ N(0, Σ)), v = μ − μ̂ = (−1,−1):
			// log(det Σ/det Σ̂) = log 3; tr(Σ⁻¹ I) = (2+2)/3 = 4/3;
			// vᵀΣ⁻¹v = (1/3)(2 − 1 − 1 + 2) = 2/3.
			// KL = ½[log 3 − 2 + 4/3 + 2/3] = ½ log 3.
			name: "identity to correlated", meanHat: []float64{1, 1}, covHat: eye,
			mean: []float64{0, 0}, cov: sigma, want: 0.5 * math.Log(3),
		},
		{
			// KL(N(0, Σ) ‖ N((1,1), I)): log(1/3) − 2 + tr Σ (= 4) + |v|² (= 2),
			// KL = ½[4 − log 3] = 2 − ½ log 3.
			name: "correlated to identity", meanHat: []float64{0, 0}, covHat: sigma,
			mean: []float64{1, 1}, cov: eye, want: 2 - 0.5*math.Log(3),
		},
		{
			// Identical Gaussians: every term cancels.
			name: "identical", meanHat: []float64{3, -1}, covHat: sigma,
			mean: []float64{3, -1}, cov: sigma, want: 0,
		},
		{
			// 1-D: KL(N(0,1) ‖ N(1,4)) = ½[log 4 − 1 + 1/4 + 1/4] = log 2 − ¼.
			name: "1-D", meanHat: []float64{0}, covHat: mat.NewSymDense(1, []float64{1}),
			mean: []float64{1}, cov: mat.NewSymDense(1, []float64{4}), want: math.Ln2 - 0.25,
		},
	} {
		got, err := KLGaussian(tc.meanHat, tc.covHat, tc.mean, tc.cov)
		if err != nil {
			t.Errorf("%s: unexpected error: %v", tc.name, err)
			continue
		}
		// The hand values are exact; 1e-14 allows for the rounding of a few
		// O(1) floating-point operations on 2×2 matrices.
		if !closeRel(got, tc.want, 1e-14) {
			t.Errorf("%s: KL = %.17g, want %.17g", tc.name, got, tc.want)
		}
	}
}

func TestKLGaussianErrors(t *testing.T) {
	pd := mat.NewSymDense(2, []float64{2, 1, 1, 2})
	indef := mat.NewSymDense(2, []float64{1, 2, 2, 1}) // eigenvalues 3 and −1
	singular := mat.NewSymDense(2, []float64{1, 1, 1, 1})
	nan := mat.NewSymDense(2, []float64{1, math.NaN(), math.NaN(), 1})
	z2 := []float64{0, 0}
	for _, tc := range []struct {
		name          string
		meanHat, mean []float64
		covHat, cov   mat.Symmetric
		notPD         bool
	}{
		{name: "zero dimension", meanHat: nil, covHat: pd, mean: nil, cov: pd},
		{name: "nil covariance", meanHat: z2, covHat: nil, mean: z2, cov: pd},
		{name: "mean length", meanHat: []float64{0}, covHat: pd, mean: z2, cov: pd},
		{name: "cov dimension", meanHat: z2, covHat: pd, mean: z2, cov: mat.NewSymDense(1, []float64{1})},
		{name: "NaN mean", meanHat: []float64{math.NaN(), 0}, covHat: pd, mean: z2, cov: pd},
		{name: "Inf mean", meanHat: z2, covHat: pd, mean: []float64{0, math.Inf(1)}, cov: pd},
		{name: "NaN cov", meanHat: z2, covHat: nan, mean: z2, cov: pd},
		{name: "indefinite covHat", meanHat: z2, covHat: indef, mean: z2, cov: pd, notPD: true},
		{name: "singular covHat", meanHat: z2, covHat: singular, mean: z2, cov: pd, notPD: true},
		{name: "indefinite cov", meanHat: z2, covHat: pd, mean: z2, cov: indef, notPD: true},
	} {
		got, err := KLGaussian(tc.meanHat, tc.covHat, tc.mean, tc.cov)
		if err == nil {
			t.Errorf("%s: got %v, want error", tc.name, got)
			continue
		}
		if !math.IsNaN(got) {
			t.Errorf("%s: got %v with error, want NaN", tc.name, got)
		}
		if errors.Is(err, ErrNotPositiveDefinite) != tc.notPD {
			t.Errorf("%s: errors.Is(%v, ErrNotPositiveDefinite) = %t, want %t", tc.name, err, !tc.notPD, tc.notPD)
		}
	}
}

// TestKLGaussianNaive cross-checks the Cholesky evaluation against the
// formula evaluated naively with explicit determinants and inverses on
// random well-conditioned 5-D Gaussians.
func TestKLGaussianNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const d = 5
	randSPD := func() *mat.SymDense {
		a := mat.NewDense(d, d, nil)
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				a.Set(i, j, rng.NormFloat64())
			}
		}
		var s mat.SymDense
		s.SymOuterK(1, a)
		for i := 0; i < d; i++ {
			s.SetSym(i, i, s.At(i, i)+0.5) // λ_min ≥ 0.5
		}
		return &s
	}
	randVec := func() []float64 {
		v := make([]float64, d)
		for i := range v {
			v[i] = 2 * rng.NormFloat64()
		}
		return v
	}
	for i := 0; i < 20; i++ {
		mh, ch, m, c := randVec(), randSPD(), randVec(), randSPD()
		got, err := KLGaussian(mh, ch, m, c)
		if err != nil {
			t.Fatal(err)
		}
		var inv, prod mat.Dense
		if err := inv.Inverse(c); err != nil {
			t.Fatal(err)
		}
		prod.Mul(&inv, ch)
		v := mat.NewVecDense(d, nil)
		v.SubVec(mat.NewVecDense(d, m), mat.NewVecDense(d, mh))
		quad := mat.Inner(v, &inv, v)
		want := 0.5 * (math.Log(mat.Det(c)/mat.Det(ch)) - d + mat.Trace(&prod) + quad)
		// Both evaluations are accurate to ~1e-14 relative on matrices with
		// condition numbers of at most a few hundred; 1e-10 is far above
		// the rounding difference yet catches any formula error.
		if !closeRel(got, want, 1e-10) {
			t.Errorf("case %d: KLGaussian = %.17g, naive = %.17g", i, got, want)
		}
	}
}

func TestGaussianFitSmall(t *testing.T) {
	// Samples (1,2), (3,6), (2,1), (2,3): μ̂ = (8/4, 12/4) = (2, 3).
	// Deviations (−1,−1), (1,3), (0,−2), (0,0):
	// Σ(dx²) = 2, Σ(dx·dy) = 4, Σ(dy²) = 14; divide by n−1 = 3:
	// Σ̂ = [[2/3, 4/3], [4/3, 14/3]], det Σ̂ = 28/9 − 16/9 = 4/3.
	// KL(N̂ ‖ N(0, I)) = ½[log(1/(4/3)) − 2 + (2/3 + 14/3) + (2² + 3²)]
	//                 = ½[49/3 − log(4/3)] = 49/6 − ½ log(4/3).
	var f GaussianFit
	for _, x := range [][]float64{{1, 2}, {3, 6}, {2, 1}, {2, 3}} {
		if err := f.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	if f.N() != 4 || f.Dim() != 2 {
		t.Fatalf("N, Dim = %d, %d; want 4, 2", f.N(), f.Dim())
	}
	const tol = 1e-14 // a handful of exact-in-principle operations
	wantMean := []float64{2, 3}
	for i, v := range f.Mean() {
		if !closeRel(v, wantMean[i], tol) {
			t.Errorf("Mean[%d] = %v, want %v", i, v, wantMean[i])
		}
	}
	wantCov := [][]float64{{2.0 / 3, 4.0 / 3}, {4.0 / 3, 14.0 / 3}}
	cov := f.Cov()
	for i := range wantCov {
		for j := range wantCov[i] {
			if !closeRel(cov.At(i, j), wantCov[i][j], tol) {
				t.Errorf("Cov[%d][%d] = %v, want %v", i, j, cov.At(i, j), wantCov[i][j])
			}
		}
	}
	kl, err := f.KL([]float64{0, 0}, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
	if want := 49.0/6 - 0.5*math.Log(4.0/3); err != nil || !closeRel(kl, want, tol) {
		t.Errorf("KL = %v, %v; want %v", kl, err, want)
	}
	// The fit itself as the target: KL = 0 (up to rounding, clamped at 0).
	kl, err = f.KL(f.Mean(), f.Cov())
	if err != nil || kl > 1e-14 {
		t.Errorf("KL to itself = %v, %v; want 0", kl, err)
	}
}

func TestGaussianFitErrors(t *testing.T) {
	eye := mat.NewSymDense(2, []float64{1, 0, 0, 1})
	var f GaussianFit
	if f.Mean() != nil || f.Cov() != nil {
		t.Error("empty fit: Mean or Cov not nil")
	}
	if _, err := f.KL([]float64{0, 0}, eye); err == nil {
		t.Error("KL with 0 samples: want error")
	}
	if err := f.Add(nil); err == nil {
		t.Error("Add(nil): want error")
	}
	if err := f.Add([]float64{1, 1}); err != nil {
		t.Fatal(err)
	}
	if err := f.Add([]float64{1, 2, 3}); err == nil {
		t.Error("Add with wrong dimension: want error")
	}
	if f.N() != 1 {
		t.Errorf("N = %d after rejected Add, want 1", f.N())
	}
	if c := f.Cov(); !math.IsNaN(c.At(0, 1)) {
		t.Errorf("Cov with one sample = %v, want NaN", c.At(0, 1))
	}
	if _, err := f.KL([]float64{0, 0}, eye); err == nil {
		t.Error("KL with 1 sample: want error")
	}
	// Two samples in 2-D span only a line: Σ̂ is singular.
	if err := f.Add([]float64{2, 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.KL([]float64{0, 0}, eye); !errors.Is(err, ErrNotPositiveDefinite) {
		t.Errorf("KL with singular fit: err = %v, want ErrNotPositiveDefinite", err)
	}
	// A NaN sample poisons the fit, and KL reports it.
	f.Add([]float64{math.NaN(), 0})
	if _, err := f.KL([]float64{0, 0}, eye); err == nil {
		t.Error("KL after NaN sample: want error")
	}
}

// TestGaussianFitLarge checks the streamed fit against a two-pass
// computation on 600,000 correlated 20-D samples with mean 3, the size of the
// paper's toy bias measurement. The samples are regenerated from the same
// seed instead of being stored.
func TestGaussianFitLarge(t *testing.T) {
	const (
		n = 600000
		d = 20
	)
	// x_k = 3 + z_k + 0.5 z_{k−1}: unit-scale variances and non-zero
	// correlations between neighbouring coordinates.
	gen := func(rng *rand.Rand, z, x []float64) {
		for k := range z {
			z[k] = rng.NormFloat64()
		}
		for k := range x {
			x[k] = 3 + z[k]
			if k > 0 {
				x[k] += 0.5 * z[k-1]
			}
		}
	}
	z := make([]float64, d)
	x := make([]float64, d)

	// Pass 1: the streamed fit and the sum for the reference mean.
	var f GaussianFit
	sum := make([]float64, d)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < n; i++ {
		gen(rng, z, x)
		f.Add(x)
		for k, v := range x {
			sum[k] += v
		}
	}
	mean := make([]float64, d)
	for k := range mean {
		mean[k] = sum[k] / n
	}
	// Pass 2: centred co-moments about the reference mean.
	comom := make([]float64, d*d)
	rng = rand.New(rand.NewPCG(3, 4))
	for i := 0; i < n; i++ {
		gen(rng, z, x)
		for k := range x {
			x[k] -= mean[k]
		}
		for a := 0; a < d; a++ {
			for b := a; b < d; b++ {
				comom[a*d+b] += x[a] * x[b]
			}
		}
	}

	// Tolerance 1e-10 relative: both computations carry rounding errors of
	// order √n·ε ≈ 1e-13 (worst case n·ε ≈ 7e-11) relative to the scale of
	// the quantity. For the mean the scale is |μ| ≈ 3. For covariances the
	// scale is √(Σ̂_aa Σ̂_bb), because off-diagonal entries are near zero
	// for non-neighbouring coordinates and a plain relative error would be
	// meaningless there. The observed discrepancy (against a compensated
	// two-pass sum) is about 3e-14, so the margin is over 1000×.
	const tol = 1e-10
	gotMean := f.Mean()
	for k := range mean {
		if math.Abs(gotMean[k]-mean[k]) > tol*math.Abs(mean[k]) {
			t.Errorf("Mean[%d] = %.17g, two-pass %.17g", k, gotMean[k], mean[k])
		}
	}
	cov := f.Cov()
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			want := comom[a*d+b] / (n - 1)
			scale := math.Sqrt(comom[a*d+a] * comom[b*d+b] / ((n - 1) * (n - 1)))
			if math.Abs(cov.At(a, b)-want) > tol*scale {
				t.Errorf("Cov[%d][%d] = %.17g, two-pass %.17g", a, b, cov.At(a, b), want)
			}
		}
	}
}

// klCholeskyTrsm is KLGaussian as it was computed before it used
// distmv (up to commit a4239f7), without the input checks: log det from
// the Cholesky factors Σ = LLᵀ and Σ̂ = L̂L̂ᵀ, tr(Σ⁻¹Σ̂) = ‖L⁻¹L̂‖²_F and
// (μ − μ̂)ᵀΣ⁻¹(μ − μ̂) = ‖L⁻¹(μ − μ̂)‖² by triangular solves. It is the
// reference that TestKLGaussianMatchesTrsm holds the distmv evaluation to.
func klCholeskyTrsm(meanHat []float64, covHat mat.Symmetric, mean []float64, cov mat.Symmetric) float64 {
	d := len(mean)
	var cholHat, chol mat.Cholesky
	if !cholHat.Factorize(covHat) || !chol.Factorize(cov) {
		panic("klCholeskyTrsm: not positive definite")
	}
	var l, lHat mat.TriDense
	chol.LTo(&l)
	cholHat.LTo(&lHat)
	lRaw := l.RawTriangular()
	a := mat.NewDense(d, d, nil)
	a.Copy(&lHat)
	aRaw := a.RawMatrix()
	blas64.Trsm(blas.Left, blas.NoTrans, 1, lRaw, aRaw)
	var trace float64
	for i := 0; i < d; i++ {
		row := aRaw.Data[i*aRaw.Stride : i*aRaw.Stride+d]
		trace += floats.Dot(row, row)
	}
	b := make([]float64, d)
	floats.SubTo(b, mean, meanHat)
	blas64.Trsv(blas.NoTrans, lRaw, blas64.Vector{N: d, Inc: 1, Data: b})
	quad := floats.Dot(b, b)
	kl := 0.5 * (chol.LogDet() - cholHat.LogDet() - float64(d) + trace + quad)
	return math.Max(kl, 0)
}

// randSPD returns a random d×d covariance with condition number about
// cond: Q diag(λ) Qᵀ with Q a random rotation (QR of a Gaussian matrix) and
// log λ evenly spaced over [0, log cond].
func randSPD(rng *rand.Rand, d int, cond float64) *mat.SymDense {
	g := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	lambda := mat.NewDiagDense(d, nil)
	for i := 0; i < d; i++ {
		f := 0.0
		if d > 1 {
			f = float64(i) / float64(d-1)
		}
		lambda.SetDiag(i, math.Pow(cond, f))
	}
	var ql, s mat.Dense
	ql.Mul(&q, lambda)
	s.Mul(&ql, q.T())
	out := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			out.SetSym(i, j, (s.At(i, j)+s.At(j, i))/2)
		}
	}
	return out
}

// TestKLGaussianMatchesTrsm checks KLGaussian, now gonum's
// distmv.KullbackLeibler.DistNormal on distmv.Normal built from the
// Cholesky factors, against the triangular-solve evaluation it replaced
// (klCholeskyTrsm): random pairs of Gaussians in 1 to 20 dimensions with
// condition numbers up to 10⁶, pairs that differ only slightly (KL ≈ 10⁻⁷,
// as near convergence), and the paper's toy measurement, a Gaussian fitted
// to draws of a 20-D target.
//
// The two agree to 1e-12 relative when KL ≥ 1 and to 1e-12 absolute below:
// both sum O(d) terms, log det Σ − log det Σ̂ − d + tr(Σ⁻¹Σ̂), whose
// cancellation leaves each with an absolute error of a few ulps of O(1)
// (the largest difference seen here was 5e-15), so a purely relative
// tolerance cannot hold for KL → 0 with either evaluation.
func TestKLGaussianMatchesTrsm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	type pair struct {
		meanHat, mean []float64
		covHat, cov   *mat.SymDense
	}
	var cases []pair
	for _, d := range []int{1, 2, 5, 20} {
		for _, cond := range []float64{1, 10, 1e3, 1e6} {
			for r := 0; r < 10; r++ {
				p := pair{make([]float64, d), make([]float64, d), randSPD(rng, d, cond), randSPD(rng, d, cond)}
				for i := range p.mean {
					p.meanHat[i], p.mean[i] = rng.NormFloat64(), rng.NormFloat64()
				}
				if r%2 == 1 { // nearly equal Gaussians
					p.covHat = p.cov
					copy(p.meanHat, p.mean)
					p.meanHat[0] += 1e-3
				}
				cases = append(cases, p)
			}
		}
	}
	// A fit to 2000 exact draws of N(3, Σ) in 20-D, Σ with condition 100.
	const d = 20
	target := randSPD(rng, d, 100)
	var chol mat.Cholesky
	chol.Factorize(target)
	var l mat.TriDense
	chol.LTo(&l)
	var fit GaussianFit
	z, x := mat.NewVecDense(d, nil), mat.NewVecDense(d, nil)
	for i := 0; i < 2000; i++ {
		for k := 0; k < d; k++ {
			z.SetVec(k, rng.NormFloat64())
		}
		x.MulVec(&l, z)
		for k := 0; k < d; k++ {
			x.SetVec(k, x.AtVec(k)+3)
		}
		fit.Add(x.RawVector().Data)
	}
	mean3 := make([]float64, d)
	for k := range mean3 {
		mean3[k] = 3
	}
	cases = append(cases, pair{fit.Mean(), mean3, fit.Cov(), target})

	for i, p := range cases {
		got, err := KLGaussian(p.meanHat, p.covHat, p.mean, p.cov)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want := klCholeskyTrsm(p.meanHat, p.covHat, p.mean, p.cov)
		if math.Abs(got-want) > 1e-12*math.Max(1, want) {
			t.Errorf("case %d (d=%d): distmv KL = %.17g, triangular solves %.17g", i, len(p.mean), got, want)
		}
	}
	// The fit's KL through GaussianFit.KL is the same computation.
	last := cases[len(cases)-1]
	if a, err := fit.KL(last.mean, last.cov); err != nil || a != must(KLGaussian(last.meanHat, last.covHat, last.mean, last.cov)) {
		t.Errorf("GaussianFit.KL = %v, %v; want KLGaussian's value", a, err)
	}
}

// must returns v, panicking if err is not nil.
func must(v float64, err error) float64 {
	if err != nil {
		panic(err)
	}
	return v
}

// TestGaussianErrorMessages checks the package's error convention, "diag:
// Func: problem", on KLGaussian and GaussianFit.
func TestGaussianErrorMessages(t *testing.T) {
	pd := mat.NewSymDense(2, []float64{2, 1, 1, 2})
	indef := mat.NewSymDense(2, []float64{1, 2, 2, 1})
	z2 := []float64{0, 0}
	var empty, line GaussianFit
	line.Add([]float64{1, 1})
	line.Add([]float64{2, 2}) // two samples in 2-D: a singular fit
	var fit GaussianFit
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"KLGaussian covHat", second(KLGaussian(z2, indef, z2, pd)), "diag: KLGaussian: covHat: covariance is not positive definite"},
		{"KLGaussian cov", second(KLGaussian(z2, pd, z2, indef)), "diag: KLGaussian: cov: covariance is not positive definite"},
		{"KLGaussian mismatch", second(KLGaussian([]float64{0}, pd, z2, pd)),
			"diag: KLGaussian: dimension mismatch: len(meanHat)=1, covHat 2×2, len(mean)=2, cov 2×2"},
		{"KLGaussian NaN", second(KLGaussian([]float64{math.NaN(), 0}, pd, z2, pd)), "diag: KLGaussian: non-finite input"},
		{"GaussianFit.KL empty", second(empty.KL(z2, pd)), "diag: GaussianFit.KL: need at least 2 samples, have 0"},
		{"GaussianFit.KL singular", second(line.KL(z2, pd)), "diag: GaussianFit.KL: fit: covariance is not positive definite"},
		{"GaussianFit.KL cov", second(line.KL(z2, indef)), "diag: GaussianFit.KL: fit: covariance is not positive definite"},
		{"GaussianFit.Add empty", fit.Add(nil), "diag: GaussianFit.Add: empty sample"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, tc.err, tc.want)
		}
	}
}

// second returns the error of a (value, error) pair.
func second(_ float64, err error) error { return err }
