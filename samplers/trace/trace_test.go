package trace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// testDraw is θ of all chains (coordinate-major, as samplers.State) and the
// sample stats of a draw, made from its step so that every value differs.
func testDraw(h Header, step int) (theta []float64, stats [][]float64) {
	theta = make([]float64, h.Dim*h.Chains)
	for i := range theta {
		theta[i] = float64(step) + float64(i)/1000
	}
	for s := range h.Stats {
		v := make([]float64, h.Chains)
		for k := range v {
			v[k] = -float64(step) - float64(s) - float64(k)/10
		}
		stats = append(stats, v)
	}
	return theta, stats
}

// wantDraw is testDraw's draw as a Reader returns it.
func wantDraw(h Header, step int) Draw {
	theta, stats := testDraw(h, step)
	d := Draw{Step: step}
	for k := 0; k < h.Chains; k++ {
		for _, i := range h.Coords {
			d.Theta = append(d.Theta, theta[i*h.Chains+k])
		}
		for s := range h.Stats {
			d.Stats = append(d.Stats, stats[s][k])
		}
	}
	return d
}

// writeStream writes a stream of the draws at steps to path and closes it.
func writeStream(t testing.TB, path string, h Header, steps []int) {
	t.Helper()
	if err := createStream(t, path, h, steps).Close(); err != nil {
		t.Fatal(err)
	}
}

// createStream creates the stream at path with header h and writes the
// draws at steps, and returns its Writer, open.
func createStream(t testing.TB, path string, h Header, steps []int) *Writer {
	t.Helper()
	w, err := Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	writeDraws(t, w, steps)
	return w
}

// writeDraws writes the draws at steps with w.
func writeDraws(t testing.TB, w *Writer, steps []int) {
	t.Helper()
	for _, step := range steps {
		theta, stats := testDraw(w.Header(), step)
		if err := w.Write(step, theta, stats...); err != nil {
			t.Fatal(err)
		}
	}
}

// stepsTo returns the steps 1, 2, …, n.
func stepsTo(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i + 1
	}
	return s
}

// checkStream fails unless the stream at path opens with header h, the
// draws at steps, and the given Finished and Torn.
func checkStream(t testing.TB, path string, h Header, steps []int, finished bool, torn int64) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !reflect.DeepEqual(r.Header(), h) {
		t.Errorf("header %+v, want %+v", r.Header(), h)
	}
	if r.Draws() != len(steps) || r.Finished() != finished || r.Torn() != torn {
		t.Errorf("%d draws, finished %t, torn %d; want %d, %t, %d", r.Draws(), r.Finished(), r.Torn(), len(steps), finished, torn)
	}
	for i := 0; ; i++ {
		var d Draw
		err := r.Next(&d)
		if err == io.EOF {
			if i != len(steps) {
				t.Errorf("%d draws read, want %d", i, len(steps))
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if i >= len(steps) {
			t.Fatalf("draw %d of %d read", i+1, len(steps))
		}
		if want := wantDraw(h, steps[i]); !reflect.DeepEqual(d, want) {
			t.Errorf("draw %d: %+v, want %+v", i, d, want)
		}
	}
}

// field returns the uint64 at offset off of the file at path.
func field(t testing.TB, path string, off int) uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) < off+8 {
		t.Fatalf("%s: %d bytes, %v", path, len(b), err)
	}
	return binary.LittleEndian.Uint64(b[off:])
}

