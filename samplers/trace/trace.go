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
//	8       4     uint32 format version, 2
//	12      4     uint32 n, the length of the JSON header
//	16      8     uint64 synced, the number of draws known to be on disk
//	24      8     uint64 finished: 1 once Close completed the stream, else 0
//	32      n     the Header as JSON
//	32+n          the draws, each of 8 + 8·K·(C+S) bytes:
//	                int64   the step of the draw
//	                float64 θ, K·C values, chain-major: coordinate
//	                        Header.Coords[j] of chain k at k·C + j
//	                float64 the sample stats, K·S values, chain-major:
//	                        stat s of chain k at k·S + s
//
// for K chains, C traced coordinates and S sample stats. The same draws
// written with the same header give the same bytes.
//
// # Crashes
//
// The stream is written in place at its path, mode 0644, from Create on:
// Create writes the fixed header and the JSON header and syncs them to
// disk, and Write hands each draw to the operating system in a single
// write, with no buffer of its own. A process that ends in any way, killed
// included, therefore leaves every draw that Write returned from complete
// in the file, followed at most by part of one more draw, a torn draw. A
// machine that goes down while Create runs may leave a file shorter than
// its headers, which Open and Append refuse.
//
// What reaches the disk itself, should the machine go down, is what was
// synced: Sync writes the draws so far to disk, then records their number
// in synced and syncs that. After a lost machine the file holds at least
// the synced draws; later ones may be missing or torn. Close syncs too,
// then sets finished. A run that resumes from a checkpoint continues the
// stream with Append, which cuts it to the draws the checkpoint counts (so
// the checkpoint should count only synced draws) and writes on after them:
// a stream continued so is byte for byte the stream of a run that was
// never interrupted.
//
// A Reader reads the complete draws of a stream, finished or not, and
// ignores a torn draw at the end of an unfinished one (Reader.Torn). It
// refuses as damaged, with ErrFormat, a file with fewer complete draws
// than synced counts, and a finished stream that holds anything but
// exactly its synced draws (a torn draw or bytes after them).
//
// Readers also read format version 1: the same layout with a fixed header
// of 24 bytes, whose uint64 at offset 16 counts the draws, followed by the
// JSON header at offset 24 and the draws. Such a file must hold exactly the
// draws it counts; it is always finished, and Append refuses it.
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
	"slices"
)

// Magic starts every stream file.
const Magic = "MSGTRACE"

// Version is the stream format's version that this package writes. Its
// readers read this version and version 1.
const Version = 2

const (
	// prefixLen is the length of the fixed header before the JSON header.
	prefixLen = 32
	// prefixLenV1 is prefixLen in format version 1.
	prefixLenV1 = 24
	// syncedAt and finishedAt are the offsets of the fields synced and
	// finished.
	syncedAt, finishedAt = 16, 24
)

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
// Create it with Create, or with Append to continue a stream; call Sync to
// make the draws so far durable, and Close when the run ends, also after
// an error, to complete the stream. A Writer is not safe for concurrent
// use.
type Writer struct {
	path   string
	f      *os.File
	h      Header
	rec    []byte // one draw
	base   int64  // the offset of the first draw
	draws  uint64 // the draws in the file
	synced uint64 // the draws that the file's field synced counts
	err    error  // the first write or sync error: the stream is then given up
	closed bool
}

// Create starts a stream at path with header h, written in place with mode
// 0644: the fixed header and h are on disk when it returns. It refuses a
// path that exists, with an error wrapping os.ErrExist (Append continues
// a stream).
func Create(path string, h Header) (*Writer, error) {
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("trace: %s: %v", path, err)
	}
	head, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("trace: %s: %v", path, err)
	}
	if len(head) > maxHeaderLen {
		return nil, fmt.Errorf("trace: %s: a header of %d bytes, more than the %d a reader accepts", path, len(head), maxHeaderLen)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	b := make([]byte, prefixLen+len(head))
	copy(b, Magic)
	binary.LittleEndian.PutUint32(b[8:], Version)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(head)))
	copy(b[prefixLen:], head)
	err = f.Chmod(0o644) // whatever the umask
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("trace: writing %s: %w", path, err)
	}
	return &Writer{path: path, f: f, h: h, rec: make([]byte, h.recordLen()), base: int64(len(b))}, nil
}

