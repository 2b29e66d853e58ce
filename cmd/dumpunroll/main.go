// Command dumpunroll runs one meta-training unroll of a task's training
// set-up and writes what it saw and the meta-gradient it produced, so that
// another implementation fed the same inputs (the authors' PyTorch code,
// experiments/authors-gradient) can be compared with ours number for
// number:
//
//	dumpunroll --task mnist-relu --meta runs/authors/nt.json --steps 20 --out DIR
//
// DIR/unroll.json holds the settings, the minibatch order (for tasks with
// one) and the meta-gradient of each loss; DIR/theta0.f64, DIR/theta.f64
// (θ_t at the start of every step) and DIR/noise.f64 (ξ_t of every step)
// hold float64 little-endian values, chain-major (chain c's coordinate i
// at c·D + i, one step after another).
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/train"
)

func main() { cli.Exit("dumpunroll", run(context.Background(), os.Args[1:])) }

func run(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("dumpunroll", pflag.ContinueOnError)
	var task, meta, out, dataDir string
	var steps int
	var seed uint64
	var exact bool
	fs.StringVar(&task, "task", "mnist-relu", "a task with a meta-training set-up")
	fs.StringVar(&meta, "meta", "", "a trained-sampler file whose networks to unroll (default: random networks from --seed)")
	fs.IntVar(&steps, "steps", 20, "the unroll's length")
	fs.Uint64Var(&seed, "seed", 15, "seed of the initial state, the minibatches and the noise")
	fs.BoolVar(&exact, "exact-step", false, "unroll the sampler's own step even where the set-up copies the authors' training step (train.Config.AuthorsStep)")
	fs.StringVar(&out, "out", "", "directory to write")
	fs.StringVar(&dataDir, "data-dir", "", "data directory (default: $METASGMCMC_DATA, else ./data)")
	cli.SetUsage(fs, cli.Help{Name: "dumpunroll", Synopsis: "dumpunroll --out DIR [flags]",
		Description: "runs one meta-training unroll in float64 and writes its inputs and meta-gradient, to compare with another implementation"})
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	if out == "" {
		return cli.Usagef("--out: name the directory to write")
	}
	if steps < 1 {
		return cli.Usagef("--steps %d: want a positive number of steps", steps)
	}
	o := catalog.DefaultOptions
	o.DataDir = dataDir
	tk, err := catalog.New(task, o)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	t := tk.Training
	if t == nil {
		return cli.Usagef("task %q has no meta-training set-up", task)
	}
	cfg := t.Config
	cfg.Epochs, cfg.SubEpochs, cfg.Steps = 1, 0, steps
	cfg.InChain = nil // one loss: the cross-chain loss
	if exact {
		cfg.AuthorsStep = false
	}
	if err := cfg.Validate(); err != nil {
		return cli.Usagef("%v", err)
	}
	start, settings, err := t.Sampler(t.StepSize, seed, meta)
	if err != nil {
		return cli.Usagef("--meta: %v", err)
	}
	prob, err := tk.TrainingProblem(cfg.Chains)
	if err != nil {
		return err
	}
	target := prob.Target
	tr, err := train.New(cfg, prob, start, settings, seed)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	var got *train.Trace
	tr.SetTrace(func(x *train.Trace) { got = x })
	if err := tr.Run(ctx, nil, nil); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	k := cfg.Chains
	for name, rows := range map[string][][]float64{"theta0.f64": {got.Theta0}, "theta.f64": got.Theta, "noise.f64": got.Noise} {
		if err := cli.WriteFile(filepath.Join(out, name), func(w io.Writer) error { return writeChainMajor(w, rows, k) }); err != nil {
			return err
		}
	}
	summary := map[string]any{"task": task, "meta": meta, "seed": seed, "steps": steps, "chains": k, "dim": target.Dim(),
		"authors_step": cfg.AuthorsStep, "step_size": settings.StepSize(1), "alpha": settings.Alpha, "window": cfg.Window,
		"cross_every": cfg.Cross.Every, "q_params": len(start.Q.Params()), "grad": got.Grad[0], "code": cli.Version()}
	if b, ok := target.(samplers.Batched); ok && b.Batches() != nil {
		raw, err := json.Marshal(b.Batches())
		if err != nil {
			return err
		}
		var order struct {
			Perm []int `json:"perm"`
			Size int   `json:"size"`
		}
		if err := json.Unmarshal(raw, &order); err != nil {
			return err
		}
		if !cfg.DataPerUnroll || steps*order.Size > len(order.Perm) {
			return cli.Usagef("the minibatches of %d steps are not one data epoch's order (want a set-up with a fresh data epoch per unroll and at most %d steps)", steps, len(order.Perm)/order.Size)
		}
		summary["perm"], summary["batch"] = order.Perm, order.Size
	}
	return cli.WriteJSON(filepath.Join(out, "unroll.json"), summary)
}

// writeChainMajor writes coordinate-major vectors of k chains chain-major,
// as float64 little-endian.
func writeChainMajor(w io.Writer, rows [][]float64, k int) error {
	for _, x := range rows {
		d := len(x) / k
		b := make([]byte, 8*len(x))
		for c := 0; c < k; c++ {
			for i := 0; i < d; i++ {
				binary.LittleEndian.PutUint64(b[8*(c*d+i):], math.Float64bits(x[i*k+c]))
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
