package music

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// A reader of the part of the MATLAB v5 MAT-file format the music files use
// (see "MATLAB MAT-File Format", The MathWorks): a 128-byte header, then data
// elements, each a tag (type and size; the small-data-element format packs
// both in 4 bytes when the size is at most 4) and data padded to 8 bytes.
// Variables are miMATRIX elements, possibly inside miCOMPRESSED elements (a
// zlib stream of one miMATRIX element). Of the array classes only cell arrays
// (nested miMATRIX elements, column-major) and real numeric arrays (the values
// as one element of a numeric type, column-major; the music files have double
// arrays whose values MATLAB stored as miUINT8) are read.
//
// Every size is checked against the bytes that remain before it is used, so
// a corrupt file gives an error, never a panic or an allocation larger than
// the (decompressed) data.

// Data types of data elements.
const (
	miINT8       = 1
	miUINT8      = 2
	miINT32      = 5
	miUINT32     = 6
	miMATRIX     = 14
	miCOMPRESSED = 15
	miUTF8       = 16
)

// Array classes.
const (
	mxCELL   = 1
	mxDOUBLE = 6
	mxSINGLE = 7
	mxINT8   = 8
	mxUINT8  = 9
	mxINT16  = 10
	mxUINT16 = 11
	mxINT32  = 12
	mxUINT32 = 13
	mxINT64  = 14
	mxUINT64 = 15
)

// miSizes gives the size in bytes of a value of the numeric data types.
var miSizes = map[uint32]int{1: 1, 2: 1, 3: 2, 4: 2, 5: 4, 6: 4, 7: 4, 9: 8, 12: 8, 13: 8}

const (
	matHeaderLen = 128
	// maxMATDepth bounds the nesting of arrays (cells in cells), so that a
	// corrupt file cannot exhaust the stack; the music files nest 2 deep.
	maxMATDepth = 16
	// maxDecompressed bounds the size of one decompressed element.
	maxDecompressed = 1 << 30
)

var miNames = map[uint32]string{
	1: "miINT8", 2: "miUINT8", 3: "miINT16", 4: "miUINT16", 5: "miINT32", 6: "miUINT32",
	7: "miSINGLE", 9: "miDOUBLE", 12: "miINT64", 13: "miUINT64", 14: "miMATRIX",
	15: "miCOMPRESSED", 16: "miUTF8", 17: "miUTF16", 18: "miUTF32",
}

func miName(t uint32) string {
	if n, ok := miNames[t]; ok {
		return n
	}
	return fmt.Sprintf("unknown type %d", t)
}

var mxNames = []string{
	1: "cell array", 2: "struct", 3: "object", 4: "char array", 5: "sparse array",
	6: "double array", 7: "single array", 8: "int8 array", 9: "uint8 array",
	10: "int16 array", 11: "uint16 array", 12: "int32 array", 13: "uint32 array",
	14: "int64 array", 15: "uint64 array", 16: "function handle", 17: "opaque object",
}

// matArray is one array read from a MAT-file.
type matArray struct {
	name    string
	class   uint8
	logical bool
	dims    []int
	cells   []*matArray // cell arrays: the elements, column-major

	// Numeric arrays: the values, column-major, as stored. MATLAB stores
	// values in the smallest type that holds them, so a double array of
	// zeros and ones (as in the music files) has them as miUINT8.
	numeric  bool
	data     []byte
	dataType uint32
	order    binary.ByteOrder
}

