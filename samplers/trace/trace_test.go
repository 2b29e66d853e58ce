package trace

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
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

// writeStream writes a stream of the draws at steps to path.
func writeStream(t testing.TB, path string, h Header, steps []int) {
	t.Helper()
	w, err := Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range steps {
		theta, stats := testDraw(h, step)
		if err := w.Write(step, theta, stats...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

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

// TestUnclosedOrAbortedLeavesNothing: until Close, the stream is only a
// temporary file (what a killed process leaves); Abort removes it; a
// write error gives the stream up.
func TestUnclosedOrAbortedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.bin")
	h := Header{Chains: 2, Dim: 2, Coords: []int{0, 1}}
	w, err := Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	theta, _ := testDraw(h, 1)
	for step := 1; step <= 3; step++ {
		if err := w.Write(step, theta); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stream is at its path before Close: %v", err)
	}
	if _, err := Open(w.tmp.Name()); !errors.Is(err, ErrFormat) {
		t.Errorf("the unfinished temporary file opens: %v", err)
	}
	w.Abort()
	onlyFiles(t, dir)
	if err := w.Close(); err != nil {
		t.Errorf("Close after Abort: %v", err)
	}
	if err := w.Write(4, theta); err == nil || !strings.Contains(err.Error(), "write after Close") {
		t.Errorf("Write after Abort: %v", err)
	}
	onlyFiles(t, dir)

	// a stream whose writes fail keeps nothing
	w, err = Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	w.tmp.Close() // the next flush fails
	var werr error
	for step := 1; werr == nil && step < 1<<20; step++ {
		werr = w.Write(step, theta)
	}
	if werr == nil {
		t.Fatal("no write error")
	}
	if err := w.Close(); err == nil || err.Error() != werr.Error() {
		t.Errorf("Close: %v, want %v", err, werr)
	}
	onlyFiles(t, dir)
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

// TestOpenRefusesDamagedFiles: a file that is not a complete stream is
// refused with an error wrapping ErrFormat.
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
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, `it does not start with "MSGTRACE"`},
		{"fixed header cut", b[:20], "20 bytes, shorter than the 24 of the fixed header"},
		{"another file", []byte("step,chain,theta_0\n1,0,0.5\n"), `it does not start with "MSGTRACE"`},
		{"a later version", set(8, 2, 4), "format version 2, this program reads version 1"},
		{"header longer than the file", set(12, uint64(len(b)), 4), "a header of"},
		{"header beyond the limit", set(12, maxHeaderLen+1, 4), "a header of"},
		{"bad JSON", badJSON, "header: "},
		{"bad header", badHeader, "header: 0 chains"},
		{"truncated", b[:len(b)-1], "the header counts 3 draws of 56 bytes, the file has 167 bytes of draws"},
		{"trailing bytes", append(bytes.Clone(b), 0), "the file has 169 bytes of draws"},
		{"count too high", set(16, 4, 8), "the header counts 4 draws"},
		{"count overflows", set(16, math.MaxUint64, 8), "the header counts 18446744073709551615 draws"},
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