// appendBytes appends b to the file at path.
func appendBytes(t testing.TB, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// kill ends w as a killed process does: its file is closed, without Sync,
// Close or Abort.
func kill(w *Writer) { w.f.Close() }

// readStream reads every draw of the stream at path.
func readStream(t testing.TB, path string) (Header, []Draw) {
	t.Helper()
	h, ds, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return h, ds
}

var lp = []Stat{{Name: "lp", Doc: "minus the energy"}}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		h     Header
		steps []int
	}{
		{"one chain, one coordinate", Header{Chains: 1, Dim: 1, Coords: []int{0}}, []int{1, 2, 3}},
		{"first coordinates of several chains", Header{Chains: 3, Dim: 5, Coords: FirstCoords(2, 5), Stats: lp}, []int{10, 20}},
		{"chosen coordinates, two stats, attributes", Header{Chains: 2, Dim: 6, Coords: []int{1, 4, 5},
			Stats: []Stat{{Name: "lp"}, {Name: "energy_2"}}, Attrs: map[string]string{"task": "t", "seed": "3"}}, []int{5, 10, 15, 20}},
		{"no draws", Header{Chains: 4, Dim: 2, Coords: FirstCoords(0, 2), Stats: lp}, nil},
		{"negative step", Header{Chains: 1, Dim: 2, Coords: []int{1}}, []int{-7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trace.bin")
			writeStream(t, path, tc.h, tc.steps)
			h, ds := readStream(t, path)
			if !reflect.DeepEqual(h, tc.h) {
				t.Errorf("header %+v, want %+v", h, tc.h)
			}
			if len(ds) != len(tc.steps) {
				t.Fatalf("%d draws, want %d", len(ds), len(tc.steps))
			}
			for i, step := range tc.steps {
				if want := wantDraw(tc.h, step); !reflect.DeepEqual(ds[i], want) {
					t.Errorf("draw %d: %+v, want %+v", i, ds[i], want)
				}
			}
			info, _ := os.Stat(path)
			if want := int64(prefixLen) + int64(len(mustJSON(t, tc.h))) + int64(len(tc.steps))*tc.h.recordLen(); info.Size() != want {
				t.Errorf("%d bytes, want %d", info.Size(), want)
			}
			checkStream(t, path, tc.h, tc.steps, true, 0)
			if s, f := field(t, path, syncedAt), field(t, path, finishedAt); s != uint64(len(tc.steps)) || f != 1 {
				t.Errorf("synced %d, finished %d; want %d, 1", s, f, len(tc.steps))
			}
			onlyFiles(t, filepath.Dir(path), "trace.bin")
		})
	}
}

func mustJSON(t *testing.T, h Header) []byte {
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// onlyFiles fails unless dir holds exactly the named files.
func onlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

// TestSameDrawsSameBytes: the stream is reproducible.
func TestSameDrawsSameBytes(t *testing.T) {
	h := Header{Chains: 2, Dim: 3, Coords: FirstCoords(3, 3), Stats: lp, Attrs: map[string]string{"b": "2", "a": "1", "c": "3"}}
	var files [][]byte
	for range 2 {
		path := filepath.Join(t.TempDir(), "trace.bin")
		writeStream(t, path, h, []int{1, 2, 3})
		b, _ := os.ReadFile(path)
		files = append(files, b)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("the same draws gave different bytes")
	}
}

// TestUnclosedStreamKeepsDraws: a stream is readable at its path, mode
// 0644, from Create on, with every draw written, however its writer ends:
// still open, killed (its file closed without Sync or Close), or aborted.
func TestUnclosedStreamKeepsDraws(t *testing.T) {
	hs := []Header{
		{Chains: 1, Dim: 1, Coords: []int{0}},
		{Chains: 3, Dim: 4, Coords: []int{1, 3}, Stats: []Stat{{Name: "lp"}, {Name: "u"}}, Attrs: map[string]string{"task": "t"}},
	}
	ends := []struct {
		name string
		end  func(w *Writer)
	}{
		{"writer still open", func(*Writer) {}},
		{"killed", kill},
		{"aborted", (*Writer).Abort},
	}
	for _, h := range hs {
		for _, n := range []int{0, 1, 5} {
			for _, synced := range []int{0, n / 2} {
				for _, e := range ends {
					t.Run(fmt.Sprintf("%d chains, %d draws, %d synced, %s", h.Chains, n, synced, e.name), func(t *testing.T) {
						dir := t.TempDir()
						path := filepath.Join(dir, "trace.bin")
						w, err := Create(path, h)
						if err != nil {
							t.Fatal(err)
						}
						defer w.Abort()
						if info, err := os.Stat(path); err != nil {
							t.Error(err)
						} else if info.Mode().Perm() != 0o644 {
							t.Errorf("being written: mode %v, want 0644", info.Mode())
						}
						writeDraws(t, w, stepsTo(synced))
						if err := w.Sync(); err != nil {
							t.Fatal(err)
						}
						writeDraws(t, w, stepsTo(n)[synced:])
						e.end(w)
						checkStream(t, path, h, stepsTo(n), false, 0)
						if s := field(t, path, syncedAt); s != uint64(synced) {
							t.Errorf("synced %d, want %d", s, synced)
						}
						onlyFiles(t, dir, "trace.bin")
					})
				}
			}
		}
	}
}

// TestAbortThenClose: Abort ends the stream, unfinished; Close and Write
// after it do nothing and fail.
func TestAbortThenClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.bin")
	h := Header{Chains: 2, Dim: 2, Coords: []int{0, 1}}
	w := createStream(t, path, h, stepsTo(3))
	w.Abort()
	w.Abort()
	if err := w.Close(); err != nil {
		t.Errorf("Close after Abort: %v", err)
	}
	theta, _ := testDraw(h, 4)
	if err := w.Write(4, theta); err == nil || !strings.Contains(err.Error(), "write after Close") {
		t.Errorf("Write after Abort: %v", err)
	}
	if err := w.Sync(); err == nil || !strings.Contains(err.Error(), "sync after Close") {
		t.Errorf("Sync after Abort: %v", err)
	}
	checkStream(t, path, h, stepsTo(3), false, 0)
}