// at returns value i (in column-major order) of a numeric array.
func (a *matArray) at(i int) float64 {
	d, o := a.data, a.order
	switch a.dataType {
	case miINT8:
		return float64(int8(d[i]))
	case miUINT8:
		return float64(d[i])
	case 3: // miINT16
		return float64(int16(o.Uint16(d[2*i:])))
	case 4: // miUINT16
		return float64(o.Uint16(d[2*i:]))
	case miINT32:
		return float64(int32(o.Uint32(d[4*i:])))
	case miUINT32:
		return float64(o.Uint32(d[4*i:]))
	case 7: // miSINGLE
		return float64(math.Float32frombits(o.Uint32(d[4*i:])))
	case 9: // miDOUBLE
		return math.Float64frombits(o.Uint64(d[8*i:]))
	case 12: // miINT64
		return float64(int64(o.Uint64(d[8*i:])))
	case 13: // miUINT64
		return float64(o.Uint64(d[8*i:]))
	}
	return math.NaN()
}

// className names the class of a.
func (a *matArray) className() string {
	if int(a.class) < len(mxNames) && mxNames[a.class] != "" {
		if a.logical {
			return "logical " + mxNames[a.class]
		}
		return mxNames[a.class]
	}
	return fmt.Sprintf("array of unknown class %d", a.class)
}

// describe names the class and size of a, as "a 3×4 double array".
func (a *matArray) describe() string {
	cls := a.className()
	if a.class == 0 {
		return "an empty array element"
	}
	if len(a.dims) == 0 {
		return "a " + cls
	}
	ds := make([]string, len(a.dims))
	for i, d := range a.dims {
		ds[i] = fmt.Sprint(d)
	}
	return "a " + strings.Join(ds, "×") + " " + cls
}

// matReader reads data elements in the byte order of one file.
type matReader struct {
	order binary.ByteOrder
}

// parseMAT returns the variables of the MATLAB v5 file b.
func parseMAT(b []byte) ([]*matArray, error) {
	if len(b) < matHeaderLen {
		return nil, fmt.Errorf("not a MATLAB v5 MAT-file: %d bytes, shorter than the %d-byte header", len(b), matHeaderLen)
	}
	text := string(b[:116])
	if i := strings.IndexByte(text, 0); i >= 0 {
		text = text[:i]
	}
	text = strings.TrimRight(text, " ")
	if !strings.HasPrefix(text, "MATLAB") {
		return nil, fmt.Errorf("not a MATLAB v5 MAT-file: the header does not start with \"MATLAB\" (%q)", clip(text, 40))
	}
	var r matReader
	switch string(b[126:128]) {
	case "IM":
		r.order = binary.LittleEndian
	case "MI":
		r.order = binary.BigEndian
	default:
		return nil, fmt.Errorf("not a MATLAB v5 MAT-file: endian indicator %q, want \"IM\" or \"MI\"", b[126:128])
	}
	switch v := r.order.Uint16(b[124:126]); v {
	case 0x0100:
	case 0x0200:
		return nil, fmt.Errorf("MAT-file version 7.3 (HDF5) is not supported; save it with -v7")
	default:
		return nil, fmt.Errorf("MAT-file version 0x%04x is not supported (want 0x0100, MATLAB v5/v7)", v)
	}
	var vars []*matArray
	for off := matHeaderLen; off < len(b); {
		typ, data, next, err := r.element(b, off)
		if err != nil {
			return nil, err
		}
		var a *matArray
		switch typ {
		case miCOMPRESSED:
			a, err = r.compressed(data)
			if err != nil {
				return nil, fmt.Errorf("compressed element at byte %d: %w", off, err)
			}
		case miMATRIX:
			a, err = r.matrix(data, 0)
			if err != nil {
				return nil, fmt.Errorf("matrix element at byte %d: %w", off, err)
			}
		default:
			return nil, fmt.Errorf("data element at byte %d is %s, want miMATRIX or miCOMPRESSED", off, miName(typ))
		}
		vars = append(vars, a)
		off = next
	}
	return vars, nil
}

