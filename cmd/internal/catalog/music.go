package catalog

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
	"github.com/metasgmcmc/metasgmcmc/tasks/gru"
	"github.com/metasgmcmc/metasgmcmc/tasks/music"
	"github.com/metasgmcmc/metasgmcmc/train"
)

// The Bayesian GRU tasks (paper §5.3, appendices C, D.4, E). The authors'
// code has none, so the settings the paper leaves open are our choices,
// documented here:
//   - the GRU is 88 → H → 88 with H = 100 for training the sampler (the
//     paper) and --hidden 200 for the evaluations (the paper);
//   - the prior is N(0, I); chains start at θ ~ N(0, 0.1²I), p = 0;
//   - NNSGHMC's inputs: u = −Ũ/N per frame, with the authors' sign
//     convention, and
//     the gradient input 30·∇Ũ/N — 30 makes it about unit scale at the
//     start (rms(∇Ũ/N) was 0.02–0.04 for θ ~ N(0, 0.1²I) on Piano), which
//     is what appendix C's pre-processing aims at; f_Q clamped to ±5, D_f to
//     [0, 1000];
//   - NNSGHMC's default offset β (nott-gru, muse-gru, jsb-gru) has the
//     paper's size, 1.5, and the trained f_Q's sign (Defaults.Offset): the
//     paper's −1.5 enlarges |Q_f| for a negative f_Q and brings Q_f
//     towards 0 for a positive one;
//   - meta-training truncates back-propagation every 10 steps and evaluates
//     the cross-chain loss every 3 steps (the paper gives neither) with
//     Stein λ = 0.05 and the MNIST optimisers (two Adam, lr 3e-3, betas 0.5,
//     0.9);
//   - every sampler's per-batch learning rate is 0.001 (the paper): η =
//     0.001/N for SGLD, √(0.001/N) for SGHMC (velocity friction 0.01, as on
//     MNIST) and NNSGHMC; so is the optimisers' (Chen et al. 2016's music
//     code, whose gradient is the per-frame mean ∇Ũ/N): η = 0.001/N for SGD
//     with momentum and Santa, 0.001 for Adam (samplers.Adam);
//   - an evaluation runs 10 data epochs and scores the test split after
//     every epoch by default.
var musicNN = nnkernel.Settings{
	C: 100, ClampQ: 5, DMax: 1000, DScale: 20, EnergyScale: -1, GradScale: 30, MomentumScale: 1,
}

// rnnSettings are the paper's settings of its Bayesian GRUs
// (nnsghmc.RNNSettings, the same c, clamps and Γ as musicNN) with offset
// beta, without the step size and α, which the command sets (α from
// Defaults.AlphaCoef).
func rnnSettings(beta float64) nnsghmc.Settings {
	s := nnsghmc.RNNSettings(1)
	s.StepSize, s.Alpha, s.Beta = nil, 0, beta
	return s
}

// musicSets caches the loaded data sets by directory and name.
var musicSets = struct {
	sync.Mutex
	m map[[2]string]*music.Dataset
}{m: map[[2]string]*music.Dataset{}}

func loadMusic(dir, name string) (*music.Dataset, error) {
	dir = datadir.Dir(dir)
	musicSets.Lock()
	defer musicSets.Unlock()
	key := [2]string{dir, name}
	if d, ok := musicSets.m[key]; ok {
		return d, nil
	}
	d, err := music.Load(dir, name)
	if err != nil {
		return nil, err
	}
	musicSets.m[key] = d
	return d, nil
}

func init() {
	for _, s := range []struct {
		task, data, desc string
		// beta is the size of the default offset β, whose sign a run
		// takes from the trained f_Q (Defaults.Offset): the paper's 1.5
		// on the sets it carries β to; 0 on piano-gru, whose validation
		// protocol scores the networks alone
		beta   float64
		trains bool
	}{
		{"piano-gru", "piano", "Bayesian GRU on Piano-midi.de: trains the sampler (the project's main job)", 0, true},
		{"nott-gru", "nott", "Bayesian GRU on Nottingham", 1.5, false},
		{"muse-gru", "muse", "Bayesian GRU on MuseData", 1.5, false},
		{"jsb-gru", "jsb", "Bayesian GRU on the JSB chorales", 1.5, false},
	} {
		s := s
		register(s.task, s.desc, s.trains, func(o Options) (*Task, error) { return musicTask(o, s.data, s.beta, s.trains) })
	}
}

