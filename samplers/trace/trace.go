// Package trace streams the draws of a sampling run to disk and turns them
// into ArviZ's InferenceData, so that a run of cmd/sample opens in Python
// with arviz.from_netcdf.
//
// # The stream
//
// A Writer appends one draw at a time, in memory O(one draw), to a stream
// file of this package's own format (all integers and floats little-endian):
//
//	offset  size  field
//	0       8     magic "MSGTRACE"
//	8       4     uint32 format version, 1
//	12      4     uint32 n, the length of the JSON header
//	16      8     uint64 the number of draws that follow
//	24      n     the Header as JSON
//	24+n          the draws, each of 8 + 8·K·(C+S) bytes:
//	                int64   the step of the draw
//	                float64 θ, K·C values, chain-major: coordinate
//	                        Header.Coords[j] of chain k at k·C + j
//	                float64 the sample stats, K·S values, chain-major:
//	                        stat s of chain k at k·S + s
//
// for K chains, C traced coordinates and S sample stats. The file is written
// under a temporary name in its directory (".NAME.tmp…") and renamed to its
// name by Close, after the count of draws is filled in and the file synced:
// a run stopped by an error or a signal, which closes the Writer, leaves a
// file with the draws so far, and a process that is killed leaves only the
// temporary file, never a half-written stream. The same draws written with
// the same header give the same bytes.
//
// # ArviZ
//
// WriteNetCDF turns a stream into InferenceData as netCDF-4, the format of
// arviz.to_netcdf: a group "posterior" with the variable theta (chain, draw,
// theta_dim_0) and a group "sample_stats" with one variable (chain, draw)
// per sample stat, with the coordinate variables chain (0…K−1), draw (the
// steps of the draws) and theta_dim_0 (the indices of the traced
// coordinates in θ), and ArviZ's attributes (created_at,
// inference_library, inference_library_version) on the file and on each
// group. netCDF-4 is HDF5 with dimension scales, which no Go module writes:
// WriteNetCDF calls libnetcdf through cgo, built only with the build tag
// netcdf (go build -tags netcdf, with Debian's libnetcdf-dev installed).
// Without the tag it returns an error that says so; NetCDF reports which.
// The same stream converted with the same created_at gives the same bytes.
package trace

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// Magic starts every stream file.
const Magic = "MSGTRACE"

// Version is the stream format's version that this package writes and
// reads.
const Version = 1

// prefixLen is the length of the fixed part before the JSON header.
const prefixLen = 24

// maxHeaderLen bounds the JSON header a Reader accepts (a header lists the
// traced coordinates: 64 MiB is millions of them).
const maxHeaderLen = 64 << 20

// Header describes a stream: its chains, its traced coordinates and its
// sample stats, and the run's attributes.
type Header struct {
	// Chains is the number K of chains, at least 1.
	Chains int `json:"chains"`
	// Dim is the dimension D of θ.
	Dim int `json:"dim"`
	// Coords are the indices in θ, increasing, each in [0, D), of the
	// coordinates traced in every chain: at least one.
	Coords []int `json:"coords"`
	// Stats are the sample stats recorded per chain and draw, in order.
	Stats []Stat `json:"stats,omitempty"`
	// Attrs are the run's attributes (task, sampler, seed, …), written as
	// attributes of the netCDF file.
	Attrs map[string]string `json:"attrs,omitempty"`
}

// Stat is a sample stat: one value per chain and draw.
type Stat struct {
	// Name is the variable's name in ArviZ's group sample_stats, such as
	// "lp".
	Name string `json:"name"`
	// Doc says what the value is; it becomes the variable's long_name.
	Doc string `json:"doc,omitempty"`
}