// TestKilledWriter: a process killed with SIGKILL while writing leaves
// every draw that Write returned from. The test runs itself as the
// writer.
func TestKilledWriter(t *testing.T) {
	h := Header{Chains: 2, Dim: 3, Coords: []int{0, 2}, Stats: lp}
	const n = 7
	if path := os.Getenv("TRACE_TEST_KILLED_WRITER"); path != "" {
		w, err := Create(path, h)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		for step := 1; step <= n; step++ {
			theta, stats := testDraw(h, step)
			if err := w.Write(step, theta, stats...); err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
			fmt.Println("wrote", step)
		}
		io.Copy(io.Discard, os.Stdin) // until killed, or the test is gone
		os.Exit(1)
	}
	path := filepath.Join(t.TempDir(), "trace.bin")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriter$")
	cmd.Env = append(os.Environ(), "TRACE_TEST_KILLED_WRITER="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != fmt.Sprint("wrote ", n) {
	}
	if sc.Text() != fmt.Sprint("wrote ", n) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the writer stopped: %q", sc.Text())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	checkStream(t, path, h, stepsTo(n), false, 0)
}

// TestTornDraw: a draw cut short at the end of an unfinished stream is
// ignored and reported by Torn; a finished stream with bytes after its
// draws is damaged.
func TestTornDraw(t *testing.T) {
	h := Header{Chains: 2, Dim: 3, Coords: []int{0, 2}, Stats: lp}
	rl := h.recordLen() // 56
	for _, tc := range []struct {
		name   string
		end    func(w *Writer)
		synced int
		extra  int64
		want   string // the error, for a damaged stream
	}{
		{"writer still open", func(*Writer) {}, 0, rl / 2, ""},
		{"writer still open, synced", func(*Writer) {}, 3, 1, ""},
		{"killed", kill, 2, rl - 1, ""},
		{"aborted", (*Writer).Abort, 3, rl / 2, ""},
		{"closed", func(w *Writer) { w.Close() }, 3, rl / 2, "a finished stream of 3 draws of 56 bytes, the file has 196 bytes of draws"},
		{"closed, a whole draw after", func(w *Writer) { w.Close() }, 3, rl, "a finished stream of 3 draws of 56 bytes, the file has 224 bytes of draws"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trace.bin")
			w, err := Create(path, h)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			writeDraws(t, w, stepsTo(tc.synced))
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
			writeDraws(t, w, stepsTo(3)[tc.synced:])
			tc.end(w)
			appendBytes(t, path, bytes.Repeat([]byte{0xff}, int(tc.extra)))
			if tc.want == "" {
				checkStream(t, path, h, stepsTo(3), false, tc.extra)
				return
			}
			if _, err := Open(path); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open: %v, want an ErrFormat with %q", err, tc.want)
			}
		})
	}
}

