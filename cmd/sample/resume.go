package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers"
	"github.com/metasgmcmc/metasgmcmc/tasks"
)

// The files of a run that --resume continues.
const (
	checkpointFile = "checkpoint.json"
	configFile     = cli.ConfigFile
	metricsFile    = "metrics.csv"
	summaryFile    = "summary.json"
)

// checkpointEvery is the least time between the checkpoints a run writes at
// its evaluations after the first (the last evaluation, an early stop and an
// interruption always write one): the state of 20 chains of mnist-nt's
// NNSGHMC is 91 MB of JSON and takes about a second to write, some
// fifteen steps' time.
const checkpointEvery = 5 * time.Minute

// checkpointVersion is the version of the checkpoint format.
const checkpointVersion = 1

// checkpoint is the whole state of a run after a step, written at every
// evaluation point and when a signal stops the run: resuming from it gives
// the metrics of an uninterrupted run, bit for bit (but the seconds).
// The kernel's settings that a schedule changes (the warm-up's step size)
// are functions of the step, replayed on resume; the early-stopping state
// is rebuilt from the metrics rows; the monitor from the positions
// (tasks.Resumer).
type checkpoint struct {
	Version int                `json:"version"`
	State   *samplers.Snapshot `json:"state"`
	// RNG is the state of the run's random source, a *rand.PCG.
	RNG []byte `json:"rng"`
	// Batches is the minibatch order of the target, if it has one.
	Batches json.RawMessage `json:"batches,omitempty"`
	// Rows is the number of rows of metrics.csv written up to the state.
	Rows int `json:"rows"`
	// Seconds is the run's time so far.
	Seconds float64 `json:"seconds"`
	// TraceDraws is the number of draws of trace.bin written up to the
	// state (--trace-every).
	TraceDraws int `json:"trace_draws,omitempty"`
	// Warnings are the warnings of the run so far, in order, and Warned
	// the keys of those its kernel gives once (samplers.WarnsOnce).
	Warnings []string `json:"warnings,omitempty"`
	Warned   []string `json:"warned,omitempty"`
}

// validate checks the checkpoint's fields on their own, and against the
// run's dimension d and chains k; the error names the first
// bad field as in the JSON.
func (c *checkpoint) validate(d, k int) error {
	switch {
	case c.Version != checkpointVersion:
		return fmt.Errorf("version is %d; this program reads version %d (continue the run with the program that wrote it)", c.Version, checkpointVersion)
	case c.State == nil:
		return errors.New("state is missing")
	case c.State.Steps < 0:
		return fmt.Errorf("state.steps is %d, want ≥ 0", c.State.Steps)
	case len(c.State.Theta) != d*k:
		return fmt.Errorf("state.theta has %d values, want %d (%d dimensions × %d chains)", len(c.State.Theta), d*k, d, k)
	case c.State.P != nil && len(c.State.P) != d*k:
		return fmt.Errorf("state.p has %d values, want %d", len(c.State.P), d*k)
	case c.Rows < 0 || c.Rows > c.State.Steps:
		return fmt.Errorf("rows is %d, want 0 to %d (state.steps)", c.Rows, c.State.Steps)
	case !(c.Seconds >= 0):
		return fmt.Errorf("seconds is %v, want ≥ 0", c.Seconds)
	case c.TraceDraws < 0 || c.TraceDraws > c.State.Steps:
		return fmt.Errorf("trace_draws is %d, want 0 to %d (state.steps)", c.TraceDraws, c.State.Steps)
	}
	if err := new(rand.PCG).UnmarshalBinary(c.RNG); err != nil {
		return fmt.Errorf("rng: %v", err)
	}
	if len(c.Batches) > 0 {
		var s struct {
			Perm []int `json:"perm"`
			Size int   `json:"size"`
		}
		if err := json.Unmarshal(c.Batches, &s); err != nil {
			return fmt.Errorf("batches: %v", err)
		}
		b, err := samplers.NewBatches(len(s.Perm), s.Size)
		if err == nil {
			err = b.UnmarshalJSON(c.Batches)
		}
		if err != nil {
			return fmt.Errorf("batches: %v", err)
		}
	}
	return nil
}

