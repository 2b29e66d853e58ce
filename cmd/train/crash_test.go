package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
)

// trainRows reads a run's train.csv, its seconds column blanked.
func trainRows(t *testing.T, dir string) [][]string {
	t.Helper()
	rows := clitest.ReadCSV(t, filepath.Join(dir, "train.csv"))
	for _, r := range rows[1:] {
		r[len(r)-1] = ""
	}
	return rows
}

// TestKilledRunsResumeExactly kills training with SIGKILL at random
// moments after its first checkpoint (which comes after about a quarter of
// the run), ten times (clitest.KilledRuns): --resume then ends with
// the uninterrupted run's sampler.json byte for byte and its train.csv but
// the seconds, and leaves no temporary file behind. The moments are drawn
// from a seeded source; where they fall varies with the machine's speed.
func TestKilledRunsResumeExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: ten killed runs take about half a minute")
	}
	args := append(append([]string{}, quick...), "-epochs", "4")
	straight, killed := clitest.KilledRuns(t, rand.New(rand.NewPCG(38, 9)), "checkpoint.json", args...)
	want, _ := os.ReadFile(filepath.Join(straight, "sampler.json"))
	for trial, out := range killed {
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
}
