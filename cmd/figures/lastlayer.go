package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"gonum.org/v1/gonum/stat"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks/bnn"
)

// lastLayer writes a Markdown table of how hot the last layers of MLP
// runs' chains sit: their positions' temperature in the posterior given
// each chain's hidden layers (bnn.Energy.LastLayerHeat) at the step of
// each run's checkpoint.json, over all directions, the stiffest fifth and
// the rest, beside the momenta's (the run's kinetic_temperature_wL, L the
// last layer, at its last evaluation). Each is the mean ± standard error
// over the chains (over the directories for the momenta).
func lastLayer(w io.Writer, args []string) error {
	fs := pflag.NewFlagSet("figures lastlayer", pflag.ContinueOnError)
	usage(fs, "lastlayer",
		cli.Arg{Name: "NAME=DIR", Usage: "a run of cmd/sample on an MLP task that has ended: its label (NAME) and output directory (DIR), read for config.json, checkpoint.json and metrics.csv"},
		cli.Arg{Name: "NAME=DIR1,DIR2,...", Usage: "a run repeated (seeds): the chains of all its directories together"})
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	rs, err := runs(fs.Args())
	if err != nil {
		return err
	}
	var rows []string
	for _, r := range rs {
		var all, stiff, rest, kinetic []float64
		var steps []string
		for _, dir := range strings.Split(r[1], ",") {
			heats, step, kin, err := lastLayerRun(dir)
			if err != nil {
				return err
			}
			for _, h := range heats {
				all, stiff, rest = append(all, h.Temperature), append(stiff, h.Stiff), append(rest, h.Rest)
			}
			kinetic = append(kinetic, kin)
			steps = append(steps, strconv.Itoa(step))
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, t := range all {
			lo, hi = math.Min(lo, t), math.Max(hi, t)
		}
		rows = append(rows, fmt.Sprintf("| %s | %d | %s | %s | %.3g–%.3g | %s | %s | %s |", r[0], len(all), strings.Join(steps, ", "),
			meanText(all), lo, hi, meanText(stiff), meanText(rest), meanText(kinetic)))
	}
	fmt.Fprintln(w, "| run | chains | step | positions' temperature | its range | stiffest fifth | the rest | momenta's temperature |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, row := range rows {
		fmt.Fprintln(w, row)
	}
	return nil
}

// meanText writes the mean of v ± its standard error ("—" for none, the
// value alone for one, NaN values left out).
func meanText(v []float64) string {
	var xs []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			xs = append(xs, x)
		}
	}
	switch len(xs) {
	case 0:
		return "—"
	case 1:
		return fmt.Sprintf("%.3g", xs[0])
	}
	m, sd := stat.MeanStdDev(xs, nil)
	return fmt.Sprintf("%.3g ± %.2g", m, sd/math.Sqrt(float64(len(xs))))
}

// lastLayerRun returns the last-layer heat of a run's chains at its
// checkpoint, the checkpoint's step, and the run's last-layer kinetic
// temperature at its last evaluation (NaN where metrics.csv lacks it).
func lastLayerRun(dir string) ([]bnn.LastLayerHeat, int, float64, error) {
	var config struct {
		Command string            `json:"command"`
		Flags   map[string]string `json:"flags"`
	}
	if err := readJSON(filepath.Join(dir, "config.json"), &config); err != nil {
		return nil, 0, 0, err
	}
	if config.Command != "sample" {
		return nil, 0, 0, cli.Usagef("%s is not a run of cmd/sample (its config.json is of %q)", dir, config.Command)
	}
	o := catalog.DefaultOptions
	o.DataDir = config.Flags["data-dir"]
	task, err := catalog.New(config.Flags["task"], o)
	if err != nil {
		return nil, 0, 0, err
	}
	energy, ok := task.Energy.(*bnn.Energy)
	if !ok {
		return nil, 0, 0, cli.Usagef("%s sampled task %q, not a Bayesian MLP", dir, config.Flags["task"])
	}
	var ckpt struct {
		State samplers.Snapshot `json:"state"`
	}
	path := filepath.Join(dir, "checkpoint.json")
	if err := readJSON(path, &ckpt); err != nil {
		return nil, 0, 0, err
	}
	k := len(ckpt.State.Theta) / energy.Dim()
	if k < 1 || k*energy.Dim() != len(ckpt.State.Theta) {
		return nil, 0, 0, fmt.Errorf("%s: %d positions are not a whole number of chains of task %s's %d parameters", path, len(ckpt.State.Theta), config.Flags["task"], energy.Dim())
	}
	heats, err := energy.LastLayerHeat(ckpt.State.Theta, k)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	kin := math.NaN()
	col := "kinetic_temperature_w" + strconv.Itoa(energy.Net().Layers())
	if cols, err := readCSV(filepath.Join(dir, "metrics.csv")); err == nil {
		if s := cols[col]; len(s) > 0 {
			if v, err := strconv.ParseFloat(s[len(s)-1], 64); err == nil {
				kin = v
			}
		}
	}
	return heats, ckpt.State.Steps, kin, nil
}