// maxHidden is the most hidden units of a GRU task: a width whose
// parameter count fits easily in an int (about 3.3·10¹² parameters), far
// beyond any machine's memory, which CheckSample and CheckTrain refuse.
const maxHidden = 1 << 20

func musicTask(o Options, name string, beta float64, trains bool) (*Task, error) {
	if o.Hidden < 0 || o.Hidden > maxHidden {
		return nil, fmt.Errorf("--hidden must be between 1 and %d, got %d", maxHidden, o.Hidden)
	}
	ds, err := loadMusic(o.DataDir, name)
	if err != nil {
		return nil, err
	}
	h := o.Hidden
	if h == 0 {
		h = 100
	}
	cfg := func(k int) gru.Config {
		return gru.Config{Hidden: h, Chains: k, Dtype: o.Dtype, InitialState: o.InitialState, ResetAfter: o.ResetAfter}
	}
	dim := cfg(1).Layout().Dim()
	n := float64(ds.Train.Frames())
	const lr = 0.001
	eta := math.Sqrt(lr / n)
	init := func(rng *rand.Rand, k int) []float64 {
		x := make([]float64, dim*k)
		for i := range x {
			x[i] = 0.1 * rng.NormFloat64()
		}
		return x
	}
	perEpoch := len(ds.Train)
	task := &Task{
		Dim:    dim,
		hidden: h,
		NewTarget: func(k int, noise float64) (samplers.Target, error) {
			if noise > 0 {
				return nil, errNoNoise
			}
			return gru.NewEnergy(ds.Train, cfg(k))
		},
		Init: init,
		NewMonitor: func(k int) (tasks.Monitor, error) {
			var valid music.Split
			if o.Valid {
				valid = ds.Valid
			}
			return gru.NewMonitor(cfg(k), ds.Test, valid, 0)
		},
		Defaults: Defaults{
			Chains: 20, Steps: 10 * perEpoch, EvalEvery: perEpoch,
			StepSize: map[string]float64{"sgld": lr / n, "psgld": lr / n, "sghmc": eta, "nnsghmc": eta,
				"sgdm": lr / n, "santa": lr / n, "adam": lr},
			SGHMCAlpha: 0.01, DataSize: n,
			NN:       rnnSettings(beta),
			NNInputs: nnsghmc.Inputs{EnergyScale: musicNN.EnergyScale, GradScale: musicNN.GradScale, MomentumScale: musicNN.MomentumScale},
			NNDScale: musicNN.DScale, QHidden: []int{10}, DHidden: []int{10},
			AlphaCoef: 0.002,
		},
	}
	if trains {
		adam := train.AdamConfig{LR: 3e-3, Beta1: 0.5, Beta2: 0.9, Eps: 1e-8}
		task.Training = &Training{
			Config: train.Config{
				Chains: 20, Epochs: 40, SubEpochs: 7, Steps: 70, Window: 10,
				Cross: &train.CrossChain{Every: 3, Lambda: 0.05, Weight: 1},
				QAdam: adam, DAdam: adam,
				// as on MNIST: the authors' training-mode step
				// (train.Config.AuthorsStep; their code has no GRU, so
				// their MNIST sampler's), the momentum carried over
				// between the continuation unrolls
				AuthorsStep: true,
			},
			StepSize: eta, NN: musicNN, AlphaCoef: 0.002, QHidden: []int{10}, DHidden: []int{10},
			// as on MNIST, f_Q starts as SGHMC's Q = 1: a random f_Q can
			// cross 0 where the chains start and stall training there
			QStart:     1,
			Validation: musicValidation(),
		}
	}
	return task, nil
}

// musicValidation is the Piano set-up's validation protocol: the task's
// NNSGHMC on piano-gru at a width that neither training (100) nor the
// evaluations (200) use, 150, for 30 steps (a third of a data epoch) with
// run seeds 1 and 2, 20 chains, scored by the 20-chain ensemble's NLL per
// frame on Piano's validation split after the last step, every 8 epochs.
func musicValidation() *Validation {
	return &Validation{Task: "piano-gru", Targets: []ValidationTarget{{Name: "width-150-valid-split", Options: Options{Hidden: 150, Valid: true}}},
		Seeds: []uint64{1, 2}, Chains: 20, Steps: 30, Metric: gru.MetricValidNLL, Every: 8}
}