// TestSync: Sync records the draws written in the field synced; a file
// with fewer complete draws than that is damaged; Close records them all
// and sets finished.
func TestSync(t *testing.T) {
	h := Header{Chains: 2, Dim: 3, Coords: []int{0, 2}, Stats: lp}
	path := filepath.Join(t.TempDir(), "trace.bin")
	w, err := Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for _, n := range []int{0, 2, 4, 4, 6} {
		writeDraws(t, w, stepsTo(n)[w.Draws():])
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		if s, f := field(t, path, syncedAt), field(t, path, finishedAt); s != uint64(n) || f != 0 {
			t.Errorf("after %d draws: synced %d, finished %d", n, s, f)
		}
	}
	writeDraws(t, w, []int{7})
	if s := field(t, path, syncedAt); s != 6 {
		t.Errorf("a draw after Sync: synced %d, want 6", s)
	}
	checkStream(t, path, h, stepsTo(7), false, 0)

	// the synced draws are cut: damaged
	b, _ := os.ReadFile(path)
	cut := filepath.Join(filepath.Dir(path), "cut.bin")
	os.WriteFile(cut, b[:len(b)-int(2*h.recordLen())+5], 0o644)
	if _, err := Open(cut); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "the header counts 6 draws synced to disk, the file has 5 complete draws of 56 bytes") {
		t.Errorf("fewer draws than synced: %v", err)
	}

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if s, f := field(t, path, syncedAt), field(t, path, finishedAt); s != 7 || f != 1 {
		t.Errorf("after Close: synced %d, finished %d; want 7, 1", s, f)
	}
	checkStream(t, path, h, stepsTo(7), true, 0)
	if err := w.Sync(); err == nil || !strings.Contains(err.Error(), "sync after Close") {
		t.Errorf("Sync after Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
}

// TestWriteErrorKeepsDraws: a write that fails gives the stream up: Write,
// Sync and Close return its error, and the draws before it stay readable.
func TestWriteErrorKeepsDraws(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.bin")
	h := Header{Chains: 2, Dim: 2, Coords: []int{0, 1}}
	w := createStream(t, path, h, stepsTo(3))
	w.f.Close() // the next write fails
	theta, _ := testDraw(h, 4)
	werr := w.Write(4, theta)
	if werr == nil || !strings.Contains(werr.Error(), path) {
		t.Fatalf("no write error naming the file: %v", werr)
	}
	if w.Draws() != 3 {
		t.Errorf("%d draws after the error, want 3", w.Draws())
	}
	for name, err := range map[string]error{"Write": w.Write(5, theta), "Sync": w.Sync(), "Close": w.Close()} {
		if err != werr {
			t.Errorf("%s: %v, want %v", name, err, werr)
		}
	}
	checkStream(t, path, h, stepsTo(3), false, 0)
}

// TestCreateRefusesExisting: Create never replaces a file.
func TestCreateRefusesExisting(t *testing.T) {
	dir := t.TempDir()
	h := Header{Chains: 1, Dim: 1, Coords: []int{0}}
	stream := filepath.Join(dir, "trace.bin")
	writeStream(t, stream, h, stepsTo(2))
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("keep"), 0o600)
	for _, path := range []string{stream, other} {
		before, _ := os.ReadFile(path)
		if _, err := Create(path, h); !errors.Is(err, os.ErrExist) || !strings.Contains(err.Error(), path) {
			t.Errorf("Create over %s: %v, want os.ErrExist", path, err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Errorf("%s changed", path)
		}
	}
	checkStream(t, stream, h, stepsTo(2), true, 0)
	if _, err := Create(filepath.Join(dir, "none", "trace.bin"), h); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Create in a missing directory: %v", err)
	}
}

