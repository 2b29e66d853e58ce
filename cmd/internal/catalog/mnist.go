package catalog

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/bnn"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
	"github.com/metasgmcmc/metasgmcmc/tasks/mnist"
	"github.com/metasgmcmc/metasgmcmc/train"
)

// mnistTask describes one of the paper's MNIST set-ups (section 5.2,
// appendices D.2–D.3; the authors' hyper-parameters in
// BNN_MNIST/Sampler_Training.py, NetworkTopologyGeneralization.py,
// SigmoidGeneralization.py and long_run_Dataset_Gen.py of
// github.com/WenboGong/MetaSGMCMC).
type mnistTask struct {
	desc   string
	net    bnn.MLP
	digits []int // nil: all ten
	// evaluation: per-batch learning rates (η = lr/N for SGLD and pSGLD,
	// √(lr/N) for SGHMC and NNSGHMC; the paper's appendix D, which gives
	// pSGLD 1.3e-2 on the sigmoid network where the authors' result files
	// name the run "step_1.3"), NNSGHMC's warm-up learning rate for
	// the first data epoch, its clamps. The optimisers, which the paper
	// does not run on MNIST, take the steps of the samplers whose update
	// theirs is without noise: SGD with momentum SGHMC's heavy-ball step
	// lrSGHMC/N (SGHMC's velocity form), Santa pSGLD's lrPSGLD/N (its
	// preconditioner g² is pSGLD's), Adam Kingma & Ba's default 0.001.
	lrSGLD, lrPSGLD, lrSGHMC, lrNN, lrNNWarm float64
	clampQ, dMax                             float64
	evalEvery                                int
	training                                 *mnistTraining
	// heldOut, when positive, holds the last heldOut training images out
	// of the sampling for the monitor, which scores on them instead of the
	// test split (the validation tasks, which no evaluation uses).
	heldOut int
}

// mnistTraining is a meta-training set-up on an MNIST task.
type mnistTraining struct {
	lr      float64 // per-batch learning rate: η = √(lr/N)
	dMax    float64
	window  int
	every   int
	initStd float64
	// authorsLoader trains as the authors' loader feeds their scripts: a
	// fresh data epoch for every unroll, ending with the short batch of the
	// images left over (none on all 60,000 images), and the losses on the
	// step's minibatch (train.Config.DataPerUnroll, bnn.Energy.KeepLast)
	authorsLoader bool
	// validation names the validation task (mnistTraining.protocol), and
	// start its bar on the start, if any.
	validation string
	start      *Bar
	// thermostat and adaptiveFriction are the NNSGHMC thermostat and
	// adaptive friction of the validation runs (0: none), those the
	// set-up's evaluations of new trainings use
	thermostat, adaptiveFriction float64
}

// The MNIST training set-ups: the NT/AF sampler's, validated on
// mnist-valid with the NT bar of 14 % error after 100 steps, under the
// thermostat τ = 3 and the adaptive friction κ = 0.001 with which its new
// trainings are evaluated (experiments/mnist-train-seeds.sh;
// experiments/mnist-nt/thermostat.sweep and friction.sweep chose them),
// and the Data sampler's, validated on mnist-data-valid with the adaptive
// friction κ = 0.001 of its evaluations (experiments/mnist-data/friction.sweep).
var (
	ntTraining = &mnistTraining{lr: 0.007, dMax: 1000, window: 15, every: 3, initStd: 0.2, authorsLoader: true, validation: "mnist-valid",
		start: &Bar{Metric: bnn.MetricError, Bound: 0.14, Step: 100}, thermostat: 3, adaptiveFriction: 0.001}
	dataTraining = &mnistTraining{lr: 0.007, dMax: 400, window: 10, every: 5, initStd: 0.2, authorsLoader: true, validation: "mnist-data-valid",
		adaptiveFriction: 0.001}
)

// protocol is the validation protocol of an MNIST set-up: the task's
// NNSGHMC on the validation task for 1,000 steps (10 data epochs of
// mnist-valid's 50,000 images) with run seeds 1 and 2, 20 chains, scored
// by the held-out images' NLL of the 20-chain ensemble after the last
// step, every 8 epochs. With a start bar, a run that misses it has its
// NLL multiplied by how far it misses it: the NLL after 1,000 steps alone
// hardly tells a fast start from a slow one.
func (tr *mnistTraining) protocol() *Validation {
	v := &Validation{Task: tr.validation, Targets: []ValidationTarget{{Name: "held-out-images"}}, Seeds: []uint64{1, 2}, Chains: 20, Steps: 1000,
		Metric: bnn.MetricNLL, Every: 8}
	if tr.start != nil {
		b := *tr.start
		v.Start = &b
	}
	v.Thermostat, v.AdaptiveFriction = tr.thermostat, tr.adaptiveFriction
	return v
}

