package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/internal/ctxtest"
	"github.com/metasgmcmc/metasgmcmc/samplers/nnsghmc"
)

// noValidation drops a set-up's validation protocol.
func noValidation(*catalog.Validation) *catalog.Validation { return nil }

// shortValidation runs the set-up's protocol with 100 steps of 10 chains,
// so that a test on the toy validates in a fraction of a second.
func shortValidation(t *testing.T) {
	t.Helper()
	testValidation = func(v *catalog.Validation) *catalog.Validation {
		w := *v
		w.Steps, w.Chains = 100, 10
		return &w
	}
	t.Cleanup(func() { testValidation = noValidation })
}

// TestValidationChoosesTheEpochItWrites trains the toy for three epochs,
// validating after each: validation.csv has a row per epoch, sampler.json
// holds the networks of the epoch with the lowest score and names it, and
// a run interrupted in the middle of a validation resumes to the same
// files.
func TestValidationChoosesTheEpochItWrites(t *testing.T) {
	shortValidation(t)
	args := append(append([]string{}, small...), "-epochs", "3", "-validate-every", "1")
	straight := t.TempDir()
	if err := run(context.Background(), append(args, "-out", straight)); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(straight, "validation.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 4 || rows[0][0] != "epoch" || rows[0][len(rows[0])-1] != "score" || len(rows[0]) != 1+6+1 {
		t.Fatalf("validation.csv: %v, %q", err, rows)
	}
	best, bestEpoch := 0.0, 0
	for i, r := range rows[1:] {
		score, err := strconv.ParseFloat(r[len(r)-1], 64)
		if err != nil || r[0] != strconv.Itoa(i+1) {
			t.Fatalf("validation.csv row %q", r)
		}
		if bestEpoch == 0 || score < best {
			best, bestEpoch = score, i+1
		}
	}
	s, err := nnsghmc.Load(filepath.Join(straight, "sampler.json"))
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := s.Training["chosen_epoch"].(float64); int(e) != bestEpoch {
		t.Errorf("sampler.json names epoch %v, want %d, the lowest score of %q", s.Training["chosen_epoch"], bestEpoch, rows)
	}
	a, _ := os.ReadFile(filepath.Join(straight, "sampler.json"))
	b, _ := os.ReadFile(filepath.Join(straight, bestFile))
	if !bytes.Equal(a, b) {
		t.Error("sampler.json is not the best epoch's networks (best.json)")
	}
	// every validated epoch's networks are kept, the chosen one's those of
	// sampler.json
	for epoch := 1; epoch <= 3; epoch++ {
		v, err := nnsghmc.Load(filepath.Join(straight, validatedDir, fmt.Sprintf("epoch-%d.json", epoch)))
		if err != nil {
			t.Fatal(err)
		}
		if e, _ := v.Training["validated_epoch"].(float64); int(e) != epoch {
			t.Errorf("validated/epoch-%d.json names epoch %v", epoch, v.Training["validated_epoch"])
		}
		// and each run's metrics, the bars' of the toy's protocol and the hottest chain's temperature
		runs, _ := v.Training["validation_runs"].(map[string]any)
		for _, name := range rows[0][1 : len(rows[0])-1] {
			m, _ := runs[name].(map[string]any)
			_, kl := m["kl"].(float64)
			_, ess := m["ess"].(float64)
			if _, temp := m["kinetic_temperature_max"].(float64); !kl || !ess || !temp || len(m) != 3 {
				t.Errorf("validated/epoch-%d.json: run %s's metrics %v, want kl, ess and kinetic_temperature_max", epoch, name, m)
			}
		}
		if same := reflect.DeepEqual(v.Q, s.Q) && reflect.DeepEqual(v.D, s.D); same != (epoch == bestEpoch) {
			t.Errorf("validated/epoch-%d.json: same networks as sampler.json %v, want %v (chosen epoch %d)", epoch, same, epoch == bestEpoch, bestEpoch)
		}
	}

	// interrupted during the first validation (after the 2×56 steps of the
	// first epoch and 150 of the validation's 400), then resumed
	stopped := t.TempDir()
	if err := run(ctxtest.CancelAfter(112+150), append(args, "-out", stopped)); err == nil {
		t.Fatal("the interrupted run finished")
	}
	cp, err := readCheckpoint(stopped)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(stopped, "validation.csv")); cp.Position.Epoch != 1 || cp.Position.Unroll != 0 || !os.IsNotExist(err) {
		t.Fatalf("want a run stopped in the validation after epoch 1: checkpoint at %+v, validation.csv: %v", cp.Position, err)
	}
	if err := run(context.Background(), []string{"-resume", stopped}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"validation.csv", "sampler.json"} {
		a, _ := os.ReadFile(filepath.Join(straight, name))
		b, _ := os.ReadFile(filepath.Join(stopped, name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("the resumed run's %s differs from the uninterrupted run's:\n%s\n%s", name, a, b)
		}
	}
}