// check reports whether h describes a stream this package can write.
func (h *Header) check() error {
	switch {
	case h.Chains < 1:
		return fmt.Errorf("%d chains, want at least 1", h.Chains)
	case len(h.Coords) == 0:
		return errors.New("no coordinates traced, want at least 1")
	}
	for j, i := range h.Coords {
		if i < 0 || i >= h.Dim {
			return fmt.Errorf("coordinate %d is outside θ's %d dimensions", i, h.Dim)
		}
		if j > 0 && i <= h.Coords[j-1] {
			return fmt.Errorf("coordinates %d then %d: want them increasing", h.Coords[j-1], i)
		}
	}
	seen := map[string]bool{}
	for _, s := range h.Stats {
		switch {
		case !validName(s.Name):
			return fmt.Errorf("sample stat name %q: want letters, digits and _, not starting with a digit", s.Name)
		case seen[s.Name] || s.Name == "chain" || s.Name == "draw":
			return fmt.Errorf("sample stat name %q is used twice or names a dimension", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// validName reports whether name is a name of a netCDF variable that
// Python reaches as an attribute too: letters, digits and underscores, not
// starting with a digit.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// recordLen is the length in bytes of a draw of h.
func (h *Header) recordLen() int64 {
	return 8 + 8*int64(h.Chains)*int64(len(h.Coords)+len(h.Stats))
}

// FirstCoords returns the indices 0, 1, …, min(n, d)−1; n ≤ 0 gives all d:
// the Coords of a header that traces the first n coordinates.
func FirstCoords(n, d int) []int {
	if n <= 0 || n > d {
		n = d
	}
	c := make([]int, n)
	for i := range c {
		c[i] = i
	}
	return c
}

// Writer appends draws to a stream file (see the package documentation).
// Create it with Create and call Close when the run ends, also after an
// error, to keep the draws written, or Abort to keep nothing.
type Writer struct {
	path   string
	tmp    *os.File
	bw     *bufio.Writer
	h      Header
	rec    []byte // one draw
	draws  uint64
	err    error // the first write error: the stream is then given up
	closed bool
}

// Create starts a stream to path with header h. The stream is written to a
// temporary file beside path until Close renames it.
func Create(path string, h Header) (*Writer, error) {
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("trace: %s: %v", path, err)
	}
	head, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("trace: %s: %v", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	w := &Writer{path: path, tmp: f, bw: bufio.NewWriterSize(f, 1<<16), h: h, rec: make([]byte, h.recordLen())}
	prefix := make([]byte, prefixLen)
	copy(prefix, Magic)
	binary.LittleEndian.PutUint32(prefix[8:], Version)
	binary.LittleEndian.PutUint32(prefix[12:], uint32(len(head)))
	w.bw.Write(prefix)
	if _, err := w.bw.Write(head); err != nil {
		w.Abort()
		return nil, fmt.Errorf("trace: writing %s: %w", path, err)
	}
	return w, nil
}

// Header returns the stream's header.
func (w *Writer) Header() Header { return w.h }

// Draws returns the number of draws written.
func (w *Writer) Draws() int { return int(w.draws) }

// Write appends the draw at step: theta is θ of all chains in the
// coordinate-major layout of samplers.State (coordinate i of chain k at
// i·K + k, length D·K), of which the header's Coords are kept, and stats
// gives the header's sample stats in order, each with one value per chain.
// After an error the stream is given up: Close returns the error and keeps
// nothing.
func (w *Writer) Write(step int, theta []float64, stats ...[]float64) error {
	h := &w.h
	switch {
	case w.closed:
		return fmt.Errorf("trace: writing %s: write after Close", w.path)
	case w.err != nil:
		return w.err
	case len(theta) != h.Dim*h.Chains:
		return fmt.Errorf("trace: writing %s: θ has %d values, want %d (%d dimensions × %d chains)", w.path, len(theta), h.Dim*h.Chains, h.Dim, h.Chains)
	case len(stats) != len(h.Stats):
		return fmt.Errorf("trace: writing %s: %d sample stats, want %d", w.path, len(stats), len(h.Stats))
	}
	for s, v := range stats {
		if len(v) != h.Chains {
			return fmt.Errorf("trace: writing %s: sample stat %s has %d values, want one per chain (%d)", w.path, h.Stats[s].Name, len(v), h.Chains)
		}
	}
	k, c, ns := h.Chains, len(h.Coords), len(h.Stats)
	binary.LittleEndian.PutUint64(w.rec, uint64(int64(step)))
	b := w.rec[8:]
	for ch := 0; ch < k; ch++ {
		for j, i := range h.Coords {
			binary.LittleEndian.PutUint64(b[8*(ch*c+j):], math.Float64bits(theta[i*k+ch]))
		}
	}
	b = b[8*k*c:]
	for ch := 0; ch < k; ch++ {
		for s := range stats {
			binary.LittleEndian.PutUint64(b[8*(ch*ns+s):], math.Float64bits(stats[s][ch]))
		}
	}
	if _, err := w.bw.Write(w.rec); err != nil {
		w.err = fmt.Errorf("trace: writing %s: %w", w.path, err)
		return w.err
	}
	w.draws++
	return nil
}

// Close completes the stream and renames it to its path: the file then
// holds every draw written. After a write error it keeps nothing and
// returns that error. Calling it again does nothing.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	w.closed = true
	err := w.bw.Flush()
	if err == nil {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], w.draws)
		_, err = w.tmp.WriteAt(n[:], 16)
	}
	if err == nil {
		err = w.tmp.Sync()
	}
	if cerr := w.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(w.tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(w.tmp.Name(), w.path)
	}
	if err != nil {
		os.Remove(w.tmp.Name())
		return fmt.Errorf("trace: writing %s: %w", w.path, err)
	}
	return nil
}

// Abort ends the stream and removes it: nothing is left at its path.
// Calling it after Close, or again, does nothing.
func (w *Writer) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	w.tmp.Close()
	os.Remove(w.tmp.Name())
}