// mnistNN are the authors' NNSGHMC settings on MNIST: u = log-joint/N
// (energy scale −1), gradient input 70·∇Ũ/N, D_f = α·Q² + 50·|f_D|, c = 0,
// β = 0, f_Q clamped to ±5, networks with one hidden layer of 10 ReLUs.
var mnistNN = nnkernel.Settings{ClampQ: 5, DMax: 1000, DScale: 50, EnergyScale: -1, GradScale: 70, MomentumScale: 1}

// bnnSettings are the paper's settings of its Bayesian MLPs
// (nnsghmc.BNNSettings) with the clamps of a task, without the step size
// and α, which the command sets (α from Defaults.AlphaCoef).
func bnnSettings(clampQ, dMax float64) nnsghmc.Settings {
	s := nnsghmc.BNNSettings(1)
	s.StepSize, s.Alpha, s.ClampQ, s.DMax = nil, 0, clampQ, dMax
	return s
}

// mnistInputs are mnistNN's input scalings.
var mnistInputs = nnsghmc.Inputs{EnergyScale: mnistNN.EnergyScale, GradScale: mnistNN.GradScale, MomentumScale: mnistNN.MomentumScale}

func init() {
	tasks := map[string]mnistTask{
		"mnist-relu": {desc: "Bayesian MLP 784-20-10 ReLU on all MNIST digits: trains the NT and AF samplers",
			net: bnn.NTTrain, lrSGLD: 0.2, lrPSGLD: 1.4e-3, lrSGHMC: 0.01, lrNN: 0.018, lrNNWarm: 0.0085,
			clampQ: 5, dMax: 1000, evalEvery: 100, training: ntTraining},
		"mnist-data-train": {desc: "Bayesian MLP 784-20-5 ReLU on MNIST digits 0-4: trains the Data sampler",
			net: bnn.DataTrain, digits: []int{0, 1, 2, 3, 4}, lrSGLD: 0.2, lrPSGLD: 1.3e-3, lrSGHMC: 0.01, lrNN: 0.018, lrNNWarm: 0.008,
			clampQ: 4, dMax: 400, evalEvery: 20,
			training: dataTraining},
		"mnist-nt": {desc: "network-topology generalisation: Bayesian MLP 784-40-40-10 ReLU on all MNIST digits",
			net: bnn.NTTest, lrSGLD: 0.2, lrPSGLD: 1.4e-3, lrSGHMC: 0.01, lrNN: 0.018, lrNNWarm: 0.0085,
			clampQ: 5, dMax: 1000, evalEvery: 100},
		"mnist-af": {desc: "activation-function generalisation: Bayesian MLP 784-40-40-10 sigmoid on all MNIST digits",
			net: bnn.AFTest, lrSGLD: 1.0, lrPSGLD: 1.3e-2, lrSGHMC: 0.15, lrNN: 0.18, lrNNWarm: 0.085,
			clampQ: 4, dMax: 10000, evalEvery: 100},
		"mnist-data": {desc: "data-set generalisation: Bayesian MLP 784-40-40-5 ReLU on MNIST digits 5-9",
			net: bnn.DataTest, digits: []int{5, 6, 7, 8, 9}, lrSGLD: 0.2, lrPSGLD: 1.3e-3, lrSGHMC: 0.01, lrNN: 0.018, lrNNWarm: 0.008,
			clampQ: 4, dMax: 400, evalEvery: 20},
		// the validation tasks: a 30-30 architecture that no evaluation
		// uses, sampled on the training split less its last 10,000 images
		// (of the digits), scored on those; the settings of mnist-nt and
		// mnist-data
		"mnist-valid": {desc: "validation of the NT/AF samplers: Bayesian MLP 784-30-30-10 ReLU on the first 50,000 MNIST training images, scored on the last 10,000",
			net: bnn.MLP{Sizes: []int{784, 30, 30, 10}, Activation: bnn.ReLU}, lrSGLD: 0.2, lrPSGLD: 1.4e-3, lrSGHMC: 0.01, lrNN: 0.018, lrNNWarm: 0.0085,
			clampQ: 5, dMax: 1000, evalEvery: 100, heldOut: 10000},
		"mnist-data-valid": {desc: "validation of the Data sampler: Bayesian MLP 784-30-30-5 ReLU on MNIST digits 5-9 of the training split but its last 10,000, scored on those",
			net: bnn.MLP{Sizes: []int{784, 30, 30, 5}, Activation: bnn.ReLU}, digits: []int{5, 6, 7, 8, 9}, lrSGLD: 0.2, lrPSGLD: 1.3e-3, lrSGHMC: 0.01, lrNN: 0.018, lrNNWarm: 0.008,
			clampQ: 4, dMax: 400, evalEvery: 20, heldOut: 10000},
	}
	for name, t := range tasks {
		register(name, t.desc, t.training != nil, t.build)
	}
}

// mnistSets caches the loaded data by directory.
var mnistSets = struct {
	sync.Mutex
	m map[string][2]*mnist.Set
}{m: map[string][2]*mnist.Set{}}