// TestRevalidateRunsOnlyWhatIsMissing trains the toy for three epochs
// under a protocol of two targets, then revalidates it under the whole
// protocol: the files are those of a run validated under the whole
// protocol from the start, bit for bit, and a figure validation.csv held
// is taken, not run again.
func TestRevalidateRunsOnlyWhatIsMissing(t *testing.T) {
	shortValidation(t)
	whole := testValidation
	args := append(append([]string{}, small...), "-epochs", "3", "-validate-every", "1")
	straight, revalidated := t.TempDir(), t.TempDir()
	if err := run(context.Background(), append(args, "-out", straight)); err != nil {
		t.Fatal(err)
	}
	testValidation = func(v *catalog.Validation) *catalog.Validation {
		w := whole(v)
		w.Targets = w.Targets[:2]
		return w
	}
	if err := run(context.Background(), append(args, "-out", revalidated)); err != nil {
		t.Fatal(err)
	}
	testValidation = whole
	if err := run(context.Background(), []string{"-resume", revalidated, "-revalidate", "-quiet"}); err != nil {
		t.Fatal(err)
	}
	files := []string{"validation.csv", "sampler.json", bestFile}
	for e := 1; e <= 3; e++ {
		files = append(files, filepath.Join(validatedDir, fmt.Sprintf("epoch-%d.json", e)))
	}
	for _, name := range files {
		a, _ := os.ReadFile(filepath.Join(straight, name))
		b, _ := os.ReadFile(filepath.Join(revalidated, name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("the revalidated run's %s differs from the run validated so from the start:\n%s\n%s", name, a, b)
		}
	}

	// a figure on file is taken as it is
	path := filepath.Join(revalidated, "validation.csv")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows[1][1] = "1e+06"
	var buf bytes.Buffer
	if err := csv.NewWriter(&buf).WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"-resume", revalidated, "-revalidate", "-quiet"}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if rows, err = csv.NewReader(bytes.NewReader(b)).ReadAll(); err != nil || rows[1][1] != "1e+06" || rows[1][len(rows[1])-1] != "1e+06" {
		t.Errorf("a figure on file was run again, or not scored: %v %q", err, rows[1])
	}

	// one made another way (here a start bar added) is run again
	testValidation = func(v *catalog.Validation) *catalog.Validation {
		w := whole(v)
		w.Start = &catalog.Bar{Metric: "kl", Bound: 1e9, Step: 50}
		return w
	}
	if err := run(context.Background(), []string{"-resume", revalidated, "-revalidate", "-quiet"}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if rows, err = csv.NewReader(bytes.NewReader(b)).ReadAll(); err != nil || rows[1][1] == "1e+06" {
		t.Errorf("a figure made without the start bar was taken for one made with it: %v %q", err, rows[1])
	}
}

// TestRevalidateBeforeAnyValidation: a run interrupted before its first
// validation (here: its validations removed) continues under --revalidate
// as without it, instead of failing on the missing validation.csv.
func TestRevalidateBeforeAnyValidation(t *testing.T) {
	shortValidation(t)
	dir := t.TempDir()
	args := append(append([]string{}, small...), "-epochs", "1", "-validate-every", "1", "-out", dir)
	if err := run(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"validation.csv", bestFile, validatedDir} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(context.Background(), []string{"-resume", dir, "-revalidate", "-quiet"}); err != nil {
		t.Fatalf("--revalidate on a run with no validation yet: %v", err)
	}
}

// TestValidateFilePrintsTheProtocolsScore: train --validate scores a
// validated epoch's file as the run's own validation did, writes nothing,
// and refuses the flags of a training.
func TestValidateFilePrintsTheProtocolsScore(t *testing.T) {
	shortValidation(t)
	dir := t.TempDir()
	if err := run(context.Background(), append(append([]string{}, small...), "-epochs", "1", "-validate-every", "1", "-out", dir)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "validation.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("validation.csv: %v %q", err, rows)
	}
	score, _ := strconv.ParseFloat(rows[1][len(rows[1])-1], 64)
	file := filepath.Join(dir, validatedDir, "epoch-1.json")
	var out bytes.Buffer
	stdout = &out
	defer func() { stdout = os.Stdout }()
	if err := run(context.Background(), []string{"-task", "gaussian10", "-validate", file}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := fmt.Sprintf(": %.6g", score)
	if len(lines) != len(rows[0])-1 || !strings.HasPrefix(lines[len(lines)-1], "score (") || !strings.HasSuffix(lines[len(lines)-1], want) {
		t.Errorf("train --validate printed\n%s\nwant a line per run of validation.csv %q and the score%s", out.String(), rows[0], want)
	}
	for i, name := range rows[0][1 : len(rows[0])-1] {
		f, _ := strconv.ParseFloat(rows[1][1+i], 64)
		if !strings.HasPrefix(lines[i], fmt.Sprintf("%s: %.6g (", name, f)) {
			t.Errorf("line %d: %q, want run %s's figure %.6g", i+1, lines[i], name, f)
		}
	}
	for _, extra := range [][]string{{"-out", t.TempDir()}, {"-resume", dir}} {
		if err := run(context.Background(), append([]string{"-task", "gaussian10", "-validate", file}, extra...)); err == nil || !strings.Contains(err.Error(), "drop --"+extra[0][1:]) {
			t.Errorf("--validate with %s: %v, want it refused", extra[0], err)
		}
	}
	// and, as a training, a flag its task does not read
	if err := run(context.Background(), []string{"-task", "mnist-relu", "-target-seed", "3", "-validate", file}); err == nil || !strings.Contains(err.Error(), "target-seed") {
		t.Errorf("--validate on mnist-relu with --target-seed: %v, want it refused", err)
	}
}

// TestNonFiniteValidationIsWritten checks that an epoch whose validation
// scored +Inf (a run's held-out NLL overflowed: mnist-relu, training seed
// 17, epoch 24) is written to its file, the score and the run's metrics
// named in the training record, and read back.
func TestNonFiniteValidationIsWritten(t *testing.T) {
	task, err := catalog.New("mnist-relu", catalog.DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	v := task.Training.Validation
	val := &validator{v: v}
	res := &catalog.ValidationResult{Figures: []float64{932, math.Inf(1)}, Score: math.Inf(1),
		Values: []map[string]float64{{"test_nll": 932, "test_error@100": 0.19}, {"test_nll": math.Inf(1), "test_error@100": 0.2}}}
	trained := nnsghmc.RandomTrained([]int{10}, []int{10}, nnsghmc.Inputs{EnergyScale: -1, GradScale: 70, MomentumScale: 1}, 50, rand.New(rand.NewPCG(1, 1)))
	trained.Training = val.annotate(map[string]any{"seed": 17}, "validated_epoch", 24, res.Score)
	trained.Training["validation_runs"] = val.runValues(res, nil)
	path := filepath.Join(t.TempDir(), "epoch-24.json")
	if err := cli.WriteFile(path, trained.Encode); err != nil {
		t.Fatalf("writing an epoch that scored +Inf: %v", err)
	}
	back, err := nnsghmc.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := back.Training["validation_runs"].(map[string]any)
	second, _ := runs[v.Names()[1]].(map[string]any)
	if back.Training["validation_score"] != "+Inf" || second["test_nll"] != "+Inf" || second["test_error@100"] != 0.2 {
		t.Errorf("read back: score %v, runs %v", back.Training["validation_score"], runs)
	}
}
