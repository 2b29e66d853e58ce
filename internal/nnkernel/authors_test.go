package nnkernel

import (
	"math"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
)

// TestAuthorsStepMatchesTheirCode checks GammaAuthors against one
// training-mode step of the authors' own code: the expected values come
// from running their BNN_Q_D.py, unmodified, and their update lines
// (testdata/authors_step.py, which says how) on two chains of three
// coordinates with f_Q's clamp binding on one coordinate and D_f's on
// another. The valid step (GammaExact) must differ there, or the case would
// not tell the two apart.
func TestAuthorsStepMatchesTheirCode(t *testing.T) {
	qW0 := []float64{0.7857203028720032, 0.6424582461156636, -0.7846866401280641, -0.3360403893976456, -0.9166067485495002, 0.19010412841248048}
	qB0 := []float64{0.05963472438564321, -0.16238514288669137, -0.32918430145334154}
	qW1 := []float64{0.24503886439218037, -0.12371714778225185, 0.47176421269738045}
	qB1 := []float64{0.03607282399853751}
	dW0 := []float64{0.1577172004523142, 0.6397163938436827, 0.6475188651410426, 0.2907101917911876, -0.17359813036763838, -0.8910509843552907, 0.9804485427468328, 0.7525353104132548, 0.43727447312838863}
	dB0 := []float64{0.6043411248489508, 0.4728132876228779, 0.4182635015623346}
	dW1 := []float64{0.08187370860505627, -0.7503516512387804, 0.9152945909393368}
	dB1 := []float64{-0.19348740253016028}
	theta := []float64{0.7073411266994403, -0.9214649876451717, 0.9635626305190782, 1.6672475576302221, 0.27473356217314293, 0.13652337499724773}
	p := []float64{-1.2749268539101561, -0.7668744076869966, 1.481378209355713, -0.5860804007869753, -0.6566668366081055, 1.5671131840798973}
	u := []float64{-0.4, -0.4, -0.4, 0.3, 0.3, 0.3}
	gradU := []float64{-7.727804909319158, 76.39953622877411, 434.5613673296482, -261.59587865864773, -55.21992091730334, -226.8746223559136}
	xi := []float64{0.7366332446330849, 0.7536890797626319, -0.8669203404631564, -0.6035496321307574, -2.059564060800764, -0.3584300626228379}
	wantP := []float64{-0.5004551964100337, -0.14676583814137129, -0.4609172451873141, -0.5690460700855182, -1.4595535180245083, 1.3387520404568405}
	wantTheta := []float64{0.7062773884456476, -0.9214675400214404, 0.9619677135482059, 1.6664448295307357, 0.27319264625221673, 0.13700630066457856}
	// Q_f clamped on 1, D_f clamped on 1 of 6 coordinates
	const n, dataSize = 6, 1000.0
	cfg := Config{Settings: Settings{StepSize: 0.01, Alpha: 30, ClampQ: 0.1, DMax: 60, DScale: 50,
		EnergyScale: -1, GradScale: 70, MomentumScale: 1, Gamma: GammaAuthors, Friction: FrictionExplicit}}
	cfg.Q = &coordnet.Weights{Inputs: 2, Hidden: []int{3}, Activation: coordnet.ReLU, W: [][]float64{qW0, qW1}, B: [][]float64{qB0, qB1}}
	cfg.D = &coordnet.Weights{Inputs: 3, Hidden: []int{3}, Activation: coordnet.ReLU, W: [][]float64{dW0, dW1}, B: [][]float64{dB0, dB1}}
	// u = −Ũ/N per chain, ∂u/∂θ = −∇Ũ/N, the gradient feature 70·∇Ũ/N
	f := &Features{U: u, DU: make([]float64, n), GFeat: make([]float64, n)}
	for i, g := range gradU {
		f.DU[i], f.GFeat[i] = -g/dataSize, 70*g/dataSize
	}
	step := func(gamma Gamma) (theta1, p1 []float64) {
		c := cfg
		c.Gamma = gamma
		s := &Kernel{d: n, k: 1, cfg: c}
		theta1, p1 = append([]float64(nil), theta...), append([]float64(nil), p...)
		if err := s.Update(theta1, p1, f, gradU, xi); err != nil {
			t.Fatal(err)
		}
		return theta1, p1
	}
	gotTheta, gotP := step(GammaAuthors)
	for i := range wantP {
		if math.Abs(gotP[i]-wantP[i]) > 1e-12*(1+math.Abs(wantP[i])) || math.Abs(gotTheta[i]-wantTheta[i]) > 1e-12*(1+math.Abs(wantTheta[i])) {
			t.Errorf("coordinate %d: (θ, p) = (%v, %v), the authors' code (%v, %v)", i, gotTheta[i], gotP[i], wantTheta[i], wantP[i])
		}
	}
	exTheta, exP := step(GammaExact)
	differ := 0
	for i := range wantP {
		if math.Abs(exP[i]-wantP[i]) > 1e-6 || math.Abs(exTheta[i]-wantTheta[i]) > 1e-6 {
			differ++
		}
	}
	if differ < n/2 {
		t.Errorf("the valid step differs from the authors' training step on only %d of %d coordinates", differ, n)
	}
}