func loadMNIST(dir string) (*mnist.Set, *mnist.Set, error) {
	dir = datadir.Dir(dir)
	mnistSets.Lock()
	defer mnistSets.Unlock()
	if s, ok := mnistSets.m[dir]; ok {
		return s[0], s[1], nil
	}
	train, test, err := mnist.Load(dir)
	if err != nil {
		return nil, nil, err
	}
	mnistSets.m[dir] = [2]*mnist.Set{train, test}
	return train, test, nil
}

const mnistBatch = 500

func (t mnistTask) build(o Options) (*Task, error) {
	if o.Download {
		if err := mnist.Download(context.Background(), datadir.Dir(o.DataDir), "", os.Stderr); err != nil {
			return nil, err
		}
	}
	trainSet, testSet, err := loadMNIST(o.DataDir)
	if err != nil {
		return nil, err
	}
	if t.digits != nil {
		trainSet, testSet = trainSet.Subset(t.digits...), testSet.Subset(t.digits...)
	}
	if t.heldOut > 0 {
		n := trainSet.N - t.heldOut
		trainSet, testSet = trainSet.Slice(0, n), trainSet.Slice(n, trainSet.N)
	}
	energy, err := bnn.New(t.net, bnn.MNIST(trainSet), mnistBatch)
	if err != nil {
		return nil, err
	}
	n := float64(trainSet.N)
	perEpoch := trainSet.N / mnistBatch
	sqrtStep := func(lr float64) float64 { return math.Sqrt(lr / n) }
	task := &Task{
		Dim:       t.net.Dim(),
		Energy:    energy,
		NewTarget: compiled(energy, o.Dtype, false),
		// evaluation chains start at θ ~ 0.01·N(0, I), p = 0
		Init: func(rng *rand.Rand, k int) []float64 { return t.net.Init(rng, k, 0.01) },
		NewMonitor: func(k int) (tasks.Monitor, error) {
			return bnn.NewMonitor(t.net, k, bnn.MNIST(testSet), bnn.MonitorConfig{Float32: o.Dtype == graph.Float32})
		},
		Defaults: Defaults{
			Chains: 20, Steps: 100 * perEpoch, EvalEvery: t.evalEvery,
			StepSize: map[string]float64{
				"sgld": t.lrSGLD / n, "psgld": t.lrPSGLD / n, "sghmc": sqrtStep(t.lrSGHMC), "nnsghmc": sqrtStep(t.lrNN),
				"sgdm": t.lrSGHMC / n, "santa": t.lrPSGLD / n, "adam": 0.001,
			},
			SGHMCAlpha: 0.01, DataSize: n,
			NN:       bnnSettings(t.clampQ, t.dMax),
			NNInputs: mnistInputs, NNDScale: mnistNN.DScale, QHidden: []int{10}, DHidden: []int{10},
			AlphaCoef:   0.01,
			WarmupSteps: perEpoch, WarmupStepSize: sqrtStep(t.lrNNWarm),
		},
	}
	if tr := t.training; tr != nil {
		adam := train.AdamConfig{LR: 3e-3, Beta1: 0.5, Beta2: 0.9, Eps: 1e-8}
		tnn := mnistNN
		tnn.DMax = tr.dMax
		task.Training = &Training{
			Config: train.Config{
				Chains: 20, Epochs: 40, SubEpochs: 7, Steps: 99, Window: tr.window,
				Cross: &train.CrossChain{Every: tr.every, Lambda: 0.05, Weight: 1},
				QAdam: adam, DAdam: adam,
				// the continuations carry the last unroll's momentum over:
				// the authors' scripts restart every continuation from the
				// fresh unroll's final momentum (train.Config.FreshMomentum,
				// train --fresh-momentum, as the committed samplers were
				// trained), which, once f_Q starts as Q = 1, throws chains
				// off late in the epochs from the first ones on
				// (experiments/mnist-nt/README.md)
				FreshMomentum: false,
				// the authors' training-mode step (train.Config.AuthorsStep)
				AuthorsStep: true,
			},
			StepSize: sqrtStep(tr.lr), NN: tnn, AlphaCoef: 0.01, QHidden: []int{10}, DHidden: []int{10},
			// f_Q starts as SGHMC's Q = 1 (with α = 0.01/η, D_f starts as
			// the authors' SGHMC friction plus 50·|f_D|)
			QStart:     1,
			Validation: tr.protocol(),
			// meta-training chains start at θ ~ 0.2·N(0, I), p = 0
			Init: func(rng *rand.Rand, k int) []float64 { return t.net.Init(rng, k, tr.initStd) },
		}
		if tr.authorsLoader {
			task.Training.Config.DataPerUnroll = true
			task.Training.NewTarget = compiled(energy.KeepLast(), o.Dtype, false)
		}
	}
	if trainSet.N < mnistBatch {
		return nil, fmt.Errorf("%d training examples is fewer than one minibatch of %d", trainSet.N, mnistBatch)
	}
	return task, nil
}
