package mnist

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// IDX magic numbers: two zero bytes, the element type (0x08, unsigned byte)
// and the number of dimensions.
const (
	ImagesMagic = 0x00000803 // magic number of an IDX file of images (3 dimensions)
	LabelsMagic = 0x00000801 // magic number of an IDX file of labels (1 dimension)
)

// maxPayload bounds the pixel or label bytes a header may declare (the
// training images take 47 MB). Memory is allocated as the data actually
// arrives, never up front for the declared size.
const maxPayload = 1 << 30

// FormatError reports a malformed, truncated or corrupt MNIST file.
type FormatError struct {
	File    string // the file (or stream) name
	Problem string // what is wrong, one line
	Err     error  // the underlying error, if any
}

// Error returns "mnist: FILE: PROBLEM".
func (e *FormatError) Error() string {
	return "mnist: " + e.File + ": " + e.Problem
}

// Unwrap returns the underlying error, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// gzipError marks an error raised by the gzip decompressor.
type gzipError struct{ err error }

func (e gzipError) Error() string { return e.err.Error() }
func (e gzipError) Unwrap() error { return e.err }

// errAfterGzip reports bytes after the end of the (single-member) gzip
// stream.
var errAfterGzip = errors.New("data after the end of the gzip stream")

// gzipReader returns the decompressor's errors (other than io.EOF) as
// gzipError, and reports bytes after the gzip stream as errAfterGzip.
type gzipReader struct {
	z     *gzip.Reader
	under io.Reader
}

func (g gzipReader) Read(p []byte) (int, error) {
	n, err := g.z.Read(p)
	if err == io.EOF {
		var b [1]byte
		if k, _ := io.ReadFull(g.under, b[:]); k > 0 {
			err = errAfterGzip
		}
	}
	if err != nil && err != io.EOF {
		err = gzipError{err}
	}
	return n, err
}

// maybeGunzip returns a reader of the decompressed stream if r starts with
// the gzip magic bytes 1f 8b, and of r itself otherwise (an IDX stream
// starts with two zero bytes).
func maybeGunzip(r io.Reader, name string) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(2)
	if err != nil && len(head) < 2 {
		if err == io.EOF {
			if len(head) == 0 {
				return nil, &FormatError{File: name, Problem: "empty file"}
			}
			return br, nil // too short for anything; the IDX reader says so
		}
		return nil, &FormatError{File: name, Problem: "read error: " + err.Error(), Err: err}
	}
	if head[0] != 0x1f || head[1] != 0x8b {
		return br, nil
	}
	return gunzip(br, name)
}

// gunzip returns a reader of the decompressed gzip stream r.
func gunzip(r io.Reader, name string) (io.Reader, error) {
	z, err := gzip.NewReader(r)
	if err != nil {
		switch {
		case err == io.EOF:
			return nil, &FormatError{File: name, Problem: "empty file", Err: err}
		case err == io.ErrUnexpectedEOF:
			return nil, &FormatError{File: name, Problem: "truncated gzip header", Err: err}
		case errors.Is(err, gzip.ErrHeader):
			return nil, &FormatError{File: name, Problem: "not a gzip file (bad gzip header)", Err: err}
		}
		return nil, &FormatError{File: name, Problem: "corrupt gzip stream: " + err.Error(), Err: err}
	}
	z.Multistream(false) // MNIST files are one gzip member; more is trailing data
	return gzipReader{z: z, under: r}, nil
}

// streamError turns a read error met after got bytes of a stream that should
// hold want (of which what) into a FormatError.
func streamError(name string, err error, what string, got, want int64) error {
	var gz gzipError
	if errors.As(err, &gz) {
		if errors.Is(gz.err, io.ErrUnexpectedEOF) {
			return &FormatError{File: name, Err: err, Problem: fmt.Sprintf(
				"truncated gzip stream: it ends after %d of the %d decompressed bytes of %s", got, want, what)}
		}
		return &FormatError{File: name, Err: err, Problem: fmt.Sprintf(
			"corrupt gzip stream after %d decompressed bytes: %v", got, gz.err)}
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &FormatError{File: name, Err: err, Problem: fmt.Sprintf(
			"truncated: the stream ends after %d of the %d bytes of %s", got, want, what)}
	}
	return &FormatError{File: name, Err: err, Problem: "read error: " + err.Error()}
}

