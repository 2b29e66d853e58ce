package bnn

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// LastLayerHeat is how hot one chain's last layer sits in the posterior
// given its hidden layers (Energy.LastLayerHeat): the temperature of its
// position over all d directions, and apart over the fifth of the
// directions in which the conditional curves most (the largest
// eigenvalues of its Hessian, where minibatch gradient noise and a long
// step heat most) and over the other four fifths.
type LastLayerHeat struct {
	Temperature float64
	Stiff, Rest float64
}

// LastLayerHeat measures how hot the last layers of K chains sit in the
// posterior, positions against the exact conditional, not momenta. For
// each chain k of theta (coordinate-major, length Dim·K) it holds the
// chain's hidden layers fixed, so that the last layer w = (W_L, b_L), d =
// (H + 1)·C values, has the conditional posterior of a multinomial
// logistic regression on the chain's own features of all N training
// examples (full data, the energy's likelihood and prior), finds that
// conditional's mode μ by Newton's method and its Hessian A there, and
// reports
//
//	T_k = (w_k − μ)ᵀ·A·(w_k − μ) / d,
//
// and the same sum over A's stiffest fifth of eigen-directions and over
// the rest, each divided by its number of directions. A draw from the
// conditional gives T near 1 (Laplace's approximation of the conditional,
// close when N ≫ d: T·d is then χ²_d, so T has standard deviation
// √(2/d)), whatever the hidden layers are; a last layer that runs at
// temperature τ, or sits off the conditional's centre, gives more. A
// sampler whose chains' hidden layers move slowly beside a fast last layer
// keeps that layer near its conditional at each moment, so T is its
// positional temperature. The check costs a pass of the network over the
// data per chain and a few Newton steps of a d×d system.
func (e *Energy) LastLayerHeat(theta []float64, k int) ([]LastLayerHeat, error) {
	net := e.net
	if k < 1 || len(theta) != net.Dim()*k {
		return nil, fmt.Errorf("bnn: %d positions for %d chains of a %d-parameter network", len(theta), k, net.Dim())
	}
	for i, v := range theta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("bnn: position %d (coordinate %d of chain %d) is %v", i, i/k, i%k, v)
		}
	}
	feats, labels := e.features(theta, k)
	w0, d := net.lastLayer()
	stiff := max(1, d/5)
	heats := make([]LastLayerHeat, k)
	for c := range k {
		w := make([]float64, d)
		for i := range w {
			w[i] = theta[(w0+i)*k+c]
		}
		cond := net.conditional(feats[c], labels)
		mu, a, err := cond.mode(w)
		if err != nil {
			return nil, fmt.Errorf("bnn: chain %d: %w", c, err)
		}
		floats.Sub(w, mu)
		var eig mat.EigenSym
		if !eig.Factorize(a, true) {
			return nil, fmt.Errorf("bnn: chain %d: the eigen-decomposition of the last layer's conditional Hessian failed", c)
		}
		var vecs mat.Dense
		eig.VectorsTo(&vecs)
		// the eigenvalues ascend: the stiff directions are the last ones
		var proj mat.VecDense
		proj.MulVec(vecs.T(), mat.NewVecDense(d, w))
		var all, top float64
		for j, lam := range eig.Values(nil) {
			t := lam * proj.AtVec(j) * proj.AtVec(j)
			all += t
			if j >= d-stiff {
				top += t
			}
		}
		h := LastLayerHeat{Temperature: all / float64(d), Stiff: top / float64(stiff), Rest: math.NaN()}
		if d > stiff {
			h.Rest = (all - top) / float64(d-stiff)
		}
		heats[c] = h
	}
	return heats, nil
}

// features returns each chain's last hidden layer on every training
// example with a column of ones appended, (N, H + 1), and the labels.
func (e *Energy) features(theta []float64, k int) ([]*mat.Dense, []int) {
	net := e.net
	n, in := e.data.Len(), net.Inputs()
	const block = 2048
	l := net.Layers() - 1
	h := net.Sizes[l]
	out := make([]*mat.Dense, k)
	for c := range out {
		out[c] = mat.NewDense(n, h+1, nil)
	}
	labels := make([]int, n)
	// each chain's hidden layers, (fan_in, fan_out) and (fan_out)
	ws := make([][]*mat.Dense, k)
	bs := make([][][]float64, k)
	for c := range k {
		for j := 0; j < l; j++ {
			wo, bo := net.Offsets(j)
			fi, fo := net.Sizes[j], net.Sizes[j+1]
			w := make([]float64, fi*fo)
			for i := range w {
				w[i] = theta[(wo+i)*k+c]
			}
			b := make([]float64, fo)
			for i := range b {
				b[i] = theta[(bo+i)*k+c]
			}
			ws[c] = append(ws[c], mat.NewDense(fi, fo, w))
			bs[c] = append(bs[c], b)
		}
	}
	x := make([]float64, block*in)
	for lo := 0; lo < n; lo += block {
		m := min(block, n-lo)
		for r := range m {
			labels[lo+r] = e.data.Example(lo+r, x[r*in:(r+1)*in])
		}
		xb := mat.NewDense(m, in, x[:m*in])
		for c := range k {
			var z mat.Dense
			cur := mat.Matrix(xb)
			for j := 0; j < l; j++ {
				z.Reset()
				z.Mul(cur, ws[c][j])
				raw := z.RawMatrix()
				for r := 0; r < raw.Rows; r++ {
					row := raw.Data[r*raw.Stride : r*raw.Stride+raw.Cols]
					addAct(net.layerAct(j), row, row, bs[c][j])
				}
				cur = mat.DenseCopyOf(&z)
			}
			dst := out[c].Slice(lo, lo+m, 0, h).(*mat.Dense)
			dst.Copy(cur)
			for r := range m {
				out[c].Set(lo+r, h, 1)
			}
		}
	}
	return out, labels
}