// damaged says what to do about a run's damaged file.
const damaged = "the file is damaged or was edited: restore it from a copy, or start the run afresh into another --out"

// readCheckpoint reads the checkpoint of the run in dir.
func readCheckpoint(dir string) (*checkpoint, error) {
	path := filepath.Join(dir, checkpointFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, cli.Usagef("cannot read checkpoint %s: %v; give --resume the output directory of a run (it writes %s at every evaluation and when interrupted)", path, err, checkpointFile)
	}
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, cli.Usagef("checkpoint %s is not valid JSON of a checkpoint (%v); %s", path, err, damaged)
	}
	var fields map[string]json.RawMessage
	json.Unmarshal(b, &fields)
	switch {
	case fields == nil:
		return nil, cli.Usagef("checkpoint %s is not valid: it holds %.20s, not an object with a checkpoint's fields; %s", path, bytes.TrimSpace(b), damaged)
	case fields["version"] == nil:
		return nil, cli.Usagef("checkpoint %s is not valid: version is missing; %s", path, damaged)
	}
	return &c, nil
}

// targetBatches returns the target's minibatch order, or nil.
func targetBatches(t samplers.Target) *samplers.Batches {
	if b, ok := t.(samplers.Batched); ok {
		return b.Batches()
	}
	return nil
}

