package cli

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
)

// TestCSVAppenderRowsAreCompleteAfterEachAppend: after every Append the file
// is a valid CSV file of the header and every row so far, fields that need
// quoting included; it matches what WriteCSV writes; its mode is WriteFile's.
func TestCSVAppenderRowsAreCompleteAfterEachAppend(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.csv")
	if err := os.WriteFile(path, []byte("an older,run\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	header := []string{"step", "seconds", "kl"}
	a, err := CreateCSV(path, header)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	want := [][]string{header}
	if got := clitest.ReadCSV(t, path); !reflect.DeepEqual(got, want) {
		t.Fatalf("after CreateCSV: %q, want %q", got, want)
	}
	for i := 1; i <= 5; i++ {
		row := []string{strconv.Itoa(i), FormatFloat(0.1 * float64(i)), "a \"quoted\", field\nover lines"}
		if err := a.Append(row); err != nil {
			t.Fatal(err)
		}
		want = append(want, row)
		if got := clitest.ReadCSV(t, path); !reflect.DeepEqual(got, want) {
			t.Fatalf("after row %d: %q, want %q", i, got, want)
		}
	}
	if a.Rows() != 5 {
		t.Errorf("Rows() = %d, want 5", a.Rows())
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := a.Append(want[1]); err == nil || !strings.Contains(err.Error(), "after Close") {
		t.Errorf("Append after Close: %v", err)
	}
	atomic := filepath.Join(dir, "atomic.csv")
	if err := WriteCSV(atomic, header, want[1:]); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if w, _ := os.ReadFile(atomic); string(got) != string(w) {
		t.Errorf("appended file\n%s\ndiffers from WriteCSV's\n%s", got, w)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v (%v), want 0644", fi.Mode().Perm(), err)
	}
}

// failingWriter writes half of what it is given to w, then fails, from
// write number failAt on.
type failingWriter struct {
	w       io.Writer
	n       int
	failAt  int
	written int64
}

var errDiskFull = errors.New("disk full")

func (f *failingWriter) Write(p []byte) (int, error) {
	f.n++
	if f.n >= f.failAt {
		n, _ := f.w.Write(p[:len(p)/2])
		f.written += int64(n)
		return n, errDiskFull
	}
	n, err := f.w.Write(p)
	f.written += int64(n)
	return n, err
}

// TestCSVAppenderErrorsLeaveValidRows: a row with the wrong number of
// fields is refused; a write that fails half-way is cut off, so the file
// still holds the complete rows before it, and appending goes on after it.
func TestCSVAppenderErrorsLeaveValidRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.csv")
	a, err := CreateCSV(path, []string{"step", "kl"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Append([]string{"1"}); err == nil || err.Error() != "writing "+path+": row 1 has 1 fields, header has 2" {
		t.Errorf("short row: %v", err)
	}
	if err := a.Append([]string{"1", "0.5"}); err != nil {
		t.Fatal(err)
	}
	fw := &failingWriter{w: a.w, failAt: 1}
	a.w = fw
	err = a.Append([]string{"2", "0.25"})
	if !errors.Is(err, errDiskFull) || !strings.HasPrefix(err.Error(), "writing "+path+": ") {
		t.Errorf("failing write: %v", err)
	}
	if fw.written == 0 {
		t.Fatal("the failing writer wrote nothing: the test tests nothing")
	}
	want := [][]string{{"step", "kl"}, {"1", "0.5"}}
	if got := clitest.ReadCSV(t, path); !reflect.DeepEqual(got, want) {
		t.Errorf("after a failed write: %q, want %q", got, want)
	}
	a.w = fw.w
	if err := a.Append([]string{"3", "0.125"}); err != nil {
		t.Fatal(err)
	}
	want = append(want, []string{"3", "0.125"})
	if got := clitest.ReadCSV(t, path); !reflect.DeepEqual(got, want) || a.Rows() != 2 {
		t.Errorf("after appending again: %q (%d rows), want %q", got, a.Rows(), want)
	}
}

// TestCSVAppenderIsLinear: appending n rows writes each byte of the file
// once (n rows cost O(n)), where rewriting the file after every row, as
// WriteCSV would, writes Θ(n²) bytes.
func TestCSVAppenderIsLinear(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.csv")
	a, err := CreateCSV(path, []string{"step", "seconds", "kl"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cw := &failingWriter{w: a.w, failAt: math.MaxInt} // counts, never fails
	a.w = cw
	const n = 2000
	rewrite := int64(0) // bytes that rewriting after every row would write
	for i := 1; i <= n; i++ {
		if err := a.Append([]string{strconv.Itoa(i), FormatFloat(float64(i) / 7), FormatFloat(1 / float64(i))}); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		rewrite += fi.Size()
	}
	fi, _ := os.Stat(path)
	header := int64(len("step,seconds,kl\n"))
	if cw.written != fi.Size()-header {
		t.Errorf("%d rows wrote %d bytes for a file of %d bytes of rows", n, cw.written, fi.Size()-header)
	}
	if rewrite < int64(n)/4*fi.Size() {
		t.Errorf("rewriting would write %d bytes, not quadratic in the file's %d", rewrite, fi.Size())
	}
	t.Logf("%d rows: appended %d bytes; rewriting after every row would write %d", n, cw.written, rewrite)
}

// BenchmarkCSVAppender appends rows to a file: the time per row stays
// constant however long the file grows.
func BenchmarkCSVAppender(b *testing.B) {
	a, err := CreateCSV(filepath.Join(b.TempDir(), "m.csv"), []string{"step", "seconds", "kl"})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	row := []string{"12000", "1.2345678", "0.012345678"}
	for b.Loop() {
		if err := a.Append(row); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendCSVContinuesAFile: rows appended after reopening a file follow
// the rows already there, and a file with another header is refused.
func TestAppendCSVContinuesAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.csv")
	a, err := CreateCSV(path, []string{"step", "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append([]string{"1", "0.5"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := AppendCSV(path, []string{"step", "y"}); err == nil || !strings.Contains(err.Error(), "header") {
		t.Errorf("another header: error %v, want one about the header", err)
	}
	b, err := AppendCSV(path, []string{"step", "x"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Rows() != 1 {
		t.Errorf("Rows %d, want 1", b.Rows())
	}
	if err := b.Append([]string{"2", "a,b"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "step,x\n1,0.5\n2,\"a,b\"\n"; string(got) != want {
		t.Errorf("file %q, want %q", got, want)
	}
}
