// Package mnist reads the MNIST handwritten digits from the standard gzipped
// IDX files, normalises them as the authors of "Meta-Learning for Stochastic
// Gradient MCMC" do (torchvision ToTensor then Normalize((0.1307,),
// (0.3081,)), flattened to 784 values), selects digit subsets with
// relabelling (digits 0–4 and 5–9 for the Data-generalisation experiment) and
// cuts seeded, shuffled minibatches of a fixed size.
//
// The files are looked up in the subdirectory "mnist" of the data directory
// (see package datadir): dir/mnist/train-images-idx3-ubyte.gz and so on.
// Download fetches them, verified against their known sha256 digests.
package mnist

import (
	"fmt"
	"path/filepath"

	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
)

// Image geometry and label range of MNIST.
const (
	Rows    = 28          // image height in pixels
	Cols    = 28          // image width in pixels
	Dim     = Rows * Cols // length of one flattened image (784)
	Classes = 10          // number of digits, labels 0..9
)

// Sizes of the two standard splits.
const (
	TrainSize = 60000 // images in the training split
	TestSize  = 10000 // images in the test split
)

// Normalisation constants of the authors' torchvision pipeline: a pixel p in
// 0..255 becomes (p/255 − Mean)/Std.
const (
	Mean = 0.1307
	Std  = 0.3081
)

// Subdir is the subdirectory of the data directory that holds the MNIST files.
const Subdir = "mnist"

// DefaultBaseURL is the canonical location of the four MNIST files (the
// original yann.lecun.com mirror is often down).
const DefaultBaseURL = "https://storage.googleapis.com/cvdf-datasets/mnist/"

// Names of the four standard files.
const (
	TrainImagesFile = "train-images-idx3-ubyte.gz"
	TrainLabelsFile = "train-labels-idx1-ubyte.gz"
	TestImagesFile  = "t10k-images-idx3-ubyte.gz"
	TestLabelsFile  = "t10k-labels-idx1-ubyte.gz"
)

// Files lists the four standard file names: training images and labels, test
// images and labels.
var Files = []string{TrainImagesFile, TrainLabelsFile, TestImagesFile, TestLabelsFile}

// normTable maps a raw pixel to its normalised value.
var normTable = func() (t [256]float64) {
	for p := range t {
		t[p] = (float64(p)/255 - Mean) / Std
	}
	return t
}()

// Set is a set of labelled MNIST images. Pixels are kept raw (one byte each,
// 47 MB for the training split rather than 376 MB as float64) and normalised
// when they are read through Image, Features or Batches.
type Set struct {
	// Pixels holds N images of Dim raw pixels (0..255), row-major, image
	// after image: image i is Pixels[i*Dim : (i+1)*Dim].
	Pixels []byte
	// Labels holds the N class labels, each in 0..Classes−1.
	Labels []int
	// N is the number of images.
	N int
	// Classes is the number of classes: 10 for a full split, len(digits)
	// for a Subset.
	Classes int
	// Digits[c] is the original MNIST digit of class c (0..9 for a full
	// split).
	Digits []int
}

// Image writes the normalised image i (Dim values) into dst, allocating it
// when dst is nil or too short, and returns it.
func (s *Set) Image(i int, dst []float64) []float64 {
	if len(dst) < Dim {
		dst = make([]float64, Dim)
	}
	dst = dst[:Dim]
	for j, p := range s.Pixels[i*Dim : (i+1)*Dim] {
		dst[j] = normTable[p]
	}
	return dst
}

// Features returns all N normalised images as one N×Dim row-major slice
// (for evaluation on a whole split; minibatches come from Batches).
func (s *Set) Features() []float64 {
	x := make([]float64, len(s.Pixels))
	for j, p := range s.Pixels {
		x[j] = normTable[p]
	}
	return x
}

// Slice returns the images lo, …, hi−1 of s in their order, sharing s's
// memory. It panics unless 0 ≤ lo ≤ hi ≤ s.N.
func (s *Set) Slice(lo, hi int) *Set {
	if lo < 0 || lo > hi || hi > s.N {
		panic(fmt.Sprintf("mnist: Slice [%d, %d) of %d images", lo, hi, s.N))
	}
	return &Set{Pixels: s.Pixels[lo*Dim : hi*Dim], Labels: s.Labels[lo:hi], N: hi - lo, Classes: s.Classes, Digits: s.Digits}
}