// element reads the data element at b[off:]: its type, its data and the
// offset of the next element.
func (r matReader) element(b []byte, off int) (typ uint32, data []byte, next int, err error) {
	left := len(b) - off
	if left < 8 {
		return 0, nil, 0, fmt.Errorf("truncated data element at byte %d: %d bytes left, a tag needs 8", off, left)
	}
	w := r.order.Uint32(b[off:])
	if w>>16 != 0 { // small data element: size and type in 4 bytes, data in the next 4
		typ, n := w&0xffff, int(w>>16)
		if n > 4 {
			return 0, nil, 0, fmt.Errorf("small data element at byte %d declares %d bytes (at most 4)", off, n)
		}
		return typ, b[off+4 : off+4+n], off + 8, nil
	}
	typ = w
	n := uint64(r.order.Uint32(b[off+4:]))
	if n > uint64(left-8) {
		return 0, nil, 0, fmt.Errorf("data element (%s) at byte %d declares %d bytes but only %d remain", miName(typ), off, n, left-8)
	}
	next = off + 8 + int(n)
	if typ != miCOMPRESSED { // padded to a multiple of 8 (tolerate a missing final pad)
		next = min(off+8+int((n+7)&^7), len(b))
	}
	return typ, b[off+8 : off+8+int(n)], next, nil
}

// compressed inflates a miCOMPRESSED element and reads the miMATRIX element it
// holds.
func (r matReader) compressed(data []byte) (*matArray, error) {
	zr, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("bad zlib stream: %w", err)
	}
	// Read the tag first so that the buffer is sized by the declared length,
	// bounded by what the compressed bytes can hold; the stream must deliver it.
	var tag [8]byte
	if _, err := io.ReadFull(zr, tag[:]); err != nil {
		return nil, fmt.Errorf("bad zlib stream: %w", errEOF(err))
	}
	var n uint64
	if w := r.order.Uint32(tag[:]); w>>16 == 0 {
		n = uint64(r.order.Uint32(tag[4:]))
	}
	// Deflate expands at most 1032:1; a larger declared size is corrupt.
	if limit := uint64(len(data))*1032 + 64; n > limit || n > maxDecompressed {
		return nil, fmt.Errorf("compressed element of %d bytes declares %d bytes, more than it can hold", len(data), n)
	}
	buf := make([]byte, 8+int(n))
	copy(buf, tag[:])
	if _, err := io.ReadFull(zr, buf[8:]); err != nil {
		return nil, fmt.Errorf("bad zlib stream: %w", errEOF(err))
	}
	// Read to the end of the stream to check its checksum; the element must
	// be all it holds (but a few bytes of padding).
	rest, err := io.ReadAll(io.LimitReader(zr, 8))
	if err != nil {
		return nil, fmt.Errorf("bad zlib stream: %w", errEOF(err))
	}
	if len(rest) == 8 {
		return nil, fmt.Errorf("compressed stream holds more than the one element its tag declares")
	}
	if err := zr.Close(); err != nil {
		return nil, fmt.Errorf("bad zlib stream: %w", err)
	}
	typ, inner, _, err := r.element(buf, 0)
	if err != nil {
		return nil, err
	}
	if typ != miMATRIX {
		return nil, fmt.Errorf("compressed element holds %s, want miMATRIX", miName(typ))
	}
	return r.matrix(inner, 0)
}

func errEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// matrix reads the contents of a miMATRIX element: array flags, dimensions,
// name, then the cells or the values.
func (r matReader) matrix(data []byte, depth int) (*matArray, error) {
	if depth > maxMATDepth {
		return nil, fmt.Errorf("arrays nested more than %d deep", maxMATDepth)
	}
	if len(data) == 0 { // an empty array (MATLAB writes [] in cells this way)
		return &matArray{}, nil
	}
	off := 0
	sub := func(what string, want ...uint32) ([]byte, error) {
		typ, d, next, err := r.element(data, off)
		if err != nil {
			return nil, fmt.Errorf("array %s: %w", what, err)
		}
		for _, w := range want {
			if typ == w {
				off = next
				return d, nil
			}
		}
		return nil, fmt.Errorf("array %s element at byte %d is %s, want %s", what, off, miName(typ), miName(want[0]))
	}
	flags, err := sub("flags", miUINT32)
	if err != nil {
		return nil, err
	}
	if len(flags) != 8 {
		return nil, fmt.Errorf("array flags of %d bytes, want 8", len(flags))
	}
	f := r.order.Uint32(flags)
	a := &matArray{class: uint8(f), logical: f&0x0200 != 0, order: r.order}
	complexArray := f&0x0800 != 0

	dims, err := sub("dimensions", miINT32)
	if err != nil {
		return nil, err
	}
	if len(dims) < 8 || len(dims)%4 != 0 {
		return nil, fmt.Errorf("array dimensions of %d bytes, want at least two 4-byte integers", len(dims))
	}
	a.dims = make([]int, len(dims)/4)
	// count is the number of elements, math.MaxInt if it overflows.
	count, zero := 1, false
	for i := range a.dims {
		d := int(int32(r.order.Uint32(dims[4*i:])))
		if d < 0 {
			return nil, fmt.Errorf("array dimension %d is negative (%d)", i+1, d)
		}
		a.dims[i] = d
		switch {
		case d == 0:
			zero = true
		case count > math.MaxInt/d:
			count = math.MaxInt
		default:
			count *= d
		}
	}
	if zero {
		count = 0
	}

	name, err := sub("name", miINT8, miUINT8, miUTF8)
	if err != nil {
		return nil, err
	}
	a.name = string(name)

	switch a.class {
	case mxCELL:
		// Each cell takes at least the 8 bytes of a tag.
		if count > (len(data)-off)/8 {
			return nil, fmt.Errorf("cell array %q of size %s has %s cells, more than the %d bytes left can hold",
				a.name, a.dimsString(), countString(count), len(data)-off)
		}
		a.cells = make([]*matArray, count)
		for i := range a.cells {
			typ, d, next, err := r.element(data, off)
			if err != nil {
				return nil, fmt.Errorf("cell array %q, cell %d: %w", a.name, i+1, err)
			}
			if typ != miMATRIX {
				return nil, fmt.Errorf("cell array %q, cell %d is %s, want miMATRIX", a.name, i+1, miName(typ))
			}
			c, err := r.matrix(d, depth+1)
			if err != nil {
				return nil, fmt.Errorf("cell array %q, cell %d: %w", a.name, i+1, err)
			}
			a.cells[i] = c
			off = next
		}
	case mxDOUBLE, mxSINGLE, mxINT8, mxUINT8, mxINT16, mxUINT16, mxINT32, mxUINT32, mxINT64, mxUINT64:
		if complexArray {
			return nil, fmt.Errorf("%s %q is complex, want real", a.className(), a.name)
		}
		typ, vals, next, err := r.element(data, off)
		if err != nil {
			return nil, fmt.Errorf("%s %q, values: %w", a.className(), a.name, err)
		}
		size, ok := miSizes[typ]
		if !ok {
			return nil, fmt.Errorf("%s %q stores its values as %s, want a numeric type", a.className(), a.name, miName(typ))
		}
		if len(vals)%size != 0 || len(vals)/size != count {
			return nil, fmt.Errorf("%s %q of size %s holds %d bytes of %s, want %s values",
				a.className(), a.name, a.dimsString(), len(vals), miName(typ), countString(count))
		}
		a.data, a.dataType, a.numeric = vals, typ, true
		off = next
	default:
		// Other classes are not read: the caller reports the class.
	}
	return a, nil
}

func (a *matArray) dimsString() string {
	ds := make([]string, len(a.dims))
	for i, d := range a.dims {
		ds[i] = fmt.Sprint(d)
	}
	return strings.Join(ds, "×")
}

func countString(n int) string {
	if n == math.MaxInt {
		return "an overflowing number of"
	}
	return fmt.Sprint(n)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