// newCheckpoint returns the run's checkpoint after the state st.
func newCheckpoint(st *samplers.State, pcg *rand.PCG, t samplers.Target, rows int, seconds float64) (*checkpoint, error) {
	snap, err := samplers.Save(st)
	if err != nil {
		return nil, err
	}
	rng, err := pcg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	c := &checkpoint{Version: checkpointVersion, State: snap, RNG: rng, Rows: rows, Seconds: seconds}
	if b := targetBatches(t); b != nil {
		if c.Batches, err = json.Marshal(b); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// writeCheckpoint writes c atomically into dir.
func writeCheckpoint(dir string, c *checkpoint) error {
	return cli.WriteFile(filepath.Join(dir, checkpointFile), func(w io.Writer) error {
		return json.NewEncoder(w).Encode(c)
	})
}

// restore puts the checkpoint's random state, chains and minibatch order
// back: it returns the state to continue from.
func (c *checkpoint) restore(kernel samplers.Kernel, pcg *rand.PCG, t samplers.Target) (*samplers.State, error) {
	if err := pcg.UnmarshalBinary(c.RNG); err != nil {
		return nil, fmt.Errorf("rng: %w", err)
	}
	b := targetBatches(t)
	switch {
	case b == nil && len(c.Batches) > 0:
		return nil, errors.New("batches: the checkpoint has a minibatch order, the task's target draws none")
	case b != nil && len(c.Batches) == 0:
		return nil, errors.New("batches: missing, and the task's target draws minibatches")
	case b != nil:
		if err := b.UnmarshalJSON(c.Batches); err != nil {
			return nil, fmt.Errorf("batches: %w", err)
		}
	}
	st, err := samplers.Restore(kernel, c.State)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	return st, nil
}

// readRunMetrics reads the first n rows of the run's metrics.csv, which must
// be evaluations up to step, with its header. What follows them, rows of
// evaluations after the checkpoint and a row torn by a crash, is dropped:
// dropped says what, for a notice, or is "".
func readRunMetrics(dir string, n, step int) (header []string, rows [][]string, dropped string, err error) {
	path := filepath.Join(dir, metricsFile)
	if n == 0 {
		return nil, nil, "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, "", cli.Usagef("cannot resume %s: %v; the checkpoint follows %d rows of it", dir, err, n)
	}
	r := csv.NewReader(bytes.NewReader(b))
	var records [][]string
	for len(records) < 1+n {
		rec, err := r.Read()
		if err == io.EOF {
			err = fmt.Errorf("%d rows, fewer than the %d that %s follows", max(len(records)-1, 0), n, checkpointFile)
		}
		if err != nil {
			return nil, nil, "", cli.Usagef("cannot resume %s: %s: %v; %s", dir, path, err, damaged)
		}
		records = append(records, rec)
	}
	header, rows = records[0], records[1:]
	if len(header) < 2 || header[0] != "step" || header[1] != "seconds" {
		return nil, nil, "", cli.Usagef("cannot resume %s: %s has the header %q, want step, seconds and the metrics; %s", dir, path, header, damaged)
	}
	last := 0
	for i, r := range rows {
		s, err := strconv.Atoi(r[0])
		if err != nil || s <= last || s > step {
			return nil, nil, "", cli.Usagef("cannot resume %s: %s: row %d has step %q, want steps rising up to the checkpoint's %d; %s", dir, path, i+1, r[0], step, damaged)
		}
		last = s
		for j := 1; j < len(r); j++ {
			if _, err := strconv.ParseFloat(r[j], 64); err != nil {
				return nil, nil, "", cli.Usagef("cannot resume %s: %s: row %d, %s: %v; %s", dir, path, i+1, header[j], err, damaged)
			}
		}
	}
	if tail := b[r.InputOffset():]; len(tail) > 0 {
		lines := bytes.Count(tail, []byte("\n"))
		torn := len(tail) - (bytes.LastIndexByte(tail, '\n') + 1)
		var what []string
		if lines > 0 {
			what = append(what, fmt.Sprintf("%d line(s) written after the checkpoint at step %d", lines, step))
		}
		if torn > 0 {
			what = append(what, fmt.Sprintf("a torn last line of %d bytes", torn))
		}
		dropped = fmt.Sprintf("%s: dropped %s", path, strings.Join(what, " and "))
	}
	return header, rows, dropped, nil
}

// replayEarlyStop rebuilds the early-stopping state from the metrics rows
// and reports whether the last of them stopped the run.
func replayEarlyStop(e *earlyStop, header []string, rows [][]string, patience int) bool {
	stopped := false
	for _, r := range rows {
		step, _ := strconv.Atoi(r[0])
		var ms []tasks.Metric
		for j := 2; j < len(header); j++ {
			v, _ := strconv.ParseFloat(r[j], 64)
			ms = append(ms, tasks.Metric{Name: header[j], Value: v})
		}
		stopped = e.observe(step, ms, patience)
	}
	return stopped
}

// firstRunaway returns the step of the first of rows (metrics.csv's, under
// header) whose hottest chain is above samplers.RunawayTemperature, the
// evaluation that warned of it, or -1 if none is.
func firstRunaway(header []string, rows [][]string) int {
	col := slices.Index(header, metricTemperatureMax)
	if col < 0 {
		return -1
	}
	for _, r := range rows {
		if v, err := strconv.ParseFloat(r[col], 64); err == nil && !(v <= samplers.RunawayTemperature) {
			step, _ := strconv.Atoi(r[0])
			return step
		}
	}
	return -1
}

// checkFinished refuses to resume a run that has finished (its summary.json
// has no "error") unless steps extends it, and one that stopped early.
func checkFinished(dir string, done, steps int) error {
	b, err := os.ReadFile(filepath.Join(dir, summaryFile))
	if err != nil {
		return nil // interrupted before writing it
	}
	var s map[string]any
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	if _, failed := s["error"]; failed {
		return nil
	}
	if stopped, _ := s["stopped_early"].(bool); stopped {
		return cli.Usagef("the run in %s stopped early at step %d (--patience): it cannot be resumed; start a new run into another --out", dir, done)
	}
	if steps <= done {
		return cli.Usagef("the run in %s has finished its %d steps; give --steps larger than %d to extend it", dir, done, done)
	}
	return nil
}

// resumption says how a run resumes with its flags: --steps extends it;
// --quiet and the data directory do not change its result.
var resumption = cli.RunFlags{
	Files:   []string{"meta", "target-cov"},
	Free:    map[string]bool{"steps": true, "quiet": true, "data-dir": true, "download": true},
	Own:     map[string]bool{"resume": true, "out": true, "force": true, cli.FlagFileFlag: true},
	Change:  "only --steps may change, to extend it",
	Damaged: damaged,
}

// runFlags are the resolved flags of the run, as summary.json and
// config.json record them: a resumed run's are those of the run it
// continues (but --steps), without --resume.
func runFlags(fs *pflag.FlagSet) map[string]string {
	m := cli.Resolved(fs)
	delete(m, "resume")
	return m
}
