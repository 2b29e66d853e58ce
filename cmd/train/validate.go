package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
	"github.com/metasgmcmc/metasgmcmc/train"
)

// validator runs a training set-up's validation protocol after every
// `every` epochs and after the last, writes validation.csv (a row per
// validation: the epoch, each run's figure and their mean, the score),
// writes each validated epoch's networks as validated/epoch-N.json and
// keeps the best-scoring epoch's in best.json, which becomes sampler.json
// at the end. A resumed run reads both back.
type validator struct {
	v      *catalog.Validation
	base   catalog.Options
	dir    string
	every  int
	last   int // the last epoch of the schedule
	rows   [][]string
	best   float64
	chosen int // the epoch of best.json; 0: none yet
}

const bestFile = "best.json"

// validatedDir holds the networks of every validated epoch, epoch-N.json,
// so that another choice, or another protocol, needs no training again.
const validatedDir = "validated"

func newValidator(v *catalog.Validation, base catalog.Options, dir string, every, last int) *validator {
	return &validator{v: v, base: base, dir: dir, every: every, last: last, best: math.Inf(1)}
}

// header is validation.csv's header.
func (val *validator) header() []string {
	return append(append([]string{"epoch"}, val.v.Names()...), "score")
}

// due reports whether epoch is validated.
func (val *validator) due(epoch int) bool {
	return epoch > 0 && (epoch%val.every == 0 || epoch == val.last)
}