// readFull reads exactly n bytes from r. Unless n is the size the caller
// expects (expect), it grows its buffer as data arrives, so a header that
// declares far more data than the stream holds costs no more memory than the
// stream itself.
func readFull(r io.Reader, n, expect int64, name, what string, offset int64) ([]byte, error) {
	const chunk = 64 << 10
	initial := min(n, chunk)
	if n == expect {
		initial = n
	}
	buf := make([]byte, 0, initial)
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), min(2*int64(cap(buf)), n))
			copy(nb, buf)
			buf = nb
		}
		k, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err != nil {
			return nil, streamError(name, err, what, offset+int64(len(buf)), offset+n)
		}
	}
	return buf, nil
}

// checkEnd checks that r holds no more data after the declared want bytes,
// and reads a gzip stream to its end so that its checksum is verified.
func checkEnd(r io.Reader, name string, want int64) error {
	const limit = 1 << 20
	n, err := io.Copy(io.Discard, io.LimitReader(r, limit+1))
	if err != nil {
		var gz gzipError
		switch {
		case errors.As(err, &gz) && errors.Is(gz.err, io.ErrUnexpectedEOF):
			return &FormatError{File: name, Err: err, Problem: fmt.Sprintf(
				"truncated gzip stream: it ends after the %d declared bytes but before its trailer", want+n)}
		case errors.As(err, &gz) && errors.Is(gz.err, errAfterGzip):
			return &FormatError{File: name, Err: err, Problem: "trailing data after the gzip stream"}
		}
		return streamError(name, err, "the file", want+n, want)
	}
	switch {
	case n > limit:
		return &FormatError{File: name, Problem: fmt.Sprintf(
			"trailing data: more than %d bytes after the %d bytes the header declares", limit, want)}
	case n > 0:
		return &FormatError{File: name, Problem: fmt.Sprintf(
			"trailing data: %d bytes after the %d bytes the header declares", n, want)}
	}
	return nil
}

// header reads an IDX header with the given magic number and number of
// dimensions and returns the dimensions.
func header(r io.Reader, name string, magic uint32, kind string) ([]int64, error) {
	ndim := int(magic & 0xff)
	hdr := make([]byte, 4+4*ndim)
	k, err := io.ReadFull(r, hdr)
	if err != nil {
		if k >= 4 && binary.BigEndian.Uint32(hdr) != magic {
			return nil, badMagic(name, binary.BigEndian.Uint32(hdr), magic, kind)
		}
		if err == io.EOF {
			return nil, &FormatError{File: name, Problem: "empty stream", Err: err}
		}
		return nil, streamError(name, err, "the header", int64(k), int64(len(hdr)))
	}
	if got := binary.BigEndian.Uint32(hdr); got != magic {
		return nil, badMagic(name, got, magic, kind)
	}
	dims := make([]int64, ndim)
	for i := range dims {
		dims[i] = int64(binary.BigEndian.Uint32(hdr[4+4*i:]))
	}
	return dims, nil
}

func badMagic(name string, got, want uint32, kind string) error {
	p := fmt.Sprintf("bad magic number 0x%08x, want 0x%08x (IDX %s)", got, want, kind)
	switch {
	case got == ImagesMagic || got == LabelsMagic:
		p += "; images and labels swapped?"
	case got>>16 == 0x1f8b:
		p += "; gzip data inside a gzip stream?"
	}
	return &FormatError{File: name, Problem: p}
}

// readImagesStream reads an IDX file of unsigned-byte images (magic
// 0x00000803) from r, gzipped or not (a stream starting with the gzip magic
// bytes is decompressed), and returns the number of images, their geometry
// and the raw pixels, image after image, row-major. It checks that the
// stream holds exactly the bytes the header declares: truncated or trailing
// data (a second gzip member included) is an error. Memory grows with the
// data actually read, whatever the header declares. Errors are
// *FormatError naming name. It does not require 28×28 images nor the MNIST
// counts: Load does. It is the readers' entry point for the tests and the
// fuzz targets, which feed it any bytes.
func readImagesStream(r io.Reader, name string) (n, rows, cols int, pixels []byte, err error) {
	if r, err = maybeGunzip(r, name); err != nil {
		return 0, 0, 0, nil, err
	}
	return readImages(r, name, -1)
}

