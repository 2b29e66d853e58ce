package mnist

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// corruptGzip returns a gzip stream of data with byte i (from the end when
// negative) flipped.
func flip(b []byte, i int) []byte {
	b = bytes.Clone(b)
	if i < 0 {
		i += len(b)
	}
	b[i] ^= 0xff
	return b
}

func TestReadImagesValid(t *testing.T) {
	plain := idxImages(3, 2, 2)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"plain", plain},
		{"gzipped", gz(plain)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, rows, cols, pixels, err := readImagesStream(bytes.NewReader(tc.data), "x.idx")
			if err != nil {
				t.Fatal(err)
			}
			if n != 3 || rows != 2 || cols != 2 || !bytes.Equal(pixels, plain[16:]) {
				t.Errorf("got n=%d %d×%d pixels %v, want 3 2×2 %v", n, rows, cols, pixels, plain[16:])
			}
		})
	}
}

func TestReadImagesEmptySet(t *testing.T) {
	n, _, _, pixels, err := readImagesStream(bytes.NewReader(idxImages(0, 28, 28)), "x")
	if err != nil || n != 0 || len(pixels) != 0 {
		t.Errorf("got n=%d, %d pixels, %v", n, len(pixels), err)
	}
}

func TestReadLabelsValid(t *testing.T) {
	plain := idxLabels(5, 0, 4, 1, 9)
	for _, data := range [][]byte{plain, gz(plain)} {
		labels, err := readLabelsStream(bytes.NewReader(data), "y.idx")
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{5, 0, 4, 1, 9}; !equalInts(labels, want) {
			t.Errorf("labels %v, want %v", labels, want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReadImagesErrors(t *testing.T) {
	valid := idxImages(3, 2, 2) // 16 + 12 bytes
	zipped := gz(valid)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty file"},
		{"one byte", []byte{0}, "ends after 1 of the 16 bytes of the header"},
		{"truncated header", valid[:10], "ends after 10 of the 16 bytes of the header"},
		{"bad magic", cat([]byte{0, 0, 9, 3}, valid[4:]), "bad magic number 0x00000903, want 0x00000803"},
		{"labels magic", idxLabels(1, 2, 3), "images and labels swapped"},
		{"short bad magic", []byte{1, 2, 3, 4, 5}, "bad magic number 0x01020304"},
		{"truncated pixels", valid[:20], "truncated: the stream ends after 20 of the 28 bytes of the header and 3 images of 2×2 pixels"},
		{"trailing bytes", cat(valid, []byte{1, 2, 3}), "trailing data: 3 bytes after the 28 bytes"},
		{"zero rows", idxImages(3, 0, 2), "images of 0×2 pixels"},
		{"huge declared size", idxImages(0, 65536, 65536)[:16], "more than 1073741824 bytes"},
		{"huge count", cat([]byte{0, 0, 8, 3, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 28, 0, 0, 0, 28}), "declares 4294967295 images"},
		{"declared far more than given", cat([]byte{0, 0, 8, 3, 0, 0, 0x03, 0xe8, 0, 0, 0x04, 0, 0, 0, 0x04, 0}, make([]byte, 100)), "ends after 116 of the 1048576016 bytes"},
		{"gzip truncated", zipped[:len(zipped)/2], "truncated gzip stream"},
		{"gzip trailer cut", zipped[:len(zipped)-4], "truncated gzip stream: it ends after the 28 declared bytes but before its trailer"},
		{"gzip bad checksum", flip(zipped, -5), "corrupt gzip stream after 28 decompressed bytes: gzip: invalid checksum"},
		{"gzip bad header", flip(zipped, 2), "gzip"},
		{"gzip header only", zipped[:5], "truncated gzip header"},
		{"gzip trailing garbage", cat(zipped, []byte("garbage")), "trailing data after the gzip stream"},
		{"gzip two members", cat(zipped, gz([]byte{1})), "trailing data after the gzip stream"},
		{"gzip of truncated", gz(valid[:20]), "truncated: the stream ends after 20 of the 28 bytes"},
		{"gzip of trailing", gz(cat(valid, []byte{7})), "trailing data: 1 bytes after the 28 bytes"},
		{"gzip in gzip", gz(zipped), "gzip data inside a gzip stream?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, _, err := readImagesStream(bytes.NewReader(tc.data), "f.gz")
			checkErr(t, err, tc.want)
		})
	}
}

func TestReadLabelsErrors(t *testing.T) {
	valid := idxLabels(1, 2, 3, 4)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty file"},
		{"truncated header", valid[:6], "ends after 6 of the 8 bytes of the header"},
		{"images magic", idxImages(1, 1, 1), "bad magic number 0x00000803, want 0x00000801 (IDX labels); images and labels swapped?"},
		{"truncated", valid[:10], "truncated: the stream ends after 10 of the 12 bytes of the header and 4 labels"},
		{"trailing", cat(valid, []byte{0}), "trailing data: 1 bytes after the 12 bytes"},
		{"label out of range", idxLabels(1, 2, 10, 4), "label 10 of image 2 outside 0..9"},
		{"label 255", idxLabels(255), "label 255 of image 0 outside 0..9"},
		{"huge count", []byte{0, 0, 8, 1, 0xff, 0xff, 0xff, 0xff}, "declares 4294967295 labels"},
		{"gzip truncated", gz(valid)[:15], "truncated gzip"},
		{"gzip bad checksum", flip(gz(valid), -5), "invalid checksum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readLabelsStream(bytes.NewReader(tc.data), "f.gz")
			checkErr(t, err, tc.want)
		})
	}
}

// checkErr checks that err is a one-line *FormatError naming the file f.gz
// and containing want.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Errorf("error %T %v is not a *FormatError", err, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, want) || !strings.HasPrefix(msg, "mnist: f.gz: ") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line starting %q and containing %q", msg, "mnist: f.gz: ", want)
	}
}

// TestHugeDeclaredSizeAllocatesLittle checks that memory follows the input,
// not the header: a header declaring a gigabyte followed by a few bytes must
// not allocate anything like a gigabyte.
func TestHugeDeclaredSizeAllocatesLittle(t *testing.T) {
	data := cat([]byte{0, 0, 8, 3, 0, 0, 0x03, 0xe8, 0, 0, 0x04, 0, 0, 0, 0x04, 0}, make([]byte, 1000))
	labels := cat([]byte{0, 0, 8, 1, 0x3f, 0xff, 0xff, 0xff}, make([]byte, 1000))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, _, _, _, err := readImagesStream(bytes.NewReader(data), "f"); err == nil {
			t.Fatal("no error")
		}
		if _, err := readLabelsStream(bytes.NewReader(labels), "f"); err == nil {
			t.Fatal("no error")
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 10<<20 {
		t.Errorf("20 reads of tiny inputs with huge headers allocated %d bytes", got)
	}
}
