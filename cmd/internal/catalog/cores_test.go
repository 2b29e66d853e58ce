package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/train"
)

// A meta-training gives the same networks and the same training record,
// bit for bit, on one core and on two: the NT set-up's (the energy's
// products over spans of chains, the step graphs in blocks run by as many
// workers as cores) and the Piano GRU's (chain groups that follow the core
// count), two unrolls each, the second a continuation.
func TestTrainingIsTheSameOnAnyCoreCount(t *testing.T) {
	if testing.Short() {
		t.Skip("two short meta-trainings of each set-up")
	}
	gru := DefaultOptions
	gru.Hidden = 16
	f32 := DefaultOptions
	f32.Dtype = graph.Float32
	for _, c := range []struct {
		task, data string
		o          Options
		chunk      int // coordinates per step graph: several blocks
	}{
		{"mnist-relu", "mnist/train-labels-idx1-ubyte.gz", f32, 0},
		{"piano-gru", "music/Piano_midi.mat", gru, 1 << 10},
	} {
		t.Run(c.task, func(t *testing.T) {
			haveData(t, c.data)
			var out [2][]byte
			for i, procs := range []int{1, 2} {
				func() {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					task, err := New(c.task, c.o)
					if err != nil {
						t.Fatal(err)
					}
					cfg := task.Training.Config
					cfg.Epochs, cfg.SubEpochs, cfg.Steps, cfg.Window, cfg.Chunk = 1, 1, 7, 4, c.chunk
					tr := newTrainer(t, task, cfg)
					if err := tr.Run(context.Background(), nil, nil); err != nil {
						t.Fatal(err)
					}
					rows := tr.Rows()
					for j := range rows {
						rows[j].Seconds = 0
					}
					if out[i], err = json.Marshal(struct {
						Networks any
						Rows     []train.Row
					}{tr.Trained(), rows}); err != nil {
						t.Fatal(err)
					}
				}()
			}
			if !bytes.Equal(out[0], out[1]) {
				t.Errorf("one core and two give different trainings:\n%s\n%s", out[0], out[1])
			}
		})
	}
}