// readImages reads an uncompressed IDX images stream. If the header declares
// expect bytes of pixels, the buffer for them is allocated at once.
func readImages(r io.Reader, name string, expect int64) (n, rows, cols int, pixels []byte, err error) {
	dims, err := header(r, name, ImagesMagic, "images")
	if err != nil {
		return 0, 0, 0, nil, err
	}
	if dims[1] == 0 || dims[2] == 0 {
		return 0, 0, 0, nil, &FormatError{File: name, Problem: fmt.Sprintf("images of %d×%d pixels", dims[1], dims[2])}
	}
	// Each factor is below 2^32: test the product without overflow.
	if dims[1]*dims[2] > maxPayload || dims[0] > maxPayload/(dims[1]*dims[2]) {
		return 0, 0, 0, nil, &FormatError{File: name, Problem: fmt.Sprintf(
			"header declares %d images of %d×%d pixels, more than %d bytes", dims[0], dims[1], dims[2], int64(maxPayload))}
	}
	size := dims[0] * dims[1] * dims[2]
	what := fmt.Sprintf("the header and %d images of %d×%d pixels", dims[0], dims[1], dims[2])
	const hdr = 16
	if pixels, err = readFull(r, size, expect, name, what, hdr); err != nil {
		return 0, 0, 0, nil, err
	}
	if err := checkEnd(r, name, hdr+size); err != nil {
		return 0, 0, 0, nil, err
	}
	return int(dims[0]), int(dims[1]), int(dims[2]), pixels, nil
}

// readLabelsStream reads an IDX file of digit labels (magic 0x00000801)
// from r, gzipped or not (a stream starting with the gzip magic bytes is
// decompressed). It checks that every label is in 0..9 and that the stream
// holds exactly the bytes the header declares (truncated or trailing data
// is an error). Errors are *FormatError naming name. Like
// readImagesStream, it serves the tests and the fuzz targets.
func readLabelsStream(r io.Reader, name string) (labels []int, err error) {
	if r, err = maybeGunzip(r, name); err != nil {
		return nil, err
	}
	return readLabels(r, name, -1)
}

// readLabels reads an uncompressed IDX labels stream. If the header declares
// expect labels, the buffer for them is allocated at once.
func readLabels(r io.Reader, name string, expect int64) ([]int, error) {
	dims, err := header(r, name, LabelsMagic, "labels")
	if err != nil {
		return nil, err
	}
	n := dims[0]
	if n > maxPayload {
		return nil, &FormatError{File: name, Problem: fmt.Sprintf("header declares %d labels, more than %d", n, int64(maxPayload))}
	}
	const hdr = 8
	raw, err := readFull(r, n, expect, name, fmt.Sprintf("the header and %d labels", n), hdr)
	if err != nil {
		return nil, err
	}
	if err := checkEnd(r, name, hdr+n); err != nil {
		return nil, err
	}
	labels := make([]int, n)
	for i, b := range raw {
		if b >= Classes {
			return nil, &FormatError{File: name, Problem: fmt.Sprintf("label %d of image %d outside 0..%d", b, i, Classes-1)}
		}
		labels[i] = int(b)
	}
	return labels, nil
}

// openGzip opens a gzipped file and returns a reader of its decompressed
// content; the file must be closed by the caller.
func openGzip(path string) (*os.File, io.Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("mnist: %w", err)
	}
	r, err := gunzip(bufio.NewReaderSize(f, 1<<16), path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, r, nil
}

// readImagesFile reads a gzipped IDX images file, expecting (for the
// allocation only) expect images of 28×28.
func readImagesFile(path string, expect int) (n, rows, cols int, pixels []byte, err error) {
	f, r, err := openGzip(path)
	if err != nil {
		return 0, 0, 0, nil, err
	}
	defer f.Close()
	return readImages(r, path, int64(expect)*Dim)
}

// readLabelsFile reads a gzipped IDX labels file, expecting (for the
// allocation only) expect labels.
func readLabelsFile(path string, expect int) ([]int, error) {
	f, r, err := openGzip(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLabels(r, path, int64(expect))
}
