package music

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestReadPickleRoundTrip(t *testing.T) {
	d := randomDataset(11, []int{4, 0, 2}, []int{3}, []int{1, 5})
	// a frame with the lowest and highest notes
	d.Train[0].Roll[0], d.Train[0].Roll[Keys-1] = 1, 1
	for _, c := range []struct {
		name string
		w    pickleWriter
	}{
		{"Python ints", pickleWriter{}},
		{"numpy int64 scalars (as the original pickles)", pickleWriter{numpy: true}},
		{"big-endian numpy scalars", pickleWriter{numpy: true, order: '>'}},
		{"numpy scalars with bytes from _codecs.encode (Python 3)", pickleWriter{numpy: true, codecs: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := FromPickle(c.w.dataset(d))
			if err != nil {
				t.Fatal(err)
			}
			if err := sameDataset(d, got); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// pk assembles a protocol-2 pickle of a dict of the given key-value opcodes.
func pk(items ...string) []byte {
	return []byte("\x80\x02}(" + strings.Join(items, "") + "u.")
}

// key returns the opcodes of a short string.
func key(s string) string { return "U" + string(rune(len(s))) + s }

// seqs returns the opcodes of a list of sequences of frames of notes
// (BININT1), each frame a tuple.
func seqs(notes ...[][]int) string {
	var b strings.Builder
	b.WriteString("](")
	for _, s := range notes {
		b.WriteString("](")
		for _, f := range s {
			b.WriteByte('(')
			for _, n := range f {
				b.WriteByte('K')
				b.WriteByte(byte(n))
			}
			b.WriteByte('t')
		}
		b.WriteByte('e')
	}
	b.WriteByte('e')
	return b.String()
}

func TestReadPickleErrors(t *testing.T) {
	ok := seqs([][]int{{60, 64}, {}})
	good := pk(key("train"), ok, key("valid"), ok, key("test"), ok)
	if _, err := FromPickle(good); err != nil {
		t.Fatalf("the reference pickle: %v", err)
	}
	// A list of 100 empty frames, memoized, then referenced 100 times: few
	// bytes for 10,000 frames.
	bomb := "](" + strings.Repeat(")", 100) + "eq\x01" + strings.Repeat("h\x01", 99)
	for _, c := range []struct {
		name string
		file []byte
		want []string
	}{
		{"empty", nil, []string{"no STOP"}},
		{"truncated", good[:len(good)-5], []string{"no STOP"}},
		{"not a pickle", []byte("\xffMATLAB"), []string{"unknown opcode 0xff at byte 0"}},
		{"note below the piano", pk(key("train"), seqs([][]int{{60}, {20}}), key("valid"), ok, key("test"), ok),
			[]string{"train[0][1] holds note 20, outside the piano's MIDI notes 21 to 108"}},
		{"note above the piano", pk(key("train"), ok, key("valid"), ok, key("test"), seqs(nil, [][]int{{109}})),
			[]string{"test[1][0] holds note 109"}},
		{"key missing", pk(key("train"), ok, key("valid"), ok), []string{"no key 'test'"}},
		{"key twice", pk(key("train"), ok, key("train"), ok, key("valid"), ok, key("test"), ok), []string{"key 'train' twice"}},
		{"not a dict", []byte("\x80\x02]."), []string{"pickle holds a list, want a dict"}},
		{"split not a list", pk(key("train"), "K\x05", key("valid"), ok, key("test"), ok), []string{"'train' is the integer 5, want a list of sequences"}},
		{"sequence not a list", pk(key("train"), "](N]e", key("valid"), ok, key("test"), ok), []string{"train[0] is None, want a list of frames"}},
		{"frame a string", pk(key("train"), "](](U\x02<Hee", key("valid"), ok, key("test"), ok), []string{"train[0][0] is the string \"<H\", want a tuple"}},
		{"note a float", pk(key("train"), "](]("+"(G@N\x00\x00\x00\x00\x00\x00t"+"ee", key("valid"), ok, key("test"), ok),
			[]string{"train[0][0] holds the float 60, want MIDI note numbers"}},
		{"unknown global", pk(key("train"), "cos\nsystem\nU\x02lsR", key("valid"), ok), []string{"os.system, which a music data set does not use"}},
		{"numpy float scalar", pk(key("train"), "](]("+
			"(cnumpy.core.multiarray\nscalar\ncnumpy\ndtype\nU\x02f8K\x00K\x01\x87RU\x08\x00\x00\x00\x00\x00\x00N@\x86Rt"+
			"ee", key("valid"), ok, key("test"), ok),
			[]string{"numpy scalar of dtype \"f8\", want an integer"}},
		{"numpy scalar of the wrong size", pk(key("train"), "](]("+
			"(cnumpy.core.multiarray\nscalar\ncnumpy\ndtype\nU\x02i8K\x00K\x01\x87RU\x04\x3c\x00\x00\x00\x86Rt"+
			"ee", key("valid"), ok, key("test"), ok),
			[]string{"holds 4 bytes, want 8"}},
		{"length larger than the pickle", append([]byte("\x80\x03B"), binary.LittleEndian.AppendUint32(nil, 0xfffffff0)...),
			[]string{"opcode 0x42 at byte 2 declares 4294967280 bytes but only 0 remain"}},
		{"8-byte length larger than the pickle", append([]byte("\x80\x04\x8e"), binary.LittleEndian.AppendUint64(nil, 1<<62)...),
			[]string{"declares 4611686018427387904 bytes"}},
		{"frame larger than the pickle", append([]byte("\x80\x04\x95"), binary.LittleEndian.AppendUint64(nil, 1<<40)...),
			[]string{"opcode 0x95 at byte 2 declares 1099511627776 bytes"}},
		{"negative string length", append([]byte("\x80\x02T"), binary.LittleEndian.AppendUint32(nil, 0xffffffff)...),
			[]string{"declares 18446744073709551615 bytes"}},
		{"unterminated line", []byte("cnumpy\ndty"), []string{"unterminated line"}},
		{"stack underflow", []byte("\x80\x02R."), []string{"bad pickle"}},
		{"shared references", pk(key("train"), "]q\x01("+bomb+"e", key("valid"), ok, key("test"), ok),
			[]string{"references more frames than it has bytes"}},
	} {
		t.Run(c.name, func(t *testing.T) { checkBadFile(t, c.file, c.want, "bad.pickle", FromPickle, LoadPickle) })
	}
}

// pickleSeeds are the seeds of FuzzReadPickle, also written to testdata by
// TestWriteFuzzCorpus.
func pickleSeeds() [][]byte {
	tiny := func(notes ...int) *Dataset {
		roll := make([]uint8, Keys)
		for _, n := range notes {
			roll[n-LowestNote] = 1
		}
		return &Dataset{
			Train: Split{{T: 1, Roll: roll}},
			Valid: Split{{T: 0}},
			Test:  Split{},
		}
	}
	numpy := (&pickleWriter{numpy: true}).dataset(tiny(60))
	ok := seqs([][]int{{60, 64}, {}})
	return [][]byte{
		(&pickleWriter{}).dataset(tiny(21, 60, 108)),
		numpy,
		(&pickleWriter{numpy: true, order: '>', codecs: true}).dataset(tiny(61)),
		numpy[:len(numpy)/2],
		pk(key("train"), ok, key("valid"), ok, key("test"), seqs([][]int{{109}})),
		pk(key("train"), "]q\x01(]("+strings.Repeat(")", 10)+"eq\x02"+strings.Repeat("h\x02", 20)+"e", key("valid"), ok, key("test"), ok),
	}
}

// FuzzReadPickle checks that no input makes the pickle conversion panic
// (gopickle's own panics are recovered) or allocate much more than its size.
func FuzzReadPickle(f *testing.F) {
	for _, s := range pickleSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d := fuzzRead(t, b, FromPickle, 2000)
		if d == nil {
			return
		}
		if n := d.Train.Frames() + d.Valid.Frames() + d.Test.Frames(); n > len(b) {
			t.Errorf("%d frames from %d bytes", n, len(b))
		}
	})
}

// TestWriteFuzzCorpus writes the fuzz seeds to testdata/fuzz when
// MUSIC_WRITE_FUZZ_CORPUS is set (they are generated, never taken from the
// real data files).
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("MUSIC_WRITE_FUZZ_CORPUS") == "" {
		t.Skip("set MUSIC_WRITE_FUZZ_CORPUS=1 to rewrite testdata/fuzz")
	}
	for name, seeds := range map[string][][]byte{"FuzzReadMAT": matSeeds(), "FuzzReadPickle": pickleSeeds()} {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, s := range seeds {
			var b bytes.Buffer
			b.WriteString("go test fuzz v1\n")
			b.WriteString("[]byte(" + strconv.Quote(string(s)) + ")\n")
			if err := os.WriteFile(filepath.Join(dir, "seed"+string(rune('0'+i))), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
