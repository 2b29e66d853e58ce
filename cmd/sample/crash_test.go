package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
	"github.com/metasgmcmc/metasgmcmc/samplers/trace"
)

// TestKilledRunsResumeExactly kills a GRU run that streams a trace with
// SIGKILL at random moments after its first checkpoint, ten times
// (clitest.KilledRuns): every draw the run had written is read back from
// trace.bin, equal to the uninterrupted run's, and --resume then ends with
// the uninterrupted run's metrics.csv (but the seconds), summary.json (but
// the timing), trace.bin byte for byte and chains bit for bit.
func TestKilledRunsResumeExactly(t *testing.T) {
	needData(t, jsbData)
	straight, killed := clitest.KilledRuns(t, rand.New(rand.NewPCG(38, 4)), checkpointFile,
		"-task", "jsb-gru", "-sampler", "sghmc", "-hidden", "4", "-chains", "2", "-steps", "40",
		"-eval-every", "4", "-trace-every", "2", "-quiet")
	wantTrace, _ := os.ReadFile(filepath.Join(straight, traceStream))
	_, wantDraws := readTrace(t, straight)
	for trial, out := range killed {
		// the draws written before the kill
		r, err := trace.Open(filepath.Join(out, traceStream))
		if err != nil {
			t.Fatalf("trial %d: the killed run's trace: %v", trial, err)
		}
		cp, err := readCheckpoint(out)
		if err != nil {
			t.Fatal(err)
		}
		if r.Draws() < cp.TraceDraws || r.Draws() > len(wantDraws) {
			t.Errorf("trial %d: %d draws after the kill; the checkpoint counts %d, the whole run has %d", trial, r.Draws(), cp.TraceDraws, len(wantDraws))
		}
		var d trace.Draw
		for i := 0; r.Next(&d) == nil; i++ {
			if w := wantDraws[i]; d.Step != w.Step || !reflect.DeepEqual(d.Theta, w.Theta) || !reflect.DeepEqual(d.Stats, w.Stats) {
				t.Errorf("trial %d: draw %d (step %d) differs from the uninterrupted run's", trial, i, d.Step)
				break
			}
		}
		r.Close()

		code, stderr := clitest.Command(t, "-resume", out)
		finished := strings.Contains(stderr, "has finished its 40 steps")
		if code != 0 && !finished {
			t.Fatalf("trial %d: --resume: status %d, %s", trial, code, stderr)
		}
		checkSameOutputs(t, fmt.Sprintf("the run of trial %d", trial), out, straight)
		if got, _ := os.ReadFile(filepath.Join(out, traceStream)); !bytes.Equal(got, wantTrace) {
			t.Errorf("trial %d: trace.bin differs from the uninterrupted run's (%d and %d bytes)", trial, len(got), len(wantTrace))
		}
		if a, b := finalState(t, straight), finalState(t, out); a != b {
			t.Errorf("trial %d: the chains differ from the uninterrupted run's", trial)
		}
	}
}