// TestAppend: a stream interrupted in any way and continued with Append
// from a number of draws equals, byte for byte, the stream of a run that
// wrote the same draws without interruption.
func TestAppend(t *testing.T) {
	h := Header{Chains: 2, Dim: 3, Coords: []int{0, 2}, Stats: lp, Attrs: map[string]string{"task": "t", "seed": "1"}}
	other := h
	other.Attrs = map[string]string{"task": "t", "seed": "1", "resumed": "yes"}
	const total = 6
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.bin")
	writeStream(t, whole, h, stepsTo(total))
	want, _ := os.ReadFile(whole)
	rl := int(h.recordLen())
	for _, tc := range []struct {
		name    string
		written int              // draws written before the interruption
		synced  int              // of which synced
		end     func(w *Writer)  // the interruption
		torn    int              // bytes of a torn draw after them
		from    int              // the draws the run continues after
		run     Header           // the run's header
		again   func(*testing.T) // more interruptions after the first Append
	}{
		{name: "killed with a torn draw", written: 4, synced: 3, end: kill, torn: rl / 2, from: 3, run: h},
		{name: "killed, every draw kept", written: 4, synced: 4, end: kill, from: 4, run: h},
		{name: "closed", written: 4, synced: 4, end: func(w *Writer) { w.Close() }, from: 4, run: h},
		{name: "closed, back before the synced draws", written: 5, synced: 5, end: func(w *Writer) { w.Close() }, from: 2, run: h},
		{name: "aborted, unsynced draws kept", written: 5, synced: 1, end: (*Writer).Abort, from: 4, run: h},
		{name: "from no draws", written: 2, synced: 2, end: kill, torn: 1, from: 0, run: h},
		{name: "all draws written", written: total, synced: 0, end: kill, from: total, run: h},
		{name: "the run's attributes differ", written: 3, synced: 3, end: kill, from: 3, run: other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trace.bin")
			w := createStream(t, path, h, stepsTo(tc.synced))
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
			writeDraws(t, w, stepsTo(tc.written)[tc.synced:])
			tc.end(w)
			appendBytes(t, path, bytes.Repeat([]byte{0xff}, tc.torn))

			w, err := Append(path, tc.run, tc.from)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			if w.Draws() != tc.from || !reflect.DeepEqual(w.Header(), h) {
				t.Errorf("Append: %d draws, header %+v; want %d, the file's %+v", w.Draws(), w.Header(), tc.from, h)
			}
			checkStream(t, path, h, stepsTo(tc.from), false, 0)
			if s, f := field(t, path, syncedAt), field(t, path, finishedAt); s != uint64(tc.from) || f != 0 {
				t.Errorf("after Append: synced %d, finished %d; want %d, 0", s, f, tc.from)
			}
			writeDraws(t, w, stepsTo(total)[tc.from:])
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
				t.Errorf("the continued stream differs from the uninterrupted one (%d bytes, want %d)", len(got), len(want))
			}
		})
	}

	// interrupted twice
	path := filepath.Join(t.TempDir(), "trace.bin")
	w := createStream(t, path, h, stepsTo(2))
	kill(w)
	var err error
	for _, from := range []int{2, 4} {
		if w, err = Append(path, h, from); err != nil {
			t.Fatal(err)
		}
		writeDraws(t, w, stepsTo(from + 2)[from:])
		kill(w)
	}
	if w, err = Append(path, h, 6); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Errorf("interrupted twice: the stream differs from the uninterrupted one")
	}
}

