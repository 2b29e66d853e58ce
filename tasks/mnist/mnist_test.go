package mnist

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
)

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		p    byte
		want float64
	}{
		{0, -0.1307 / 0.3081},
		{255, (1 - 0.1307) / 0.3081},
		{51, (0.2 - 0.1307) / 0.3081},
	} {
		if got := normTable[tc.p]; math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("normTable[%d] = %v, want %v", tc.p, got, tc.want)
		}
	}
}

func TestRealData(t *testing.T) {
	train, test := realData(t)
	for _, tc := range []struct {
		name  string
		set   *Set
		n     int
		first []int
	}{
		{"train", train, 60000, []int{5, 0, 4, 1, 9}},
		{"test", test, 10000, []int{7, 2, 1, 0, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.set
			if s.N != tc.n || len(s.Labels) != tc.n || len(s.Pixels) != tc.n*Dim || s.Classes != 10 || len(s.Digits) != 10 {
				t.Fatalf("N=%d, %d labels, %d pixels, %d classes; want %d images of %d pixels, 10 classes",
					s.N, len(s.Labels), len(s.Pixels), s.Classes, tc.n, Dim)
			}
			if !equalInts(s.Labels[:5], tc.first) {
				t.Errorf("first labels %v, want %v", s.Labels[:5], tc.first)
			}
		})
	}
}

// TestRealNormalisation checks that the authors' constants standardise the
// training images: mean about 0 and standard deviation about 1.
func TestRealNormalisation(t *testing.T) {
	train, test := realData(t)
	var hist [256]int
	for _, p := range train.Pixels {
		hist[p]++
	}
	var sum, sum2 float64
	for p, c := range hist {
		v := normTable[byte(p)]
		sum += float64(c) * v
		sum2 += float64(c) * v * v
	}
	n := float64(len(train.Pixels))
	mean := sum / n
	sd := math.Sqrt(sum2/n - mean*mean)
	t.Logf("normalised training pixels: mean %.5f, sd %.5f", mean, sd)
	if math.Abs(mean) > 0.02 || math.Abs(sd-1) > 0.02 {
		t.Errorf("mean %v, sd %v; want 0 and 1 within 0.02", mean, sd)
	}
	// Features and Image agree with normTable (on the test set: Features
	// of the training set takes 376 MB).
	x := test.Features()
	img := test.Image(7, nil)
	if len(x) != test.N*Dim {
		t.Fatalf("Features: %d values, want %d", len(x), test.N*Dim)
	}
	for j := range Dim {
		want := normTable[test.Pixels[7*Dim+j]]
		if x[7*Dim+j] != want || img[j] != want {
			t.Fatalf("pixel %d of image 7: Features %v, Image %v, want %v", j, x[7*Dim+j], img[j], want)
		}
	}
}

func TestRealSubsets(t *testing.T) {
	train, test := realData(t)
	for _, tc := range []struct {
		name   string
		set    *Set
		digits []int
		n      int
	}{
		{"train 0-4", train, []int{0, 1, 2, 3, 4}, 30596},
		{"train 5-9", train, []int{5, 6, 7, 8, 9}, 29404},
		{"test 0-4", test, []int{0, 1, 2, 3, 4}, 5139},
		{"test 5-9", test, []int{5, 6, 7, 8, 9}, 4861},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := tc.set.Subset(tc.digits...)
			if sub.N != tc.n || len(sub.Labels) != tc.n || len(sub.Pixels) != tc.n*Dim {
				t.Fatalf("N=%d, %d labels, %d pixels; want %d images", sub.N, len(sub.Labels), len(sub.Pixels), tc.n)
			}
			if sub.Classes != 5 || !equalInts(sub.Digits, tc.digits) {
				t.Errorf("Classes %d, Digits %v; want 5, %v", sub.Classes, sub.Digits, tc.digits)
			}
			for _, l := range sub.Labels {
				if l < 0 || l >= 5 {
					t.Fatalf("label %d outside 0..4", l)
				}
			}
		})
	}
	// The first training images are 5 0 4 1 9: the 5-9 subset starts with
	// image 0 (5 → 0) and then image 4 (9 → 4).
	sub := train.Subset(5, 6, 7, 8, 9)
	if sub.Labels[0] != 0 || sub.Labels[1] != 4 ||
		string(sub.Pixels[:Dim]) != string(train.Pixels[:Dim]) ||
		string(sub.Pixels[Dim:2*Dim]) != string(train.Pixels[4*Dim:5*Dim]) {
		t.Errorf("5-9 subset does not start with images 0 and 4 of the training set relabelled 0 and 4")
	}
}