// syncDir syncs the directory dir, so that a file created in it stays
// there should the machine go down.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Append continues the version-2 stream at path for a run that resumes
// after draws draws: it checks that the stream's header has h's Chains,
// Dim, Coords and Stats (its Attrs may differ: the file keeps its own
// header, which the Writer's Header returns) and that it holds at least
// draws complete draws, else an error wrapping ErrFormat. It then cuts the
// stream to exactly those draws, records them as synced and the stream as
// unfinished, syncs the file, and returns a Writer that writes on after
// them, its Draws counting from draws. Each of these steps leaves a stream
// that reads, should the machine go down between them. A version-1 stream
// is refused.
func Append(path string, h Header, draws int) (*Writer, error) {
	if draws < 0 {
		return nil, fmt.Errorf("trace: %s: continuing after %d draws, want at least 0", path, draws)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	w, err := appendTo(path, f, h, draws)
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

func appendTo(path string, f *os.File, h Header, draws int) (*Writer, error) {
	r, err := open(path, f)
	if err != nil {
		return nil, err
	}
	if r.version != Version {
		return nil, fmt.Errorf("trace: %s: a stream of format version %d cannot be continued: Append continues streams of version %d only", path, r.version, Version)
	}
	for _, d := range []struct {
		field      string
		equal      bool
		file, want any
	}{
		{"Chains", r.h.Chains == h.Chains, r.h.Chains, h.Chains},
		{"Dim", r.h.Dim == h.Dim, r.h.Dim, h.Dim},
		{"Coords", slices.Equal(r.h.Coords, h.Coords), r.h.Coords, h.Coords},
		{"Stats", slices.Equal(r.h.Stats, h.Stats), r.h.Stats, h.Stats},
	} {
		if !d.equal {
			return nil, fmt.Errorf("trace: %s: the stream's header differs from the run's in %s: %v in the stream, %v in the run", path, d.field, d.file, d.want)
		}
	}
	if r.draws < draws {
		return nil, fmt.Errorf("trace: %s: %w: it holds %d complete draws, the run continues after %d", path, ErrFormat, r.draws, draws)
	}
	rl := r.h.recordLen()
	// unfinished first, then synced no more than the draws kept, then the
	// draws after them cut: a valid stream after each step
	err = putUint64(f, finishedAt, 0)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = putUint64(f, syncedAt, uint64(draws))
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Truncate(r.base + int64(draws)*rl)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return nil, fmt.Errorf("trace: writing %s: %w", path, err)
	}
	return &Writer{path: path, f: f, h: r.h, rec: make([]byte, rl), base: r.base, draws: uint64(draws), synced: uint64(draws)}, nil
}

// putUint64 writes v at offset off of f.
func putUint64(f *os.File, off int64, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	_, err := f.WriteAt(b[:], off)
	return err
}

// Header returns the stream's header.
func (w *Writer) Header() Header { return w.h }

// Draws returns the number of draws in the stream: those written, after
// the draws that Append kept.
func (w *Writer) Draws() int { return int(w.draws) }

// Write appends the draw at step: theta is θ of all chains in the
// coordinate-major layout of samplers.State (coordinate i of chain k at
// i·K + k, length D·K), of which the header's Coords are kept, and stats
// gives the header's sample stats in order, each with one value per chain.
// The draw goes to the operating system in one write before Write returns.
// After an error of that write the stream is given up: later calls return
// the error, and Close returns it too, leaving the draws before it in the
// file as Abort does.
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
	if _, err := w.f.WriteAt(w.rec, w.base+int64(w.draws)*int64(len(w.rec))); err != nil {
		w.err = fmt.Errorf("trace: writing %s: %w", w.path, err)
		return w.err
	}
	w.draws++
	return nil
}

// Sync makes the draws written so far durable: it syncs them to disk,
// then records their number in the file's field synced and syncs that.
// A checkpoint that counts draws should be written after it, so that it
// never counts draws a lost machine took with it. After an error the
// stream is given up, as after a write error; Sync after Close or Abort is
// an error.
func (w *Writer) Sync() error {
	switch {
	case w.closed:
		return fmt.Errorf("trace: syncing %s: sync after Close", w.path)
	case w.err != nil:
		return w.err
	}
	if err := w.sync(); err != nil {
		w.err = fmt.Errorf("trace: syncing %s: %w", w.path, err)
		return w.err
	}
	return nil
}

// sync is Sync without its checks.
func (w *Writer) sync() error {
	if w.synced == w.draws {
		return nil // synced when they were
	}
	if err := w.f.Sync(); err != nil {
		return err
	}
	if err := putUint64(w.f, syncedAt, w.draws); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return err
	}
	w.synced = w.draws
	return nil
}