// resume reads back the validations of a resumed run up to its checkpoint
// at epoch (later rows, from after the checkpoint, are dropped) and the
// best networks so far.
func (val *validator) resume(epoch int) error {
	f, err := os.Open(filepath.Join(val.dir, "validation.csv"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil || len(records) == 0 || len(records[0]) != len(val.header()) {
		return fmt.Errorf("cannot resume: %s is not the validation of this run (%v)", f.Name(), err)
	}
	for _, r := range records[1:] {
		e, err := strconv.Atoi(r[0])
		if err != nil {
			return fmt.Errorf("cannot resume: %s has a row for epoch %q", f.Name(), r[0])
		}
		if e > epoch {
			break
		}
		val.rows = append(val.rows, r)
		score, err := strconv.ParseFloat(r[len(r)-1], 64)
		if err != nil {
			return fmt.Errorf("cannot resume: %s has the score %q at epoch %d", f.Name(), r[len(r)-1], e)
		}
		if score < val.best {
			val.best, val.chosen = score, e
		}
	}
	if val.chosen > 0 {
		if _, err := os.Stat(filepath.Join(val.dir, bestFile)); err != nil {
			return fmt.Errorf("cannot resume: %s names epoch %d best but %s is missing: %v", f.Name(), val.chosen, bestFile, err)
		}
	}
	return nil
}

// revalidate scores the validated epochs of a resumed run up to its
// checkpoint at epoch again, under the current protocol: each epoch's
// networks come from validated/epoch-N.json, each run's figure from the
// run's validation.csv where that file has the run's column (a protocol
// with runs added runs only those), and the others are run. It rewrites
// validation.csv, the epochs' files (their validation score) and
// best.json, all at the end: an interrupted revalidation leaves the run
// as it was. log gets a line per epoch. A run with no validation yet has
// nothing to revalidate.
func (val *validator) revalidate(ctx context.Context, epoch int, log func(string)) error {
	f, err := os.Open(filepath.Join(val.dir, "validation.csv"))
	if errors.Is(err, os.ErrNotExist) {
		return nil // interrupted before its first validation: nothing to score again
	}
	if err != nil {
		return fmt.Errorf("cannot revalidate: %w", err)
	}
	records, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(records) == 0 || len(records[0]) < 2 || records[0][0] != "epoch" {
		return fmt.Errorf("cannot revalidate: %s is not a validation.csv (%v)", f.Name(), err)
	}
	header := records[0][1 : len(records[0])-1] // less epoch and score
	type scored struct {
		epoch   int
		trained *nnsghmc.Trained
		score   float64
	}
	var done []scored
	for _, r := range records[1:] {
		e, err := strconv.Atoi(r[0])
		if err != nil || len(r) != len(records[0]) {
			return fmt.Errorf("cannot revalidate: %s has a row %q", f.Name(), r)
		}
		if e > epoch {
			break
		}
		trained, err := nnsghmc.Load(val.epochFile(e))
		if err != nil {
			return fmt.Errorf("cannot revalidate epoch %d: %w", e, err)
		}
		// figures made another way (other steps, another figure) are run again
		known := map[string]float64{}
		if desc, _ := trained.Training["validation"].(string); val.v.SameFigures(desc) {
			for i, name := range header {
				if x, err := strconv.ParseFloat(r[1+i], 64); err == nil {
					known[name] = x
				}
			}
		}
		if trained.Training == nil {
			trained.Training = map[string]any{"validated_epoch": e}
		}
		res, err := val.v.Run(ctx, trained, val.base, known)
		if err != nil {
			return err
		}
		trained.Training["validation_runs"] = val.runValues(res, trained.Training["validation_runs"])
		val.rows = append(val.rows, row(e, res))
		done = append(done, scored{e, trained, res.Score})
		if res.Score < val.best {
			val.best, val.chosen = res.Score, e
		}
		log(fmt.Sprintf("revalidated epoch %d: %s %.4g%s", e, val.v.ScoreName(), res.Score, val.worst(res)))
	}
	if err := val.writeRows(); err != nil {
		return err
	}
	for _, d := range done {
		info := d.trained.Training
		d.trained.Training = val.annotate(info, "validated_epoch", d.epoch, d.score)
		if err := cli.WriteFile(val.epochFile(d.epoch), d.trained.Encode); err != nil {
			return err
		}
		if d.epoch == val.chosen {
			delete(info, "validated_epoch")
			d.trained.Training = val.annotate(info, "chosen_epoch", d.epoch, d.score)
			if err := cli.WriteFile(filepath.Join(val.dir, bestFile), d.trained.Encode); err != nil {
				return err
			}
		}
	}
	return nil
}

// row is validation.csv's row of a validation after epoch: the epoch,
// each run's figure and the score, in full precision.
func row(epoch int, res *catalog.ValidationResult) []string {
	r := []string{strconv.Itoa(epoch)}
	for _, f := range res.Figures {
		r = append(r, strconv.FormatFloat(f, 'g', -1, 64))
	}
	return append(r, strconv.FormatFloat(res.Score, 'g', -1, 64))
}

// epochFile is the path of validated/epoch-N.json.
func (val *validator) epochFile(epoch int) string {
	return filepath.Join(val.dir, validatedDir, fmt.Sprintf("epoch-%d.json", epoch))
}

// writeRows writes validation.csv.
func (val *validator) writeRows() error {
	return cli.WriteFile(filepath.Join(val.dir, "validation.csv"), func(w io.Writer) error {
		c := csv.NewWriter(w)
		if err := c.Write(val.header()); err != nil {
			return err
		}
		if err := c.WriteAll(val.rows); err != nil {
			return err
		}
		return c.Error()
	})
}

// pending reports whether the epoch the trainer stands at is due and not
// yet validated (a run interrupted during its validation).
func (val *validator) pending(epoch int) bool {
	if !val.due(epoch) {
		return false
	}
	if n := len(val.rows); n > 0 {
		if e, _ := strconv.Atoi(val.rows[n-1][0]); e >= epoch {
			return false
		}
	}
	return true
}

// validate runs the protocol on the trainer's current networks after
// epoch, records the row and, when the score is the best so far, writes
// best.json. It returns the line to log.
func (val *validator) validate(ctx context.Context, tr *train.Trainer, info map[string]any, epoch int) (string, error) {
	trained := tr.Trained()
	res, err := val.v.Run(ctx, trained, val.base, nil)
	if err != nil {
		return "", err
	}
	val.rows = append(val.rows, row(epoch, res))
	if err := val.writeRows(); err != nil {
		return "", err
	}
	runs := val.runValues(res, nil)
	trained.Training = val.annotate(info, "validated_epoch", epoch, res.Score)
	trained.Training["validation_runs"] = runs
	if err := os.MkdirAll(filepath.Join(val.dir, validatedDir), 0o755); err != nil {
		return "", err
	}
	if err := cli.WriteFile(val.epochFile(epoch), trained.Encode); err != nil {
		return "", err
	}
	line := fmt.Sprintf("validation after epoch %d: %s %.4g%s", epoch, val.v.ScoreName(), res.Score, val.worst(res))
	if res.Score < val.best {
		val.best, val.chosen = res.Score, epoch
		trained.Training = val.annotate(info, "chosen_epoch", epoch, res.Score)
		trained.Training["validation_runs"] = runs
		if err := cli.WriteFile(filepath.Join(val.dir, bestFile), trained.Encode); err != nil {
			return "", err
		}
		line += " (best so far)"
	}
	return line, nil
}

// runValues returns each run's metrics by the run's name, for the
// epoch's file: res's, and for a run whose figure was known, its metrics
// in earlier, the record of an earlier validation of the same networks
// (nil: none).
func (val *validator) runValues(res *catalog.ValidationResult, earlier any) map[string]any {
	old, _ := earlier.(map[string]any)
	out := map[string]any{}
	for i, name := range val.v.Names() {
		switch {
		case res.Values[i] != nil:
			m := map[string]any{}
			for k, x := range res.Values[i] {
				m[k] = jsonFloat(x)
			}
			out[name] = m
		case old[name] != nil:
			out[name] = old[name]
		}
	}
	return out
}

// jsonFloat is x for a sampler file's training record: x itself when
// finite, else its name ("+Inf", "NaN"), which JSON has no number for. A
// validation run whose chains diverged, or whose predictive gave a
// held-out point probability 0, scores +Inf.
func jsonFloat(x float64) any {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return x
}

// worst names the run with the largest figure and its metrics, as
// " (target-seed-16-scale-0.6/seed-1: ess 51.5, kl 0.021)", or "" when
// its metrics are not at hand.
func (val *validator) worst(res *catalog.ValidationResult) string {
	i := 0
	for j, f := range res.Figures {
		if f > res.Figures[i] {
			i = j
		}
	}
	if len(res.Figures) == 0 || res.Values[i] == nil {
		return ""
	}
	var parts []string
	for _, m := range slices.Sorted(maps.Keys(res.Values[i])) {
		parts = append(parts, fmt.Sprintf("%s %.4g", m, res.Values[i][m]))
	}
	return fmt.Sprintf(" (%s: %s)", val.v.Names()[i], strings.Join(parts, ", "))
}

// annotate returns info with the epoch, under the key given, and its
// validation.
func (val *validator) annotate(info map[string]any, key string, epoch int, score float64) map[string]any {
	out := map[string]any{}
	for k, v := range info {
		out[k] = v
	}
	out[key] = epoch
	out["validation_score"] = jsonFloat(score)
	out["validation"] = val.v.Describe()
	return out
}

// chosenSampler returns the best epoch's networks, or nil when no
// validation has scored finitely (every one lost a chain).
func (val *validator) chosenSampler() (*nnsghmc.Trained, error) {
	if val.chosen == 0 {
		return nil, nil
	}
	return nnsghmc.Load(filepath.Join(val.dir, bestFile))
}

// validateFile is train --validate: it scores the trained sampler in
// o.validate on the task's validation protocol and prints a line per run,
// its figure and metrics, and the score to w.
func validateFile(ctx context.Context, fs *pflag.FlagSet, o *options, w io.Writer) error {
	for _, name := range []string{"resume", "revalidate", "out"} {
		if fs.Changed(name) {
			return cli.Usagef("--validate scores a sampler file and writes nothing: drop --%s", name)
		}
	}
	task, err := o.trainingTask(fs)
	if err != nil {
		return err
	}
	v := protocol(task)
	if v == nil {
		return cli.Usagef("--validate: task %s has no validation protocol (those with one: %s)", o.task, strings.Join(catalog.ValidationProtocols(), "; "))
	}
	tr, err := nnsghmc.Load(o.validate)
	if err != nil {
		return fmt.Errorf("--validate: %w", err)
	}
	res, err := v.Run(ctx, tr, o.target, nil)
	if err != nil {
		return err
	}
	for i, name := range v.Names() {
		var ms []string
		for _, k := range slices.Sorted(maps.Keys(res.Values[i])) {
			ms = append(ms, fmt.Sprintf("%s %.6g", k, res.Values[i][k]))
		}
		fmt.Fprintf(w, "%s: %.6g (%s)\n", name, res.Figures[i], strings.Join(ms, ", "))
	}
	_, err = fmt.Fprintf(w, "score (%s): %.6g\n", v.ScoreName(), res.Score)
	return err
}
