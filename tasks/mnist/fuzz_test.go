package mnist

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// The seed corpora are in testdata/fuzz/FuzzReadImages and
// testdata/fuzz/FuzzReadLabels: valid tiny files (plain and gzipped),
// truncated ones, wrong magic numbers, trailing bytes, huge declared sizes,
// corrupt gzip.

// decompressed returns data, gunzipped if it starts with the gzip magic.
func decompressed(t *testing.T, data []byte) []byte {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return data
	}
	z, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("accepted a stream gzip rejects: %v", err)
	}
	z.Multistream(false)
	out, err := io.ReadAll(z)
	if err != nil {
		t.Fatalf("accepted a stream gzip rejects: %v", err)
	}
	return out
}

// checkFuzzErr checks that a reader's error is a one-line *FormatError.
func checkFuzzErr(t *testing.T, err error) {
	var fe *FormatError
	if !errors.As(err, &fe) || fe.File != "fuzz" {
		t.Fatalf("error %T %v is not a *FormatError for the stream", err, err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error on more than one line: %q", err)
	}
}

func FuzzReadImages(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		n, rows, cols, pixels, err := readImagesStream(bytes.NewReader(data), "fuzz")
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		// Accepted: the stream is exactly the header and the pixels.
		var want bytes.Buffer
		binary.Write(&want, binary.BigEndian, [4]uint32{ImagesMagic, uint32(n), uint32(rows), uint32(cols)})
		want.Write(pixels)
		if len(pixels) != n*rows*cols || !bytes.Equal(decompressed(t, data), want.Bytes()) {
			t.Fatalf("accepted %d images of %d×%d with %d pixels that do not re-encode to the input", n, rows, cols, len(pixels))
		}
	})
}

func FuzzReadLabels(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		labels, err := readLabelsStream(bytes.NewReader(data), "fuzz")
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		var want bytes.Buffer
		binary.Write(&want, binary.BigEndian, [2]uint32{LabelsMagic, uint32(len(labels))})
		for _, l := range labels {
			if l < 0 || l > 9 {
				t.Fatalf("accepted label %d", l)
			}
			want.WriteByte(byte(l))
		}
		if !bytes.Equal(decompressed(t, data), want.Bytes()) {
			t.Fatalf("accepted %d labels that do not re-encode to the input", len(labels))
		}
	})
}
