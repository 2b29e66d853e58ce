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

// StoppedMetricsFile is the file of a run's record that keeps the metrics
// of the run as a signal left it (Stopped): its curve so far, kept where
// the runs directory may be lost (another machine, a new checkout). The
// run's end replaces it with the ended run's RecordFiles.
const StoppedMetricsFile = "metrics-stopped.csv"

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
		path := filepath.Join(r.Record, StoppedMetricsFile)
		if _, err := os.Stat(path); err == nil {
			st.StoppedMetrics = path
		}
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
// bytes, and the record's StoppedMetricsFile removed. Of a Stopped run
// that is not Running it keeps the metrics so far, as
// StoppedMetricsFile. It returns whether it wrote any.
func Keep(r Run) (bool, error) {
	if r.Record == "" {
		return false, nil
	}
	st, err := Inspect(r.Dir)
	if err != nil {
		return false, err
	}
	switch {
	case st.State == Stopped && !st.Running:
		wrote, err := keepFile(r, MetricsFile, StoppedMetricsFile)
		if errors.Is(err, os.ErrNotExist) {
			return false, nil // stopped before its first metrics
		}
		return wrote, err
	case !st.State.Done():
		return false, nil
	}
	wrote := false
	for _, name := range RecordFiles {
		w, err := keepFile(r, name, name)
		if errors.Is(err, os.ErrNotExist) && name != SummaryFile {
			continue // a run that failed before its first metrics
		}
		if err != nil {
			return wrote, fmt.Errorf("recording run %d: %v", r.Index, err)
		}
		wrote = wrote || w
	}
	if err := os.Remove(filepath.Join(r.Record, StoppedMetricsFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return wrote, fmt.Errorf("recording run %d: %v", r.Index, err)
	}
	return wrote, nil
}

// keepFile copies the file name of the run r's output directory into its
// record as as, atomically, unless the record holds those bytes already;
// it returns whether it wrote.
func keepFile(r Run, name, as string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(r.Dir, name))
	if err != nil {
		return false, err
	}
	path := filepath.Join(r.Record, as)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return false, nil
	}
	if err := os.MkdirAll(r.Record, 0o755); err != nil {
		return false, err
	}
	if err := cli.WriteFile(path, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return false, err
	}
	return true, nil
}