// Subset returns the images whose label is one of digits, relabelled
// 0..len(digits)−1 in the order given: Subset(5, 6, 7, 8, 9) maps digit 5 to
// class 0 and digit 9 to class 4. The digits are labels of s (for a full
// split, the MNIST digits themselves); the result's Digits records the
// original MNIST digit of each new class. The images keep their order in s
// and are copied. Subset panics if digits is empty, repeats a label or names
// one outside 0..s.Classes−1.
func (s *Set) Subset(digits ...int) *Set {
	if len(digits) == 0 {
		panic("mnist: Subset of no digits")
	}
	relabel := make([]int, s.Classes)
	for i := range relabel {
		relabel[i] = -1
	}
	sub := &Set{Classes: len(digits), Digits: make([]int, len(digits))}
	for c, d := range digits {
		if d < 0 || d >= s.Classes {
			panic(fmt.Sprintf("mnist: Subset digit %d outside 0..%d", d, s.Classes-1))
		}
		if relabel[d] >= 0 {
			panic(fmt.Sprintf("mnist: Subset digit %d given twice", d))
		}
		relabel[d] = c
		if s.Digits != nil {
			sub.Digits[c] = s.Digits[d]
		} else {
			sub.Digits[c] = d
		}
	}
	n := 0
	for _, l := range s.Labels {
		if relabel[l] >= 0 {
			n++
		}
	}
	sub.N = n
	sub.Labels = make([]int, 0, n)
	sub.Pixels = make([]byte, 0, n*Dim)
	for i, l := range s.Labels {
		if c := relabel[l]; c >= 0 {
			sub.Labels = append(sub.Labels, c)
			sub.Pixels = append(sub.Pixels, s.Pixels[i*Dim:(i+1)*Dim]...)
		}
	}
	return sub
}

// source tells where a missing file can be obtained.
func source(name string) string {
	return DefaultBaseURL + name + " (or let cmd/sample or cmd/train fetch the four MNIST files with --download)"
}

// Load reads the training and test splits from dir/mnist, where dir is the
// data directory (empty means datadir.Dir(""): $METASGMCMC_DATA, else
// ./data). It checks the magic numbers, the 28×28
// geometry, the counts (60000 training and 10000 test images, as many labels
// as images), the label range and that each file holds exactly the bytes its
// header declares. A missing file gives a *datadir.MissingError naming it and
// where to obtain it; a malformed one, a *FormatError naming the file (by its
// path) and the problem.
func Load(dir string) (train, test *Set, err error) {
	return load(dir, TrainSize, TestSize)
}

// load is Load with the expected counts as parameters (tests use tiny files).
func load(dir string, nTrain, nTest int) (train, test *Set, err error) {
	if dir == "" {
		dir = datadir.Dir("")
	}
	// Report a missing file before spending time on the others.
	paths := make([]string, len(Files))
	for i, name := range Files {
		if paths[i], err = datadir.Path(dir, filepath.Join(Subdir, name), source(name)); err != nil {
			return nil, nil, err
		}
	}
	if train, err = loadSplit(paths[0], paths[1], nTrain); err != nil {
		return nil, nil, err
	}
	if test, err = loadSplit(paths[2], paths[3], nTest); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

func loadSplit(imagesPath, labelsPath string, want int) (*Set, error) {
	n, rows, cols, pixels, err := readImagesFile(imagesPath, want)
	if err != nil {
		return nil, err
	}
	name := imagesPath
	if rows != Rows || cols != Cols {
		return nil, &FormatError{File: name, Problem: fmt.Sprintf("images are %d×%d, want %d×%d", rows, cols, Rows, Cols)}
	}
	if n != want {
		return nil, &FormatError{File: name, Problem: fmt.Sprintf("%d images, want %d", n, want)}
	}
	labels, err := readLabelsFile(labelsPath, want)
	if err != nil {
		return nil, err
	}
	if len(labels) != n {
		return nil, &FormatError{File: labelsPath, Problem: fmt.Sprintf("%d labels for the %d images of %s", len(labels), n, filepath.Base(name))}
	}
	digits := make([]int, Classes)
	for d := range digits {
		digits[d] = d
	}
	return &Set{Pixels: pixels, Labels: labels, N: n, Classes: Classes, Digits: digits}, nil
}