// Close completes the stream: it syncs the draws as Sync does, then sets
// the field finished, syncs it and closes the file, which then holds
// exactly the draws written. After a write or sync error it closes the
// file as Abort does and returns that error. Calling it again, or after
// Abort, does nothing.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	w.closed = true
	err := w.sync()
	if err == nil {
		err = putUint64(w.f, finishedAt, 1)
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		w.err = fmt.Errorf("trace: writing %s: %w", w.path, err)
		return w.err
	}
	return nil
}

// Abort closes the file without syncing it or marking the stream
// finished: the file keeps the draws written so far, readable as an
// unfinished stream (those after the last Sync only as long as the
// machine stays up until the operating system writes them), and Append
// can continue it. It removes nothing. Calling it after Close, or again,
// does nothing.
func (w *Writer) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	w.f.Close()
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

// Reader reads a stream file draw by draw: its complete draws, of a
// finished or an unfinished stream.
type Reader struct {
	path     string
	f        *os.File
	br       *bufio.Reader
	h        Header
	version  uint32
	base     int64 // the offset of the first draw
	finished bool
	draws    int   // the complete draws
	torn     int64 // the bytes after them
	read     int
	rec      []byte
}

// ErrFormat is wrapped by the errors for a file that is not a stream of
// this format or is a damaged one, and by Append's for a stream with fewer
// draws than the run counts.
var ErrFormat = errors.New("not a complete trace stream")

// Open opens the stream at path and reads its header. It checks the file
// against the header (see the package documentation), so a damaged file is
// refused here, with an error wrapping ErrFormat, rather than half read.
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
	prefix, err := br.Peek(prefixLen)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("trace: reading %s: %w", path, err)
	}
	if len(prefix) < len(Magic) || string(prefix[:len(Magic)]) != Magic {
		return nil, bad("it does not start with %q", Magic)
	}
	var version uint32
	plen := prefixLen
	if len(prefix) >= 12 {
		switch version = binary.LittleEndian.Uint32(prefix[8:]); version {
		case 1:
			plen = prefixLenV1
		case Version:
		default:
			return nil, bad("format version %d, this program reads versions 1 and %d", version, Version)
		}
	}
	if len(prefix) < plen {
		return nil, bad("%d bytes, shorter than the %d of the fixed header", info.Size(), plen)
	}
	n := binary.LittleEndian.Uint32(prefix[12:])
	count := binary.LittleEndian.Uint64(prefix[16:])
	var finished uint64 = 1
	if version == Version {
		finished = binary.LittleEndian.Uint64(prefix[finishedAt:])
	}
	if n > maxHeaderLen || int64(n) > info.Size()-int64(plen) {
		return nil, bad("a header of %d bytes in a file of %d", n, info.Size())
	}
	br.Discard(plen)
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
	base := int64(plen) + int64(n)
	body := info.Size() - base
	r := &Reader{path: path, f: f, br: br, h: h, version: version, base: base, finished: finished == 1, rec: make([]byte, rl)}
	if version == 1 {
		if count > uint64(math.MaxInt64/rl) || body != int64(count)*rl {
			return nil, bad("the header counts %d draws of %d bytes, the file has %d bytes of draws", count, rl, body)
		}
		r.draws = int(count)
		return r, nil
	}
	complete := body / rl
	r.draws, r.torn = int(complete), body%rl
	switch {
	case finished > 1:
		return nil, bad("the field finished is %d, want 0 or 1", finished)
	case count > uint64(complete):
		return nil, bad("the header counts %d draws synced to disk, the file has %d complete draws of %d bytes", count, complete, rl)
	case r.finished && (r.torn != 0 || uint64(complete) != count):
		return nil, bad("a finished stream of %d draws of %d bytes, the file has %d bytes of draws", count, rl, body)
	}
	return r, nil
}

// Header returns the stream's header.
func (r *Reader) Header() Header { return r.h }

// Draws returns the number of complete draws in the stream, which Next
// reads.
func (r *Reader) Draws() int { return r.draws }

// Torn returns the length in bytes of the torn draw that ends an
// unfinished stream, which Next does not read, or 0 where there is none.
func (r *Reader) Torn() int64 { return r.torn }

// Finished reports whether the stream was completed by Close: false for a
// stream still being written, or one whose writer was aborted or killed.
// A stream of format version 1 is always finished.
func (r *Reader) Finished() bool { return r.finished }

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
