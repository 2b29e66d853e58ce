package main

import (
	"bytes"
	"encoding/csv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
)

// trainRows reads a run's train.csv, its seconds column blanked.
func trainRows(t *testing.T, dir string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "train.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		r[len(r)-1] = ""
	}
	return rows
}

// TestKilledRunsResumeExactly kills training with SIGKILL at random
// moments after its first checkpoint, ten times: --resume then ends with
// the uninterrupted run's sampler.json byte for byte and its train.csv but
// the seconds, and leaves no temporary file behind. The moments are drawn
// from a seeded source; where they fall varies with the machine's speed.
func TestKilledRunsResumeExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: ten killed runs take about half a minute")
	}
	args := append(append([]string{}, quick...), "-epochs", "4")
	straight := filepath.Join(t.TempDir(), "straight")
	began := time.Now()
	if code, stderr := clitest.Command(t, append(args, "-out", straight)...); code != 0 {
		t.Fatalf("uninterrupted run: status %d, %s", code, stderr)
	}
	took := time.Since(began)
	want, _ := os.ReadFile(filepath.Join(straight, "sampler.json"))

	rng := rand.New(rand.NewPCG(38, 9))
	killed := 0
	for trial := 0; trial < 10; trial++ {
		out := filepath.Join(t.TempDir(), "run")
		p := clitest.Start(t, append(args, "-out", out)...)
		clitest.WaitFor(t, filepath.Join(out, "checkpoint.json"))
		time.Sleep(time.Duration(rng.Float64() * float64(took)))
		p.Cmd.Process.Kill()
		if err := p.Cmd.Wait(); err != nil {
			killed++
		}
		if code, stderr := clitest.Command(t, "-resume", out); code != 0 {
			t.Fatalf("trial %d: --resume: status %d, %s", trial, code, stderr)
		}
		if got, _ := os.ReadFile(filepath.Join(out, "sampler.json")); !bytes.Equal(got, want) {
			t.Errorf("trial %d: sampler.json differs from the uninterrupted run's", trial)
		}
		if a, b := trainRows(t, straight), trainRows(t, out); !reflect.DeepEqual(a, b) {
			t.Errorf("trial %d: train.csv differs from the uninterrupted run's", trial)
		}
		entries, _ := os.ReadDir(out)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("trial %d: %s left behind", trial, e.Name())
			}
		}
	}
	t.Logf("%d of 10 runs were killed before they finished", killed)
	if killed < 5 {
		t.Errorf("only %d of 10 runs were killed before they finished: the test tests little", killed)
	}
}
