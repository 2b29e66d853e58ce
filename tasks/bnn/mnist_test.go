package bnn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
	"github.com/metasgmcmc/metasgmcmc/tasks/mnist"
)

var mnistOnce struct {
	sync.Once
	train, test *mnist.Set
	err         error
}

// loadMNIST returns the MNIST splits from $METASGMCMC_DATA (a relative
// directory is also tried relative to the module root), and skips the test
// when the variable is unset or the files are absent.
func loadMNIST(t *testing.T) (train, test *mnist.Set) {
	t.Helper()
	dir := os.Getenv(datadir.EnvVar)
	if dir == "" {
		datatest.Skip(t, fmt.Sprintf("the MNIST tests read $%s, which is not set", datadir.EnvVar))
	}
	if !filepath.IsAbs(dir) {
		if _, err := os.Stat(filepath.Join(dir, mnist.Subdir)); err != nil {
			dir = filepath.Join("..", "..", dir) // the module root, from tasks/bnn
		}
	}
	mnistOnce.Do(func() { mnistOnce.train, mnistOnce.test, mnistOnce.err = mnist.Load(dir) })
	var missing *datadir.MissingError
	if errors.As(mnistOnce.err, &missing) {
		datatest.Skip(t, mnistOnce.err.Error())
	}
	if mnistOnce.err != nil {
		t.Fatal(mnistOnce.err)
	}
	return mnistOnce.train, mnistOnce.test
}

// TestMNISTEnergyMatchesOracle checks the energy on real MNIST minibatches
// against the oracle, for the paper's training networks on all digits and
// on digits 0–4.
func TestMNISTEnergyMatchesOracle(t *testing.T) {
	train, _ := loadMNIST(t)
	const k, batch = 2, 9
	for _, tc := range []struct {
		name string
		net  MLP
		data *mnist.Set
	}{
		{"NT 784-20-10 all digits", NTTrain, train},
		{"Data 784-20-5 digits 0-4", DataTrain, train.Subset(0, 1, 2, 3, 4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := MNIST(tc.data)
			e, err := New(tc.net, data, batch)
			if err != nil {
				t.Fatal(err)
			}
			if e.DataSize() != tc.data.N || e.Dim() != tc.net.Dim() {
				t.Errorf("N = %d, D = %d; want %d, %d", e.DataSize(), e.Dim(), tc.data.N, tc.net.Dim())
			}
			ev, err := tasks.Compile(e, k, graph.Float64)
			if err != nil {
				t.Fatal(err)
			}
			defer ev.Close()
			theta := tc.net.Init(rand.New(rand.NewPCG(1, 1)), k, 0.2)
			rng, twin := rand.New(rand.NewPCG(9, 9)), rand.New(rand.NewPCG(9, 9))
			got := samplers.NewEval(tc.net.Dim(), k)
			if err := ev.Evaluate(rng, theta, got); err != nil {
				t.Fatal(err)
			}
			x := make([]float64, batch*mnist.Dim)
			y := make([]int, batch)
			if _, err := mustBatcher(t, data, batch).next(twin, x, y); err != nil {
				t.Fatal(err)
			}
			u := make([]float64, k)
			grad := make([]float64, len(theta))
			newOracle[float64](tc.net, k, batch).eval(theta, x, y, float64(tc.data.N), u, grad)
			if d := maxRelDiff(got.U, u); d > 1e-9 {
				t.Errorf("U %v, oracle %v (relative difference %.3g)", got.U, u, d)
			}
			if d := maxRelDiff(got.Grad, grad); d > 1e-9 {
				t.Errorf("∇U differs from the oracle by %.3g", d)
			}
		})
	}
}

// TestMNISTPredictAtInit checks the evaluation protocol on the real test
// set: chains started as the authors start them (θ ~ 0.01·N(0, I)) predict
// almost uniformly, so the summed NLL is close to N_test·log(classes), and
// the monitor reports the same values.
func TestMNISTPredictAtInit(t *testing.T) {
	_, test := loadMNIST(t)
	const k = 3
	for _, tc := range []struct {
		net  MLP
		data *mnist.Set
	}{
		{NTTest, test},
		{DataTest, test.Subset(5, 6, 7, 8, 9)},
	} {
		data := MNIST(tc.data)
		theta := tc.net.Init(rand.New(rand.NewPCG(2, 2)), k, 0.01)
		pr, err := Predict(tc.net, theta, k, data)
		if err != nil {
			t.Fatal(err)
		}
		uniform := float64(tc.data.N) * math.Log(float64(tc.data.Classes))
		t.Logf("%v on %d test images at init: error %.4f, NLL %.1f (uniform %.1f)", tc.net.Sizes, tc.data.N, pr.Error, pr.NLL, uniform)
		if math.Abs(pr.NLL-uniform) > 0.01*uniform || pr.Error < 0.5 {
			t.Errorf("%v on %d test images: NLL %v (uniform %v), error %v", tc.net.Sizes, tc.data.N, pr.NLL, uniform, pr.Error)
		}
		m, err := NewMonitor(tc.net, k, data, MonitorConfig{Batch: 1000, Float32: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Observe(1, theta); err != nil {
			t.Fatal(err)
		}
		ms, err := m.Summary()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(ms[1].Value-pr.NLL) > 1e-4*pr.NLL || math.Abs(ms[0].Value-pr.Error) > 10.0/float64(tc.data.N) {
			t.Errorf("float32 monitor %v, float64 prediction error %v NLL %v", ms, pr.Error, pr.NLL)
		}
		m.Close()
	}
}