// lastLayer returns where the last layer's weights and biases start in θ
// and how many they are, d = (H + 1)·C.
func (m MLP) lastLayer() (w0, d int) {
	l := m.Layers() - 1
	w0, _ = m.Offsets(l)
	return w0, (m.Sizes[l] + 1) * m.Classes()
}

// conditional is the last layer's conditional posterior on the features
// f of the hidden layers (with the column of ones) and the labels y.
func (m MLP) conditional(f *mat.Dense, y []int) conditional {
	return conditional{f: f, y: y, classes: m.Classes(), prec: 1 / (m.Sigma() * m.Sigma())}
}

// conditional is the posterior of a multinomial logistic regression: the
// energy U(w) = Σ_n [logsumexp(f_n·V) − (f_n·V)[y_n]] + prec·|w|²/2 of the
// (H + 1, C) matrix V whose row-major values are w (the MLP's layout of
// W_L followed by b_L, the features' last column being the ones).
type conditional struct {
	f       *mat.Dense // (N, H + 1)
	y       []int
	classes int
	prec    float64 // 1/σ²
}

// eval returns U(w), and, when grad is not nil, writes ∇U there and,
// when hess is not nil, the Hessian there.
func (q conditional) eval(w, grad []float64, hess *mat.SymDense) float64 {
	n, p := q.f.Dims()
	c := q.classes
	v := mat.NewDense(p, c, w)
	var z mat.Dense
	z.Mul(q.f, v)
	raw := z.RawMatrix()
	u := 0.5 * q.prec * floats.Dot(w, w)
	for r := range n {
		row := raw.Data[r*raw.Stride : r*raw.Stride+c]
		mx := floats.Max(row)
		zy := row[q.y[r]] - mx
		s := 0.0
		for i := range row {
			row[i] = math.Exp(row[i] - mx)
			s += row[i]
		}
		u += math.Log(s) - zy // logsumexp(z) − z_y
		floats.Scale(1/s, row)
	}
	// z now holds the probabilities P
	if grad == nil {
		return u
	}
	// ∇U = Fᵀ·(P − Y) + prec·w
	var r mat.Dense
	r.CloneFrom(&z)
	for i := range n {
		r.Set(i, q.y[i], r.At(i, q.y[i])-1)
	}
	g := mat.NewDense(p, c, grad)
	g.Mul(q.f.T(), &r)
	floats.AddScaled(grad, q.prec, w)
	if hess == nil {
		return u
	}
	// A[(i,a),(j,b)] = Σ_n P_na·(δ_ab − P_nb)·f_ni·f_nj + prec·δ
	scaled := mat.NewDense(n, p, nil)
	var blk mat.Dense
	for a := range c {
		for b := a; b < c; b++ {
			for r := range n {
				s := -z.At(r, a) * z.At(r, b)
				if a == b {
					s += z.At(r, a)
				}
				src := q.f.RawRowView(r)
				dst := scaled.RawRowView(r)
				for i := range src {
					dst[i] = s * src[i]
				}
			}
			blk.Reset()
			blk.Mul(q.f.T(), scaled)
			for i := range p {
				for j := range p {
					hess.SetSym(i*c+a, j*c+b, blk.At(i, j))
				}
			}
		}
	}
	for i := range p * c {
		hess.SetSym(i, i, hess.At(i, i)+q.prec)
	}
	return u
}

// mode returns the conditional's mode and its Hessian there, by Newton's
// method with a backtracking line search from w (the energy is convex).
func (q conditional) mode(w []float64) ([]float64, *mat.SymDense, error) {
	d := len(w)
	x := append([]float64(nil), w...)
	grad := make([]float64, d)
	hess := mat.NewSymDense(d, nil)
	trial := make([]float64, d)
	for range 100 {
		u := q.eval(x, grad, hess)
		var ch mat.Cholesky
		if !ch.Factorize(hess) {
			return nil, nil, errors.New("the last layer's conditional Hessian is not positive definite")
		}
		var step mat.VecDense
		if err := ch.SolveVecTo(&step, mat.NewVecDense(d, grad)); err != nil {
			return nil, nil, err
		}
		dec := floats.Dot(grad, step.RawVector().Data) // Newton decrement²
		if dec < 1e-12*float64(d) {
			return x, hess, nil
		}
		t := 1.0
		for ; t > 1e-10; t /= 2 {
			copy(trial, x)
			floats.AddScaled(trial, -t, step.RawVector().Data)
			if q.eval(trial, nil, nil) <= u-0.25*t*dec {
				break
			}
		}
		copy(x, trial)
	}
	return nil, nil, errors.New("Newton's method found no mode of the last layer's conditional in 100 steps")
}