// TestAppendRefuses: Append refuses another run's stream, a stream with
// too few draws, a version-1 stream and a damaged one, naming the
// problem, and leaves the file as it was.
func TestAppendRefuses(t *testing.T) {
	h := Header{Chains: 2, Dim: 3, Coords: []int{0, 2}, Stats: lp}
	dir := t.TempDir()
	stream := filepath.Join(dir, "trace.bin")
	w := createStream(t, stream, h, stepsTo(3))
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	kill(w)
	appendBytes(t, stream, make([]byte, 10)) // a torn draw, not counted

	v1 := filepath.Join(dir, "v1.bin")
	os.WriteFile(v1, v1File(h, 3, wantDraws(h, stepsTo(3))), 0o644)
	b, _ := os.ReadFile(stream)
	binary.LittleEndian.PutUint64(b[syncedAt:], 4)
	damaged := filepath.Join(dir, "damaged.bin")
	os.WriteFile(damaged, b, 0o644)

	with := func(f func(*Header)) Header {
		c := h
		c.Coords = slices.Clone(h.Coords)
		c.Stats = slices.Clone(h.Stats)
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name   string
		path   string
		h      Header
		draws  int
		want   string
		target error // that the error wraps, if any
	}{
		{"other chains", stream, with(func(h *Header) { h.Chains = 3 }), 3, "the stream's header differs from the run's in Chains: 2 in the stream, 3 in the run", nil},
		{"other dimension", stream, with(func(h *Header) { h.Dim = 4 }), 3, "differs from the run's in Dim: 3 in the stream, 4 in the run", nil},
		{"other coordinates", stream, with(func(h *Header) { h.Coords = []int{0, 1} }), 3, "differs from the run's in Coords: [0 2] in the stream, [0 1] in the run", nil},
		{"other dimension and coordinates", stream, with(func(h *Header) { h.Dim, h.Coords = 5, []int{0, 4} }), 3, "differs from the run's in Dim:", nil},
		{"no stats", stream, with(func(h *Header) { h.Stats = nil }), 3, "differs from the run's in Stats:", nil},
		{"another stat's doc", stream, with(func(h *Header) { h.Stats[0].Doc = "" }), 3, "differs from the run's in Stats:", nil},
		{"too few draws", stream, h, 4, "it holds 3 complete draws, the run continues after 4", ErrFormat},
		{"negative draws", stream, h, -1, "continuing after -1 draws, want at least 0", nil},
		{"version 1", v1, h, 3, "a stream of format version 1 cannot be continued", nil},
		{"damaged", damaged, h, 3, "the header counts 4 draws synced to disk, the file has 3 complete draws", ErrFormat},
		{"missing", filepath.Join(dir, "none.bin"), h, 0, "none.bin", os.ErrNotExist},
	} {
		before, _ := os.ReadFile(tc.path)
		w, err := Append(tc.path, tc.h, tc.draws)
		if err == nil {
			w.Abort()
			t.Errorf("%s: Append works", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) || (tc.target != nil && !errors.Is(err, tc.target)) {
			t.Errorf("%s: %v, want an error naming the file with %q (wrapping %v)", tc.name, err, tc.want, tc.target)
		}
		if after, _ := os.ReadFile(tc.path); !bytes.Equal(before, after) {
			t.Errorf("%s: the file changed", tc.name)
		}
	}
}

// v1File is a stream of format version 1 with header h, the draw count
// count and the draws ds.
func v1File(h Header, count uint64, ds []Draw) []byte {
	head, _ := json.Marshal(h)
	b := make([]byte, 24, 24+len(head))
	copy(b, Magic)
	binary.LittleEndian.PutUint32(b[8:], 1)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(head)))
	binary.LittleEndian.PutUint64(b[16:], count)
	b = append(b, head...)
	for _, d := range ds {
		b = binary.LittleEndian.AppendUint64(b, uint64(int64(d.Step)))
		for _, x := range append(slices.Clone(d.Theta), d.Stats...) {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
	}
	return b
}

