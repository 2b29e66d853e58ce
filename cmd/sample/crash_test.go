package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
	"github.com/metasgmcmc/metasgmcmc/samplers/trace"
)

// TestKilledRunsResumeExactly kills a GRU run that streams a trace with
// SIGKILL at random moments after its first checkpoint, ten times: every
// draw the run had written is read back from trace.bin, equal to the
// uninterrupted run's, and --resume then ends with the uninterrupted run's
// metrics.csv (but the seconds), summary.json (but the timing), trace.bin
// byte for byte and chains bit for bit. The moments are drawn from a
// seeded source; where they fall varies with the machine's speed.
func TestKilledRunsResumeExactly(t *testing.T) {
	needData(t, jsbData)
	args := []string{"-task", "jsb-gru", "-sampler", "sghmc", "-hidden", "4", "-chains", "2", "-steps", "40",
		"-eval-every", "4", "-trace-every", "2", "-quiet"}
	straight := filepath.Join(t.TempDir(), "straight")
	began := time.Now()
	if code, stderr := clitest.Command(t, append(args, "-out", straight)...); code != 0 {
		t.Fatalf("uninterrupted run: status %d, %s", code, stderr)
	}
	took := time.Since(began)
	wantTrace, _ := os.ReadFile(filepath.Join(straight, traceStream))
	_, wantDraws := readTrace(t, straight)

	rng := rand.New(rand.NewPCG(38, 4))
	killed := 0
	for trial := 0; trial < 10; trial++ {
		out := filepath.Join(t.TempDir(), "run")
		p := clitest.Start(t, append(args, "-out", out)...)
		clitest.WaitFor(t, filepath.Join(out, checkpointFile))
		time.Sleep(time.Duration(rng.Float64() * float64(took)))
		p.Cmd.Process.Kill()
		if err := p.Cmd.Wait(); err != nil {
			killed++
		}

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
		if a, b := metricsWithoutSeconds(t, straight), metricsWithoutSeconds(t, out); !reflect.DeepEqual(a, b) {
			t.Errorf("trial %d: metrics.csv differs:\n%v\n%v", trial, b, a)
		}
		if a, b := summaryWithoutTiming(t, straight), summaryWithoutTiming(t, out); !reflect.DeepEqual(a, b) {
			t.Errorf("trial %d: summary.json differs:\n%v\n%v", trial, b, a)
		}
		if got, _ := os.ReadFile(filepath.Join(out, traceStream)); !bytes.Equal(got, wantTrace) {
			t.Errorf("trial %d: trace.bin differs from the uninterrupted run's (%d and %d bytes)", trial, len(got), len(wantTrace))
		}
		if a, b := finalState(t, straight), finalState(t, out); a != b {
			t.Errorf("trial %d: the chains differ from the uninterrupted run's", trial)
		}
	}
	t.Logf("%d of 10 runs were killed before they finished", killed)
	if killed < 5 {
		t.Errorf("only %d of 10 runs were killed before they finished: the test tests little", killed)
	}
}