// Draw is one draw read back from a stream.
type Draw struct {
	// Step is the step of the run the draw was taken after.
	Step int
	// Theta holds the traced coordinates of every chain, chain-major:
	// coordinate Header.Coords[j] of chain k at k·C + j.
	Theta []float64
	// Stats holds the sample stats of every chain, chain-major: stat s of
	// chain k at k·S + s.
	Stats []float64
}

// Reader reads a stream file draw by draw.
type Reader struct {
	path  string
	f     *os.File
	br    *bufio.Reader
	h     Header
	draws int
	read  int
	rec   []byte
}

// ErrFormat is wrapped by the errors of Open for a file that is not a
// complete stream of this format.
var ErrFormat = errors.New("not a complete trace stream")

// Open opens the stream at path and reads its header. It checks that the
// file holds exactly the draws its header counts, so a truncated or
// otherwise damaged file is refused here rather than half read.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	r, err := open(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func open(path string, f *os.File) (*Reader, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("trace: %s: %w: %s", path, ErrFormat, fmt.Sprintf(format, a...))
	}
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	br := bufio.NewReaderSize(f, 1<<16)
	prefix := make([]byte, prefixLen)
	n0, err := io.ReadFull(br, prefix)
	switch {
	case n0 < len(Magic) || string(prefix[:len(Magic)]) != Magic:
		return nil, bad("it does not start with %q", Magic)
	case err != nil:
		return nil, bad("%d bytes, shorter than the %d of the fixed header", info.Size(), prefixLen)
	}
	if v := binary.LittleEndian.Uint32(prefix[8:]); v != Version {
		return nil, bad("format version %d, this program reads version %d", v, Version)
	}
	n := binary.LittleEndian.Uint32(prefix[12:])
	draws := binary.LittleEndian.Uint64(prefix[16:])
	if n > maxHeaderLen || int64(n) > info.Size()-prefixLen {
		return nil, bad("a header of %d bytes in a file of %d", n, info.Size())
	}
	head := make([]byte, n)
	if _, err := io.ReadFull(br, head); err != nil {
		return nil, fmt.Errorf("trace: %s: %w", path, err)
	}
	var h Header
	if err := json.Unmarshal(head, &h); err != nil {
		return nil, bad("header: %v", err)
	}
	if err := h.check(); err != nil {
		return nil, bad("header: %v", err)
	}
	rl := h.recordLen()
	body := info.Size() - prefixLen - int64(n)
	if draws > uint64(math.MaxInt64/rl) || body != int64(draws)*rl {
		return nil, bad("the header counts %d draws of %d bytes, the file has %d bytes of draws", draws, rl, body)
	}
	return &Reader{path: path, f: f, br: br, h: h, draws: int(draws), rec: make([]byte, rl)}, nil
}

// Header returns the stream's header.
func (r *Reader) Header() Header { return r.h }

// Draws returns the number of draws in the stream.
func (r *Reader) Draws() int { return r.draws }

// Next reads the next draw into d, reusing its slices, and returns io.EOF
// after the last.
func (r *Reader) Next(d *Draw) error {
	if r.read == r.draws {
		return io.EOF
	}
	if _, err := io.ReadFull(r.br, r.rec); err != nil {
		return fmt.Errorf("trace: reading %s: %w", r.path, err)
	}
	r.read++
	k, c, ns := r.h.Chains, len(r.h.Coords), len(r.h.Stats)
	d.Step = int(int64(binary.LittleEndian.Uint64(r.rec)))
	d.Theta = floats(d.Theta, r.rec[8:], k*c)
	d.Stats = floats(d.Stats, r.rec[8+8*k*c:], k*ns)
	return nil
}

// floats decodes n little-endian float64s of b into dst, reallocated if
// too short.
func floats(dst []float64, b []byte, n int) []float64 {
	if cap(dst) < n {
		dst = make([]float64, n)
	}
	dst = dst[:n]
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return dst
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// ReadFile reads the whole stream at path into memory: its header and
// every draw, for a stream that fits (use a Reader otherwise).
func ReadFile(path string) (Header, []Draw, error) {
	r, err := Open(path)
	if err != nil {
		return Header{}, nil, err
	}
	defer r.Close()
	ds := make([]Draw, 0, r.Draws())
	for {
		var d Draw
		switch err := r.Next(&d); {
		case err == io.EOF:
			return r.h, ds, nil
		case err != nil:
			return r.h, ds, err
		}
		ds = append(ds, d)
	}
}