// wantDraws are wantDraw's draws at steps.
func wantDraws(h Header, steps []int) []Draw {
	ds := make([]Draw, len(steps))
	for i, s := range steps {
		ds[i] = wantDraw(h, s)
	}
	return ds
}

// TestVersion1: a stream of format version 1 reads, finished, and a
// damaged one is refused as it always was.
func TestVersion1(t *testing.T) {
	dir := t.TempDir()
	h := Header{Chains: 2, Dim: 3, Coords: []int{0, 2}, Stats: lp, Attrs: map[string]string{"task": "t"}}
	for _, steps := range [][]int{nil, {5}, {1, 2, 3}} {
		path := filepath.Join(dir, "v1.bin")
		os.WriteFile(path, v1File(h, uint64(len(steps)), wantDraws(h, steps)), 0o644)
		checkStream(t, path, h, steps, true, 0)
	}
	b := v1File(h, 3, wantDraws(h, stepsTo(3)))
	count := func(n uint64) []byte {
		c := bytes.Clone(b)
		binary.LittleEndian.PutUint64(c[16:], n)
		return c
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"fixed header cut", b[:20], "20 bytes, shorter than the 24 of the fixed header"},
		{"truncated", b[:len(b)-1], "the header counts 3 draws of 56 bytes, the file has 167 bytes of draws"},
		{"trailing bytes", append(bytes.Clone(b), 0), "the header counts 3 draws of 56 bytes, the file has 169 bytes of draws"},
		{"count too high", count(4), "the header counts 4 draws"},
		{"count too low", count(2), "the header counts 2 draws"},
		{"count overflows", count(math.MaxUint64), "the header counts 18446744073709551615 draws"},
	} {
		path := filepath.Join(dir, "bad.bin")
		os.WriteFile(path, tc.data, 0o644)
		if _, err := Open(path); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an ErrFormat with %q", tc.name, err, tc.want)
		}
	}
}

func TestBadHeadersAndDraws(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		h    Header
		want string
	}{
		{Header{Chains: 0, Dim: 2, Coords: []int{0}}, "0 chains"},
		{Header{Chains: 1, Dim: 2}, "no coordinates traced"},
		{Header{Chains: 1, Dim: 2, Coords: []int{2}}, "coordinate 2 is outside θ's 2 dimensions"},
		{Header{Chains: 1, Dim: 3, Coords: []int{1, 1}}, "want them increasing"},
		{Header{Chains: 1, Dim: 3, Coords: []int{0}, Stats: []Stat{{Name: "1lp"}}}, `sample stat name "1lp"`},
		{Header{Chains: 1, Dim: 3, Coords: []int{0}, Stats: []Stat{{Name: "a b"}}}, `sample stat name "a b"`},
		{Header{Chains: 1, Dim: 3, Coords: []int{0}, Stats: []Stat{{Name: "lp"}, {Name: "lp"}}}, `"lp" is used twice`},
		{Header{Chains: 1, Dim: 3, Coords: []int{0}, Stats: []Stat{{Name: "draw"}}}, `"draw" is used twice or names a dimension`},
	} {
		if _, err := Create(filepath.Join(dir, "t"), tc.h); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.h, err, tc.want)
		}
	}
	onlyFiles(t, dir)

	h := Header{Chains: 2, Dim: 2, Coords: []int{1}, Stats: lp}
	w, err := Create(filepath.Join(dir, "t"), h)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for _, tc := range []struct {
		theta []float64
		stats [][]float64
		want  string
	}{
		{make([]float64, 3), [][]float64{{1, 2}}, "θ has 3 values, want 4 (2 dimensions × 2 chains)"},
		{make([]float64, 4), nil, "0 sample stats, want 1"},
		{make([]float64, 4), [][]float64{{1}}, "sample stat lp has 1 values, want one per chain (2)"},
	} {
		if err := w.Write(1, tc.theta, tc.stats...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Write: %v, want %q", err, tc.want)
		}
	}
	if w.Draws() != 0 {
		t.Errorf("%d draws after bad writes", w.Draws())
	}
}

