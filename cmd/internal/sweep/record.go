package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
)

// MetricsFile is the file of a sample run that holds its metrics over
// the steps.
const MetricsFile = "metrics.csv"

// RecordFiles are the files of an ended run that its record keeps: what
// figures reads of a run.
var RecordFiles = []string{SummaryFile, MetricsFile}

// InspectRun returns the status of the run r: its output directory's,
// or, where that holds nothing (New) and the sweep keeps records, its
// record's, with Recorded set. A recorded run has ended: sweep run skips
// it, and figures reads it from Source. An ended run whose flags differ
// from those r.Args set now, or whose input files' content does (a flag
// file or a sampler file changed since), has Stale set.
func InspectRun(r Run) (Status, error) {
	st, err := Inspect(r.Dir)
	if err != nil || st.State != New || r.Record == "" {
		if err == nil && st.State.Done() {
			st.Stale = staleness(r.Dir, r.Args)
		}
		return st, err
	}
	if _, err := os.Stat(filepath.Join(r.Record, SummaryFile)); err != nil {
		return st, nil
	}
	rec, err := Inspect(r.Record)
	if err != nil {
		return st, err
	}
	if !rec.State.Done() {
		return st, fmt.Errorf("the record %s of run %d is not an ended run's (%s): remove it, or put back its %s", r.Record, r.Index, rec, SummaryFile)
	}
	rec.Recorded = true
	rec.Stale = staleness(r.Record, r.Args)
	return rec, nil
}

// Source returns the directory that figures reads the ended run r from,
// given its status st (InspectRun's): its record where st is the
// record's, else its output directory.
func (r Run) Source(st Status) string {
	if st.Recorded {
		return r.Record
	}
	return r.Dir
}

// Keep writes the record of the run r, if the sweep keeps records and
// the run's output directory holds an ended run: its RecordFiles, each
// written afresh (atomically) where the record lacks it or holds other
// bytes. It returns whether it wrote any.
func Keep(r Run) (bool, error) {
	if r.Record == "" {
		return false, nil
	}
	st, err := Inspect(r.Dir)
	if err != nil || !st.State.Done() {
		return false, err
	}
	wrote := false
	for _, name := range RecordFiles {
		b, err := os.ReadFile(filepath.Join(r.Dir, name))
		if errors.Is(err, os.ErrNotExist) && name != SummaryFile {
			continue // a run that failed before its first metrics
		}
		if err != nil {
			return wrote, fmt.Errorf("recording run %d: %v", r.Index, err)
		}
		path := filepath.Join(r.Record, name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
			continue
		}
		if err := os.MkdirAll(r.Record, 0o755); err != nil {
			return wrote, fmt.Errorf("recording run %d: %v", r.Index, err)
		}
		if err := cli.WriteFile(path, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return wrote, err
		}
		wrote = true
	}
	return wrote, nil
}
