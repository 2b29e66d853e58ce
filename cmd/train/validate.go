package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

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
	res, err := val.v.Run(ctx, trained, val.base)
	if err != nil {
		return "", err
	}
	row := []string{strconv.Itoa(epoch)}
	for _, f := range res.Figures {
		row = append(row, strconv.FormatFloat(f, 'g', 6, 64))
	}
	row = append(row, strconv.FormatFloat(res.Score, 'g', 6, 64))
	val.rows = append(val.rows, row)
	if err := cli.WriteFile(filepath.Join(val.dir, "validation.csv"), func(w io.Writer) error {
		c := csv.NewWriter(w)
		if err := c.Write(val.header()); err != nil {
			return err
		}
		if err := c.WriteAll(val.rows); err != nil {
			return err
		}
		return c.Error()
	}); err != nil {
		return "", err
	}
	trained.Training = val.annotate(info, "validated_epoch", epoch, res.Score)
	if err := os.MkdirAll(filepath.Join(val.dir, validatedDir), 0o755); err != nil {
		return "", err
	}
	if err := cli.WriteFile(filepath.Join(val.dir, validatedDir, fmt.Sprintf("epoch-%d.json", epoch)), trained.Encode); err != nil {
		return "", err
	}
	line := fmt.Sprintf("validation after epoch %d: %s %.4g", epoch, val.v.ScoreName(), res.Score)
	if res.Score < val.best {
		val.best, val.chosen = res.Score, epoch
		trained.Training = val.annotate(info, "chosen_epoch", epoch, res.Score)
		if err := cli.WriteFile(filepath.Join(val.dir, bestFile), trained.Encode); err != nil {
			return "", err
		}
		line += " (best so far)"
	}
	return line, nil
}

// annotate returns info with the epoch, under the key given, and its
// validation.
func (val *validator) annotate(info map[string]any, key string, epoch int, score float64) map[string]any {
	out := map[string]any{}
	for k, v := range info {
		out[k] = v
	}
	out[key] = epoch
	out["validation_score"] = score
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
