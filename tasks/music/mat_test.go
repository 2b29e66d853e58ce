package music

import (
	"bytes"
	"encoding/binary"
	"runtime/metrics"
	"testing"
)

// testDataset is the small data set of the MAT-file tests: one empty
// sequence, one of one frame, and a few short ones.
func testDataset() *Dataset {
	return randomDataset(7, []int{5, 1, 9}, []int{0, 3}, []int{4})
}

func TestReadMATRoundTrip(t *testing.T) {
	d := testDataset()
	cells := func(w matWriter, enc func(Sequence) []byte) []byte {
		var vars [][]byte
		for _, s := range []struct {
			name  string
			split Split
		}{{"testdata", d.Test}, {"traindata", d.Train}, {"validdata", d.Valid}} {
			var cs [][]byte
			for _, q := range s.split {
				cs = append(cs, enc(q))
			}
			vars = append(vars, w.cell(s.name, cs...))
		}
		// an unrelated variable, ignored
		vars = append(vars, w.matrix(mxDOUBLE, []int{1, 1}, "x", w.small(miUINT8, []byte{7})))
		return w.file(vars...)
	}
	for _, c := range []struct {
		name string
		file []byte
	}{
		{"compressed little-endian (as MATLAB writes)", le.dataset(d, true)},
		{"uncompressed little-endian", le.dataset(d, false)},
		{"compressed big-endian", be.dataset(d, true)},
		{"uncompressed big-endian", be.dataset(d, false)},
		{"double values as miDOUBLE", cells(le, func(q Sequence) []byte {
			vals := make([]float64, q.T*Keys)
			for i, v := range colMajor(q) {
				vals[i] = float64(v)
			}
			return le.matrix(mxDOUBLE, []int{q.T, Keys}, "", le.float64s(vals))
		})},
		{"uint8 class", cells(be, func(q Sequence) []byte {
			return be.matrix(mxUINT8, []int{q.T, Keys}, "", be.elem(miUINT8, colMajor(q)))
		})},
		{"logical class", cells(le, func(q Sequence) []byte {
			return le.matrix(mxUINT8|0x0200, []int{q.T, Keys}, "", le.elem(miUINT8, colMajor(q)))
		})},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := FromMAT(c.file)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameDataset(d, got); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReadMATErrors feeds the reader corrupt files and checks that each is
// refused with an error that names the file and says what is wrong.
func TestReadMATErrors(t *testing.T) {
	d := testDataset()
	good := le.dataset(d, true)
	plain := le.dataset(d, false)
	seq := d.Train[0]
	w := le
	train := func(cells ...[]byte) []byte { return w.cell("traindata", cells...) }
	rest := func() [][]byte {
		return [][]byte{w.cell("validdata"), w.cell("testdata")}
	}
	withTrain := func(cells ...[]byte) []byte { return w.file(append([][]byte{train(cells...)}, rest()...)...) }
	mutate := func(b []byte, f func([]byte)) []byte {
		b = bytes.Clone(b)
		f(b)
		return b
	}
	nested := w.roll(seq)
	for range maxMATDepth + 2 {
		nested = w.cell("", nested)
	}
	values := colMajor(seq)
	two := bytes.Clone(values)
	two[3*seq.T+2] = 2 // row 3, column 4
	half := make([]float64, len(values))
	half[len(half)-1] = 0.5
	bigDims := w.matrix(mxDOUBLE, []int{math32, math32}, "", w.elem(miUINT8, values))
	// a compressed element whose inner tag declares far more than it holds
	bomb := w.compress(func() []byte {
		b := make([]byte, 8)
		w.order.PutUint32(b, miMATRIX)
		w.order.PutUint32(b[4:], 0xfffffff0)
		return b
	}())

	for _, c := range []struct {
		name string
		file []byte
		want []string
	}{
		{"empty file", nil, []string{"0 bytes, shorter than the 128-byte header"}},
		{"truncated header", good[:100], []string{"100 bytes, shorter than the 128-byte header"}},
		{"not a MAT-file", mutate(good, func(b []byte) { copy(b, "HDF5") }), []string{"does not start with \"MATLAB\""}},
		{"bad endian indicator", mutate(good, func(b []byte) { copy(b[126:], "XX") }), []string{"endian indicator"}},
		{"version 7.3", mutate(good, func(b []byte) { b[125] = 2 }), []string{"7.3", "HDF5"}},
		{"unknown version", mutate(good, func(b []byte) { b[125] = 9 }), []string{"version 0x0900"}},
		{"truncated tag", good[:132], []string{"truncated data element at byte 128"}},
		{"truncated file", good[:len(good)-10], []string{"declares", "only"}},
		{"size larger than the file", mutate(good, func(b []byte) { binary.LittleEndian.PutUint32(b[132:], 0x7fffffff) }),
			[]string{"declares 2147483647 bytes but only"}},
		{"size larger than the file, uncompressed", mutate(plain, func(b []byte) { binary.LittleEndian.PutUint32(b[132:], 0xffffffff) }),
			[]string{"miMATRIX", "declares 4294967295 bytes but only"}},
		{"bad compressed stream", mutate(good, func(b []byte) {
			for i := 150; i < 170; i++ {
				b[i] ^= 0x5a
			}
		}), []string{"compressed element at byte 128", "bad zlib stream"}},
		{"bad zlib header", mutate(good, func(b []byte) { b[136] = 0 }), []string{"bad zlib stream"}},
		{"compressed size bomb", w.file(bomb), []string{"declares 4294967280 bytes, more than it can hold"}},
		{"top-level element of a wrong type", w.file(w.elem(9, make([]byte, 8))), []string{"miDOUBLE, want miMATRIX or miCOMPRESSED"}},
		{"variable missing", w.file(train(w.roll(seq)), w.cell("validdata")), []string{"no variable testdata", "traindata, validdata"}},
		{"variable twice", w.file(append([][]byte{train(), train()}, rest()...)...), []string{"two variables named traindata"}},
		{"variable not a cell", w.file(append([][]byte{w.matrix(mxDOUBLE, []int{seq.T, Keys}, "traindata", w.elem(miUINT8, values))}, rest()...)...),
			[]string{"variable traindata is a 5×88 double array, want a cell array"}},
		{"wrong class: char", withTrain(w.matrix(4, []int{1, 3}, "", w.elem(16, []byte("abc")))), []string{"traindata{1} is a 1×3 char array, want a numeric"}},
		{"wrong class: struct", withTrain(w.roll(seq), w.matrix(2, []int{1, 1}, "")), []string{"traindata{2} is a 1×1 struct"}},
		{"wrong class: nested cell", withTrain(w.cell("", w.roll(seq))), []string{"traindata{1} is a 1×1 cell array"}},
		{"wrong class: sparse", withTrain(w.matrix(5, []int{seq.T, Keys}, "")), []string{"sparse array"}},
		{"empty cell element", withTrain(w.elem(miMATRIX, nil)), []string{"traindata{1} is an empty array element"}},
		{"complex", withTrain(w.matrix(mxDOUBLE|0x0800, []int{seq.T, Keys}, "", w.elem(miUINT8, values), w.elem(miUINT8, values))), []string{"complex"}},
		{"values of a non-numeric type", withTrain(w.matrix(mxDOUBLE, []int{seq.T, Keys}, "", w.elem(miMATRIX, values))), []string{"stores its values as miMATRIX"}},
		{"non-binary value", withTrain(w.matrix(mxDOUBLE, []int{seq.T, Keys}, "", w.elem(miUINT8, two))),
			[]string{"traindata{1}(3,4) is 2 (frame 2, MIDI note 24): want 0 or 1"}},
		{"non-binary double", withTrain(w.roll(seq), w.matrix(mxDOUBLE, []int{seq.T, Keys}, "", w.float64s(half))),
			[]string{"traindata{2}(5,88) is 0.5"}},
		{"87 columns", withTrain(w.matrix(mxDOUBLE, []int{seq.T, 87}, "", w.elem(miUINT8, values[:seq.T*87]))),
			[]string{"traindata{1} is a 5×87 double array: 87 columns, want 88"}},
		{"transposed", withTrain(w.matrix(mxDOUBLE, []int{Keys, seq.T}, "", w.elem(miUINT8, values))), []string{"5 columns, want 88"}},
		{"3-D", withTrain(w.matrix(mxDOUBLE, []int{seq.T, Keys, 1}, "", w.elem(miUINT8, values))), []string{"5×88×1 double array, want a T×88 matrix"}},
		{"fewer values than the size", withTrain(w.matrix(mxDOUBLE, []int{seq.T, Keys}, "", w.elem(miUINT8, values[:100]))),
			[]string{"holds 100 bytes of miUINT8, want 440 values"}},
		{"dimensions larger than the data", withTrain(bigDims), []string{"2147483647×2147483647 holds 440 bytes of miUINT8, want 4611686014132420609 values"}},
		{"dimensions overflowing", withTrain(w.matrix(mxDOUBLE, []int{math32, math32, math32}, "", w.elem(miUINT8, values))),
			[]string{"want an overflowing number of values"}},
		{"cell dimensions overflowing", withTrain(w.matrix(mxCELL, []int{math32, math32, math32}, "")),
			[]string{"an overflowing number of cells"}},
		{"negative dimension", withTrain(w.matrix(mxDOUBLE, []int{-1, Keys}, "", w.elem(miUINT8, values))), []string{"negative"}},
		{"one dimension", withTrain(w.matrix(mxDOUBLE, []int{seq.T}, "", w.elem(miUINT8, values))), []string{"dimensions of 4 bytes"}},
		{"cell count larger than the data", w.file(w.matrix(mxCELL, []int{1, 1000}, "traindata", w.roll(seq))),
			[]string{"cell array \"traindata\" of size 1×1000 has 1000 cells, more than the"}},
		{"cell not a matrix", withTrain(w.elem(miUINT8, values)), []string{"cell 1 is miUINT8, want miMATRIX"}},
		{"nested too deep", w.file(w.cell("traindata", nested)), []string{"nested more than 16 deep"}},
		{"flags of a wrong type", withTrain(w.elem(miMATRIX, w.elem(miINT32, make([]byte, 8)))), []string{"flags element at byte 0 is miINT32, want miUINT32"}},
		{"small element over 4 bytes", mutate(plain, func(b []byte) {
			// the name of traindata is not small; make the dimensions tag claim a small element of 6 bytes
			binary.LittleEndian.PutUint32(b[128+8+16:], 6<<16|miINT32)
		}), []string{"small data element", "declares 6 bytes (at most 4)"}},
	} {
		t.Run(c.name, func(t *testing.T) { checkBadFile(t, c.file, c.want, "bad.mat", FromMAT, LoadMAT) })
	}
}

const math32 = 1<<31 - 1

// heapAllocs returns the bytes allocated so far by the process.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// checkDataset checks the invariants of a decoded data set.
func checkDataset(t *testing.T, d *Dataset) {
	for _, s := range []Split{d.Train, d.Valid, d.Test} {
		for _, q := range s {
			if q.T < 0 || len(q.Roll) != q.T*Keys {
				t.Fatalf("sequence of %d frames with %d values", q.T, len(q.Roll))
			}
			for _, v := range q.Roll {
				if v > 1 {
					t.Fatalf("value %d in a roll", v)
				}
			}
		}
	}
}

// matSeeds are the seeds of FuzzReadMAT, also written to testdata by
// TestWriteFuzzCorpus.
func matSeeds() [][]byte {
	d := randomDataset(3, []int{2, 1}, []int{1}, []int{0, 2})
	small := randomDataset(4, []int{1}, nil, []int{0})
	good := le.dataset(d, true)
	return [][]byte{
		good,
		le.dataset(small, false),
		be.dataset(small, true),
		good[:len(good)-7],
		good[:128],
		le.file(le.cell("traindata", le.cell("", le.roll(d.Train[0])))),
		le.file(le.matrix(mxDOUBLE, []int{2, 2}, "traindata", le.float64s([]float64{0, 1, 2, 1}))),
	}
}

// FuzzReadMAT checks that no input makes the MAT-file reader panic or
// allocate much more than what the input can decompress to (deflate expands
// at most 1032:1).
func FuzzReadMAT(f *testing.F) {
	for _, s := range matSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) { fuzzRead(t, b, FromMAT, 3000) })
}

// fuzzRead reads b with read and checks that it allocated at most perByte
// bytes a byte of input (plus 64 MiB), returned a data set or an error but
// not both, and that a data set it returned is well formed; it returns the
// data set, nil after an error.
func fuzzRead(t *testing.T, b []byte, read func([]byte) (*Dataset, error), perByte uint64) *Dataset {
	t.Helper()
	before := heapAllocs()
	d, err := read(b)
	if allocated := heapAllocs() - before; allocated > perByte*uint64(len(b))+64<<20 {
		t.Errorf("%d bytes of input allocated %d bytes", len(b), allocated)
	}
	if err != nil {
		if d != nil {
			t.Error("a data set and an error")
		}
		return nil
	}
	checkDataset(t, d)
	return d
}
