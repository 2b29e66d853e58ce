// Command convert turns the authors' pretrained NNSGHMC samplers (their
// PyTorch checkpoints, decoded to JSON) into this project's trained-sampler
// file, so that they run through cmd/sample like a sampler of ours:
//
//	convert -sampler nt -out runs/authors/nt.json
//	sample --flagfile experiments/mnist-nt/nnsghmc.flags --meta runs/authors/nt.json ...
//
// The samplers are the toy's (trained on the 10-D Gaussian), the MNIST NT/AF
// one (trained on the 784-20-10 ReLU network) and the MNIST Data one
// (trained on digits 0-4). The settings that go with the weights (input and
// output scales, α, clamps, the training dimension) are those of the task
// each was trained on; the weights are the authors', never a result of ours.
//
// With --trace it converts instead a run's trace stream (sample
// --trace-every writes RUN/trace.bin) to ArviZ InferenceData in netCDF-4,
// which Python opens with arviz.from_netcdf; this needs a build with the
// tag netcdf and Debian's libnetcdf-dev:
//
//	go run -tags netcdf ./cmd/convert --trace RUN/trace.bin --out RUN/trace.nc
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/samplers/trace"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
)

func main() { cli.Exit("convert", run(context.Background(), os.Args[1:])) }

// authorsSampler is one of the authors' pretrained samplers: the names of
// its two checkpoints (%s is Q or D) and the task it was trained on.
type authorsSampler struct {
	name string
	task string
}

var authors = map[string]authorsSampler{
	"toy":  {name: "Toy Example/saveModel/%s_state_100_dim_10_clamp_5.0_range_6.0_time_20180413-1226", task: "gaussian10"},
	"nt":   {name: "BNN_MNIST/%s_state_batch_500_baseline_50D_70G_step_0.007_40ep_broad_0.2", task: "mnist-relu"},
	"data": {name: "BNN_MNIST/%s_state_batch_500_baseline_50D_70G_step_0.007_40ep_broad_0.2_datasetGen", task: "mnist-data-train"},
}

// defaultIn is where the authors' checkpoints are, beside the data.
func defaultIn(dataDir string) string {
	return filepath.Join(datadir.Dir(dataDir), "..", "reference", "authors-samplers", "authors-samplers.json")
}

func run(_ context.Context, args []string) error {
	fs := pflag.NewFlagSet("convert", pflag.ContinueOnError)
	var in, out, which, dataDir, stream string
	fs.StringVar(&which, "sampler", "", "which of the authors' samplers: toy, nt (MNIST NT/AF) or data (MNIST Data)")
	fs.StringVar(&in, "in", "", "the authors' checkpoints as JSON (default DATA_DIR/../reference/authors-samplers/authors-samplers.json)")
	fs.StringVar(&out, "out", "", "the trained-sampler file to write (with --trace: the netCDF file)")
	fs.StringVar(&dataDir, "data-dir", "", "data directory (default: $METASGMCMC_DATA, else ./data); the MNIST samplers read it for the data size N")
	fs.StringVar(&stream, "trace", "", "instead, convert the trace stream FILE of sample --trace-every (RUN/trace.bin) to ArviZ InferenceData in netCDF-4 at --out (a build with -tags netcdf)")
	cli.SetUsage(fs, cli.Help{Name: "convert", Synopsis: "convert --sampler toy|nt|data --out FILE [flags], or convert --trace RUN/trace.bin --out FILE.nc",
		Description: "turns the authors' pretrained NNSGHMC samplers into this project's trained-sampler file, for sample --meta, or a run's trace into ArviZ's netCDF"})
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	if stream != "" {
		return convertTrace(fs, stream, out)
	}
	a, ok := authors[which]
	if !ok {
		return cli.Usagef("--sampler %q: want toy, nt or data", which)
	}
	if out == "" {
		return cli.Usagef("--out: name the trained-sampler file to write")
	}
	if in == "" {
		in = defaultIn(dataDir)
	}
	task, err := catalog.New(a.task, catalog.Options{DataDir: dataDir, TargetSeed: 1, TargetScale: catalog.DefaultOptions.TargetScale})
	if err != nil {
		return cli.Usagef("%v", err)
	}
	f, err := convert(in, a, task)
	if err != nil {
		return err
	}
	return cli.WriteFile(out, f.Encode)
}

// convert reads the checkpoints of sampler a from the file in and gives
// them the settings of the task they were trained on.
func convert(in string, a authorsSampler, task *catalog.Task) (*nnsghmc.Trained, error) {
	r, err := os.Open(in)
	if err != nil {
		return nil, cli.Usagef("cannot read the authors' checkpoints: %v (give --in FILE)", err)
	}
	defer r.Close()
	states, err := ReadTorchStates(r)
	if err != nil {
		return nil, cli.Usagef("%s: %v", in, err)
	}
	tr := task.Training
	t := &nnsghmc.Trained{
		Inputs: nnsghmc.Inputs{EnergyScale: tr.NN.EnergyScale, GradScale: tr.NN.GradScale, MomentumScale: tr.NN.MomentumScale},
		DScale: tr.NN.DScale,
		Domain: nnsghmc.Domain{Dim: task.Dim, StepSize: nnsghmc.Range{Min: tr.StepSize, Max: tr.StepSize}, Friction: nnsghmc.FrictionExplicit}, // the authors train with the explicit step
	}
	names := map[string]string{}
	for _, net := range []string{"Q", "D"} {
		name := fmt.Sprintf(a.name, net)
		state, ok := states[name]
		if !ok {
			return nil, cli.Usagef("%s has no state dict %q (it holds %s)", in, name, strings.Join(states.Names(), ", "))
		}
		w, err := TorchMLP(state)
		if err != nil {
			return nil, cli.Usagef("%s: %s: %v", in, name, err)
		}
		names[net] = name
		if net == "Q" {
			t.Q = w
		} else {
			t.D = w
		}
	}
	if err := t.Validate(); err != nil {
		return nil, cli.Usagef("%s: %v", in, err)
	}
	t.Training = map[string]any{
		"task":       task.Name,
		"source":     "the authors' pretrained sampler (github.com/WenboGong/MetaSGMCMC), converted by cmd/convert: not trained by this project",
		"f_q":        names["Q"],
		"f_d":        names["D"],
		"train_dim":  task.Dim,
		"train_step": tr.StepSize,
	}
	return t, nil
}

// convertTrace writes the trace stream at stream as ArviZ InferenceData to
// out, atomically.
func convertTrace(fs *pflag.FlagSet, stream, out string) error {
	for _, f := range []string{"sampler", "in", "data-dir"} {
		if fs.Changed(f) {
			return cli.Usagef("--%s is for the authors' samplers; --trace converts a run's trace alone", f)
		}
	}
	if out == "" {
		return cli.Usagef("--out: name the netCDF file to write")
	}
	r, err := trace.Open(stream) // a stream that cannot be read is a usage error
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if !r.Finished() {
		torn := ""
		if r.Torn() > 0 {
			torn = fmt.Sprintf(" (and drops a torn last draw of %d bytes)", r.Torn())
		}
		fmt.Fprintf(os.Stderr, "convert: %s is unfinished, its run still going or stopped without closing it: converting its %d complete draws%s\n", stream, r.Draws(), torn)
	}
	r.Close()
	if !trace.NetCDF {
		return trace.ErrNoNetCDF
	}
	return trace.ConvertFile(out, stream, time.Now())
}