// tinySet returns a Set of n images whose pixels are all equal to their
// index (mod 256) and whose labels are labels.
func tinySet(labels ...int) *Set {
	s := &Set{N: len(labels), Labels: labels, Classes: 10, Pixels: make([]byte, len(labels)*Dim)}
	for i := range labels {
		for j := range Dim {
			s.Pixels[i*Dim+j] = byte(i)
		}
	}
	return s
}

func TestSubset(t *testing.T) {
	s := tinySet(3, 1, 4, 1, 5, 9, 2, 6, 5, 3)
	for _, tc := range []struct {
		digits []int
		labels []int
		images []byte // the pixel value, i.e. the index in s, of each image kept
	}{
		{[]int{1}, []int{0, 0}, []byte{1, 3}},
		{[]int{5, 3}, []int{1, 0, 0, 1}, []byte{0, 4, 8, 9}},
		{[]int{9, 6, 5}, []int{2, 0, 1, 2}, []byte{4, 5, 7, 8}},
		{[]int{0, 7, 8}, []int{}, []byte{}},
	} {
		sub := s.Subset(tc.digits...)
		if !equalInts(sub.Labels, tc.labels) || sub.N != len(tc.labels) || sub.Classes != len(tc.digits) || !equalInts(sub.Digits, tc.digits) {
			t.Errorf("Subset(%v): labels %v N %d classes %d digits %v; want labels %v", tc.digits, sub.Labels, sub.N, sub.Classes, sub.Digits, tc.labels)
		}
		if len(tc.images) > 0 {
			for k, i := range tc.images {
				if sub.Pixels[k*Dim] != i || sub.Pixels[(k+1)*Dim-1] != i {
					t.Errorf("Subset(%v): image %d is image %d of s, want %d", tc.digits, k, sub.Pixels[k*Dim], i)
				}
			}
		}
	}
	// A subset of a subset keeps track of the original digits.
	sub := s.Subset(9, 6, 5).Subset(2, 0)
	if !equalInts(sub.Digits, []int{5, 9}) || !equalInts(sub.Labels, []int{0, 1, 0}) {
		t.Errorf("nested subset: digits %v labels %v, want [5 9] [0 1 0]", sub.Digits, sub.Labels)
	}
	for _, bad := range [][]int{nil, {10}, {-1}, {1, 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Subset(%v) did not panic", bad)
				}
			}()
			s.Subset(bad...)
		}()
	}
}

// tinyFiles returns valid gzipped MNIST files of 3 training and 2 test
// images, 28×28.
func tinyFiles() map[string][]byte {
	return map[string][]byte{
		TrainImagesFile: gz(idxImages(3, 28, 28)),
		TrainLabelsFile: gz(idxLabels(5, 0, 4)),
		TestImagesFile:  gz(idxImages(2, 28, 28)),
		TestLabelsFile:  gz(idxLabels(7, 2)),
	}
}

func TestLoadTinyFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, tinyFiles())
	train, test, err := load(dir, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if train.N != 3 || !equalInts(train.Labels, []int{5, 0, 4}) || test.N != 2 || !equalInts(test.Labels, []int{7, 2}) {
		t.Errorf("train %d %v, test %d %v", train.N, train.Labels, test.N, test.Labels)
	}
	if want := idxImages(2, 28, 28)[16:]; string(test.Pixels) != string(want) {
		t.Errorf("test pixels differ from the file's")
	}
	// Load wants the real counts; an empty directory means $METASGMCMC_DATA.
	t.Setenv(datadir.EnvVar, dir)
	if _, _, err := Load(""); err == nil || !strings.Contains(err.Error(), "3 images, want 60000") || !strings.Contains(err.Error(), dir) {
		t.Errorf("Load of tiny files: %v, want a count error naming the file", err)
	}
}

func TestLoadErrors(t *testing.T) {
	zipped := gz(idxImages(3, 28, 28))
	for _, tc := range []struct {
		name    string
		file    string
		content []byte
		want    string
	}{
		{"wrong geometry", TrainImagesFile, gz(idxImages(3, 27, 28)), "images are 27×28, want 28×28"},
		{"too few images", TestImagesFile, gz(idxImages(1, 28, 28)), "1 images, want 2"},
		{"labels disagree", TrainLabelsFile, gz(idxLabels(1, 2)), "2 labels for the 3 images of " + TrainImagesFile},
		{"not gzipped", TrainImagesFile, idxImages(3, 28, 28), "not a gzip file"},
		{"truncated gzip", TrainImagesFile, zipped[:len(zipped)/2], "truncated gzip stream"},
		{"empty file", TestLabelsFile, nil, "empty file"},
		{"trailing bytes", TrainLabelsFile, gz(cat(idxLabels(1, 2, 3), []byte{4})), "trailing data: 1 bytes"},
		{"swapped", TrainLabelsFile, zipped, "images and labels swapped?"},
		{"label out of range", TestLabelsFile, gz(idxLabels(7, 12)), "label 12 of image 1 outside 0..9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := tinyFiles()
			files[tc.file] = tc.content
			writeFiles(t, dir, files)
			_, _, err := load(dir, 3, 2)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FormatError", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || !strings.Contains(msg, filepath.Join(dir, Subdir, tc.file)) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %s and containing %q", msg, tc.file, tc.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	dir := t.TempDir()
	files := tinyFiles()
	delete(files, TestLabelsFile)
	writeFiles(t, dir, files)
	_, _, err := Load(dir)
	var me *datadir.MissingError
	if !errors.As(err, &me) {
		t.Fatalf("want a *datadir.MissingError, got %v", err)
	}
	for _, want := range []string{filepath.Join(Subdir, TestLabelsFile), dir, DefaultBaseURL + TestLabelsFile, "--download", datadir.EnvVar} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// No directory at all.
	if _, _, err := Load(filepath.Join(dir, "nowhere")); !errors.As(err, &me) || !strings.Contains(err.Error(), TrainImagesFile) {
		t.Errorf("empty data directory: %v", err)
	}
}

func TestLoadUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads anything")
	}
	dir := t.TempDir()
	writeFiles(t, dir, tinyFiles())
	p := filepath.Join(dir, Subdir, TrainImagesFile)
	os.Chmod(p, 0)
	if _, _, err := load(dir, 3, 2); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("unreadable file: %v", err)
	}
}

func TestSlice(t *testing.T) {
	s := &Set{Pixels: make([]byte, 5*Dim), Labels: []int{0, 1, 2, 3, 4}, N: 5, Classes: 10}
	for i := range s.Pixels {
		s.Pixels[i] = byte(i / Dim)
	}
	sub := s.Slice(1, 4)
	if sub.N != 3 || len(sub.Pixels) != 3*Dim || sub.Labels[0] != 1 || sub.Labels[2] != 3 || sub.Pixels[0] != 1 || sub.Pixels[3*Dim-1] != 3 || sub.Classes != 10 {
		t.Errorf("Slice(1, 4) = %d images, labels %v", sub.N, sub.Labels)
	}
	defer func() {
		if recover() == nil {
			t.Error("Slice(4, 6) of 5 images did not panic")
		}
	}()
	s.Slice(4, 6)
}
