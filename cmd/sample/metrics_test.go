package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
)

// readMetrics parses metrics.csv, retrying for a moment a read that raced
// with a write in progress; it fails the test if the file does not parse or
// does not end with a complete row.
func readMetrics(t *testing.T, path string) [][]string {
	t.Helper()
	var err error
	for try := 0; try < 5; try++ {
		var b []byte
		if b, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		var records [][]string
		if records, err = csv.NewReader(bytes.NewReader(b)).ReadAll(); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return records
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s is not a CSV file of complete rows: %v", path, err)
	return nil
}

// TestMetricsGrowARowAtEachEvaluation: while a run goes on, metrics.csv is
// a valid CSV file that gains a row, step by step, at each evaluation; a
// signal leaves it with one complete row per evaluation the run reached.
func TestMetricsGrowARowAtEachEvaluation(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	first := clitest.Start(t, append(long, "-quiet", "-out", out)...)
	path := filepath.Join(out, "metrics.csv")
	clitest.WaitFor(t, path)
	check := func(records [][]string) {
		t.Helper()
		if len(records) == 0 || len(records[0]) != 3 || records[0][0] != "step" || records[0][1] != "seconds" {
			t.Fatalf("metrics.csv: header %q", records)
		}
		for i, r := range records[1:] {
			if len(r) != 3 || r[0] != strconv.Itoa(100*(i+1)) {
				t.Fatalf("metrics.csv: row %d is %q, want step %d", i+1, r, 100*(i+1))
			}
		}
	}
	seen := 0
	for deadline := time.Now().Add(60 * time.Second); seen < 5 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		records := readMetrics(t, path)
		check(records)
		if len(records)-1 < seen {
			t.Fatalf("metrics.csv shrank from %d rows to %d", seen, len(records)-1)
		}
		seen = len(records) - 1
	}
	if seen < 5 {
		t.Fatalf("metrics.csv has %d rows after a minute", seen)
	}
	first.Cmd.Process.Signal(syscall.SIGINT)
	first.Cmd.Wait()
	records := readMetrics(t, path)
	check(records)
	var sum struct{ Steps int }
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(records)-1 != sum.Steps/100 {
		t.Errorf("metrics.csv has %d rows for a run stopped after %d steps, evaluated every 100", len(records)-1, sum.Steps)
	}
}
