package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
)

// TestInspectAndPlan checks what a sweep does with a run whose directory
// holds what a sample run leaves at each point of its life: start a new
// one, skip one that has ended, resume one stopped with a checkpoint,
// start afresh one that stopped without one.
func TestInspectAndPlan(t *testing.T) {
	const (
		config      = `{"command": "sample", "flags": {}, "given": []}`
		finished    = `{"task": "gaussian20", "sampler": "sghmc", "kl": 0.01}`
		diverged    = `{"task": "gaussian20", "sampler": "sghmc", "error": "chain 3 diverged at step 120"}`
		interrupted = `{"task": "piano-gru", "sampler": "sghmc", "error": "interrupted by SIGTERM"}`
		checkpoint  = `{"version": 1, "state": {"steps": 40}}`
	)
	for _, tc := range []struct {
		name   string
		files  map[string]string // nil: no directory
		state  State
		step   int
		action Action // without and with redo
		redo   Action
	}{
		{"no directory", nil, New, 0, Start, Start},
		{"empty directory", map[string]string{}, New, 0, Start, Start},
		{"a lock file alone", map[string]string{".lock": "123 host\n"}, New, 0, Start, Start},
		{"started, no checkpoint yet (running, or killed)", map[string]string{"config.json": config, "metrics.csv": "step,seconds\n"}, Started, 0, Restart, Restart},
		{"interrupted without a checkpoint (Gaussian, MNIST)", map[string]string{"config.json": config, "summary.json": interrupted}, Started, 0, Restart, Restart},
		{"killed after a checkpoint", map[string]string{"config.json": config, "checkpoint.json": checkpoint}, Stopped, 40, Resume, Resume},
		{"interrupted with a checkpoint (GRU)", map[string]string{"config.json": config, "checkpoint.json": checkpoint, "summary.json": interrupted}, Stopped, 40, Resume, Resume},
		{"finished", map[string]string{"config.json": config, "summary.json": finished}, Finished, 0, Skip, Skip},
		{"finished, keeping its last checkpoint", map[string]string{"config.json": config, "checkpoint.json": checkpoint, "summary.json": finished}, Finished, 0, Skip, Skip},
		{"failed", map[string]string{"config.json": config, "summary.json": diverged}, Failed, 0, Skip, Restart},
		{"a damaged checkpoint", map[string]string{"config.json": config, "checkpoint.json": "{"}, Started, 0, Restart, Restart},
		{"a damaged summary", map[string]string{"config.json": config, "summary.json": "nul"}, Started, 0, Restart, Restart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			if tc.files != nil {
				os.Mkdir(dir, 0o755)
				for name, content := range tc.files {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			st, err := Inspect(dir)
			if err != nil {
				t.Fatal(err)
			}
			if st.State != tc.state || st.Step != tc.step {
				t.Errorf("Inspect: %v (step %d), want %v (step %d)", st.State, st.Step, tc.state, tc.step)
			}
			if a := Plan(st, false); a != tc.action {
				t.Errorf("Plan: %v, want %v", a, tc.action)
			}
			if a := Plan(st, true); a != tc.redo {
				t.Errorf("Plan with redo: %v, want %v", a, tc.redo)
			}
		})
	}
}

// TestCommand checks each action's command line: the run's flags, with
// the environment's variables, and --out, --force --out or --resume.
func TestCommand(t *testing.T) {
	r := Run{Dir: "runs/g/x-1", Args: []string{"--target-cov", "$DATA/Cov", "--seed", "1"}}
	env := func(k string) (string, bool) { return "/d", k == "DATA" }
	for _, tc := range []struct {
		a     Action
		quiet bool
		want  string
	}{
		{Skip, false, ""},
		{Start, false, "--target-cov /d/Cov --seed 1 --out runs/g/x-1"},
		{Restart, true, "--target-cov /d/Cov --seed 1 --force --out runs/g/x-1 --quiet"},
		{Resume, false, "--resume runs/g/x-1 --target-cov /d/Cov --seed 1"},
	} {
		args, err := r.Command(tc.a, tc.quiet, env)
		if got := strings.Join(args, " "); err != nil || got != tc.want {
			t.Errorf("%v: %q, %v, want %q", tc.a, got, err, tc.want)
		}
	}
	if _, err := r.Command(Start, false, func(string) (string, bool) { return "", false }); err == nil || !strings.Contains(err.Error(), "$DATA is not set") {
		t.Errorf("unset variable: %v", err)
	}
}

// TestInspectRunReadsTheRecord checks a run of a sweep that keeps
// records: its output directory's status while that holds anything, the
// record's (ended, Recorded, skipped by Plan) where it holds nothing, and
// an error naming the record where that is no ended run's.
func TestInspectRunReadsTheRecord(t *testing.T) {
	dir := t.TempDir()
	s, err := ParseText(filepath.Join(dir, "exp", "x.sweep"), "out g/{seed}\nseeds 1\nrecord results\n")
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run(0, filepath.Join(dir, "runs"))
	if want := filepath.Join(dir, "exp", "results", "g", "1"); r.Record != want {
		t.Fatalf("Record %s, want %s", r.Record, want)
	}
	write := func(d, name, content string) {
		t.Helper()
		os.MkdirAll(d, 0o755)
		if err := os.WriteFile(filepath.Join(d, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inspect := func() Status {
		t.Helper()
		st, err := InspectRun(r)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := inspect(); st.State != New || st.Recorded {
		t.Errorf("neither run nor record: %v", st)
	}
	write(r.Dir, "summary.json", `{"kl": 0.1}`)
	if wrote, err := Keep(r); err != nil || !wrote {
		t.Fatalf("Keep: %v %v", wrote, err)
	}
	if wrote, err := Keep(r); err != nil || wrote {
		t.Errorf("Keep again, nothing changed: %v %v", wrote, err)
	}
	write(r.Dir, "checkpoint.json", `{"state": {"steps": 5}}`)
	write(r.Dir, "summary.json", `{"error": "interrupted by SIGTERM"}`)
	if st := inspect(); st.State != Stopped || st.Recorded || r.Source(st) != r.Dir {
		t.Errorf("a run being redone beside its record: %v, source %s", st, r.Source(st))
	}
	os.RemoveAll(filepath.Join(dir, "runs"))
	st := inspect()
	if st.State != Finished || !st.Recorded || Plan(st, false) != Skip || r.Source(st) != r.Record || !strings.Contains(st.String(), "recorded") {
		t.Errorf("the record alone: %v, plan %v, source %s", st, Plan(st, false), r.Source(st))
	}
	write(r.Record, "summary.json", `{"error": "interrupted by SIGTERM"}`)
	if _, err := InspectRun(r); err == nil || !strings.Contains(err.Error(), r.Record) {
		t.Errorf("a record of an interrupted run: %v", err)
	}
}

// TestKeepStoppedMetrics checks that Keep keeps a stopped run's metrics
// so far in its record (not a running one's), that a runs directory without the run then
// finds them (the run new, StoppedMetrics naming them), and that the
// run's end replaces them with the ended run's record.
func TestKeepStoppedMetrics(t *testing.T) {
	dir := t.TempDir()
	s, err := ParseText(filepath.Join(dir, "exp", "x.sweep"), "out g/{seed}\nseeds 1\nrecord results\n")
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run(0, filepath.Join(dir, "runs"))
	write := func(name, content string) {
		t.Helper()
		os.MkdirAll(r.Dir, 0o755)
		if err := os.WriteFile(filepath.Join(r.Dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kept := filepath.Join(r.Record, StoppedMetricsFile)
	write("checkpoint.json", `{"state": {"steps": 5}}`)
	if wrote, err := Keep(r); err != nil || wrote {
		t.Errorf("Keep of a stopped run without metrics: %v %v", wrote, err)
	}
	write("metrics.csv", "step,nll\n5,3.2\n")
	out, err := cli.OpenOutDir(r.Dir) // as a running sample holds it
	if err != nil {
		t.Fatal(err)
	}
	if st, err := Inspect(r.Dir); err != nil || !st.Running || st.State != Stopped || !strings.HasPrefix(st.String(), "running (PID ") || !strings.Contains(st.String(), "checkpoint at step 5") {
		t.Errorf("a running run: %v %v", st, err)
	}
	if wrote, err := Keep(r); err != nil || wrote {
		t.Errorf("Keep of a running run: %v %v", wrote, err)
	}
	if st, _ := Inspect(r.Dir); Plan(st, true) != Skip {
		t.Errorf("a running run: plan %v, want it skipped", Plan(st, true))
	}
	out.Close()
	write(".lock", "123 host") // left behind by a killed run: no process holds it
	if st, err := Inspect(r.Dir); err != nil || st.Running || st.State != Stopped || !strings.Contains(st.String(), "killed") {
		t.Errorf("a killed run: %v %v", st, err)
	}
	if wrote, err := Keep(r); err != nil || !wrote {
		t.Fatalf("Keep of a stopped run: %v %v", wrote, err)
	}
	if b, err := os.ReadFile(kept); err != nil || string(b) != "step,nll\n5,3.2\n" {
		t.Errorf("kept %q %v", b, err)
	}
	if st, err := InspectRun(r); err != nil || st.State != Stopped || st.StoppedMetrics != "" {
		t.Errorf("the stopped run beside its kept metrics: %v %v", st, err)
	}
	os.RemoveAll(r.Dir)
	st, err := InspectRun(r)
	if err != nil || st.State != New || st.Recorded || st.StoppedMetrics != kept || !strings.Contains(st.String(), kept) {
		t.Errorf("the kept metrics alone: %v %v", st, err)
	}
	write("summary.json", `{"kl": 0.1}`)
	write("metrics.csv", "step,nll\n5,3.2\n10,3.1\n")
	if wrote, err := Keep(r); err != nil || !wrote {
		t.Fatalf("Keep of the ended run: %v %v", wrote, err)
	}
	if _, err := os.Stat(kept); err == nil {
		t.Errorf("%s left beside the ended run's record", kept)
	}
	os.RemoveAll(r.Dir)
	if st, err := InspectRun(r); err != nil || st.State != Finished || !st.Recorded || st.StoppedMetrics != "" {
		t.Errorf("the ended run's record: %v %v", st, err)
	}
}

// TestStaleRunsAreNamed checks that an ended run, in its directory or
// its record, is stale exactly when a flag its command line or flag file
// sets now differs from the value it ran with, whatever the form the
// value is written in.
func TestStaleRunsAreNamed(t *testing.T) {
	dir := t.TempDir()
	flags := filepath.Join(dir, "psgld.flags")
	s, err := ParseText(filepath.Join(dir, "exp", "x.sweep"), "out g/{seed}\nseeds 1\nargs --flagfile "+flags+" --float32\nrecord results\n")
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run(0, filepath.Join(dir, "runs"))
	os.MkdirAll(r.Dir, 0o755)
	// the flags as pflag records them in summary.json
	summary := `{"flags": {"seed": "1", "lr": "0.0013", "steps": "12000", "float32": "true", "d-hidden": "[10,10]", "task": "mnist-af", "meta": "/home/u/clone/experiments/mnist-nt/sampler.json", "out": "elsewhere", "flagfile": "old.flags"}}`
	if err := os.WriteFile(filepath.Join(r.Dir, SummaryFile), []byte(summary), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file string
		stale      string // "": not stale
	}{
		{"the same values, written otherwise", "--lr 1.3e-3\n--steps=12000 # comment\n--d-hidden 10,10\n--task mnist-af\n--meta ./experiments/mnist-nt/sampler.json\n", ""},
		{"another file", "--lr 1.3e-3\n--meta experiments/mnist-data/sampler.json\n", "meta ran /home/u/clone/experiments/mnist-nt/sampler.json, now experiments/mnist-data/sampler.json"},
		{"a changed number", "--lr 1.3e-2\n--steps 12000\n", "lr ran 0.0013, now 1.3e-2"},
		{"a changed list", "--lr 0.0013\n--d-hidden 10\n", "d-hidden ran [10,10], now 10"},
		{"a flag the run did not record", "--lr 0.0013\n--thermostat 3\n", "thermostat unset, now 3"},
		{"two changes", "--lr 2e-3\n--task mnist-nt\n", "lr ran 0.0013, now 2e-3; task ran mnist-af, now mnist-nt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(flags, []byte(tc.file), 0o644)
			st, err := InspectRun(r)
			if err != nil {
				t.Fatal(err)
			}
			if st.State != Finished || st.Stale != tc.stale {
				t.Errorf("%v, stale %q; want finished, stale %q", st, st.Stale, tc.stale)
			}
			if tc.stale != "" && !strings.Contains(st.String(), "stale: "+tc.stale) {
				t.Errorf("String %q does not name the stale flags", st)
			}
			if Plan(st, true) != Skip {
				t.Errorf("a stale run is to be %v; nothing a user made is replaced unasked", Plan(st, true))
			}
		})
	}
	// the record alone says the same
	os.WriteFile(flags, []byte("--lr 1.3e-2\n"), 0o644)
	if _, err := Keep(r); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(r.Dir)
	if st, err := InspectRun(r); err != nil || !st.Recorded || st.Stale != "lr ran 0.0013, now 1.3e-2" {
		t.Errorf("the record of a stale run: %v %v", st, err)
	}
}

// TestStaleWhenAnInputFileChanged checks that an ended run is stale when
// the content of an input file it recorded (the sampler of --meta) has
// changed since, its path the same.
func TestStaleWhenAnInputFileChanged(t *testing.T) {
	dir := t.TempDir()
	flags, meta := filepath.Join(dir, "nn.flags"), filepath.Join(dir, "sampler.json")
	os.WriteFile(flags, []byte("--meta "+meta+"\n"), 0o644)
	os.WriteFile(meta, []byte(`{"version": 3}`), 0o644)
	sum := sha256.Sum256([]byte(`{"version": 3}`))
	s, err := ParseText(filepath.Join(dir, "x.sweep"), "out g/{seed}\nseeds 1\nargs --flagfile "+flags+"\n")
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run(0, filepath.Join(dir, "runs"))
	os.MkdirAll(r.Dir, 0o755)
	summary := `{"flags": {"seed": "1", "meta": "` + meta + `"}, "inputs": {"meta": {"path": "` + meta + `", "sha256": "` + hex.EncodeToString(sum[:]) + `"}}}`
	os.WriteFile(filepath.Join(r.Dir, SummaryFile), []byte(summary), 0o644)
	if st, err := InspectRun(r); err != nil || st.Stale != "" {
		t.Errorf("the same sampler file: %v %v", st, err)
	}
	os.WriteFile(meta, []byte(`{"version": 4}`), 0o644)
	if st, err := InspectRun(r); err != nil || !strings.HasPrefix(st.Stale, "meta "+meta+" changed since the run (SHA-256 ") {
		t.Errorf("a retrained sampler file: %v %v", st, err)
	}
}