// TestOpenRefusesDamagedFiles: a file that is not a stream, or a damaged
// one, is refused with an error wrapping ErrFormat.
func TestOpenRefusesDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.bin")
	h := Header{Chains: 2, Dim: 3, Coords: []int{0, 2}, Stats: lp}
	writeStream(t, good, h, []int{1, 2, 3})
	b, _ := os.ReadFile(good)
	set := func(off int, v uint64, size int) []byte {
		c := bytes.Clone(b)
		if size == 4 {
			binary.LittleEndian.PutUint32(c[off:], uint32(v))
		} else {
			binary.LittleEndian.PutUint64(c[off:], v)
		}
		return c
	}
	badJSON := bytes.Clone(b)
	badJSON[prefixLen] = '['
	badHeader := bytes.Clone(b)
	copy(badHeader[prefixLen:], `{"chains":0,`)
	unfinished := set(finishedAt, 0, 8)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, `it does not start with "MSGTRACE"`},
		{"magic cut", b[:5], `it does not start with "MSGTRACE"`},
		{"version cut", b[:10], "10 bytes, shorter than the 32 of the fixed header"},
		{"fixed header cut", b[:20], "20 bytes, shorter than the 32 of the fixed header"},
		{"another file", []byte("step,chain,theta_0\n1,0,0.5\n"), `it does not start with "MSGTRACE"`},
		{"a later version", set(8, 3, 4), "format version 3, this program reads versions 1 and 2"},
		{"version 0", set(8, 0, 4), "format version 0, this program reads versions 1 and 2"},
		{"header longer than the file", set(12, uint64(len(b)), 4), "a header of"},
		{"header beyond the limit", set(12, maxHeaderLen+1, 4), "a header of"},
		{"bad JSON", badJSON, "header: "},
		{"bad header", badHeader, "header: 0 chains"},
		{"finished, truncated", b[:len(b)-1], "the header counts 3 draws synced to disk, the file has 2 complete draws of 56 bytes"},
		{"unfinished, truncated", unfinished[:len(b)-1], "the header counts 3 draws synced to disk, the file has 2 complete draws of 56 bytes"},
		{"finished, trailing bytes", append(bytes.Clone(b), 0), "a finished stream of 3 draws of 56 bytes, the file has 169 bytes of draws"},
		{"finished, count too low", set(syncedAt, 2, 8), "a finished stream of 2 draws of 56 bytes, the file has 168 bytes of draws"},
		{"synced too high", set(syncedAt, 4, 8), "the header counts 4 draws synced to disk, the file has 3 complete draws"},
		{"synced overflows", set(syncedAt, math.MaxUint64, 8), "the header counts 18446744073709551615 draws synced to disk"},
		{"finished neither 0 nor 1", set(finishedAt, 2, 8), "the field finished is 2, want 0 or 1"},
	} {
		path := filepath.Join(dir, "bad.bin")
		os.WriteFile(path, tc.data, 0o644)
		r, err := Open(path)
		if err == nil {
			r.Close()
		}
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want an ErrFormat naming the file with %q", tc.name, err, tc.want)
		}
	}
	if _, err := Open(filepath.Join(dir, "none.bin")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestFirstCoords(t *testing.T) {
	for _, tc := range []struct {
		n, d int
		want []int
	}{
		{3, 5, []int{0, 1, 2}},
		{0, 3, []int{0, 1, 2}},
		{-1, 2, []int{0, 1}},
		{10, 2, []int{0, 1}},
		{1, 1, []int{0}},
	} {
		if got := FirstCoords(tc.n, tc.d); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("FirstCoords(%d, %d) = %v, want %v", tc.n, tc.d, got, tc.want)
		}
	}
}
