package mnist

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// idxImages returns an uncompressed IDX images file of n images of rows×cols
// whose pixel k (over the whole file) is byte(k*7 + n).
func idxImages(n, rows, cols int) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, [4]uint32{ImagesMagic, uint32(n), uint32(rows), uint32(cols)})
	for k := 0; k < n*rows*cols; k++ {
		b.WriteByte(byte(k*7 + n))
	}
	return b.Bytes()
}

// idxLabels returns an uncompressed IDX labels file holding labels.
func idxLabels(labels ...byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, [2]uint32{LabelsMagic, uint32(len(labels))})
	b.Write(labels)
	return b.Bytes()
}

// gz returns data gzipped.
func gz(data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// cat concatenates byte slices into a new one.
func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// writeFiles writes name → content into dir/mnist.
func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, Subdir), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, Subdir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// dataDir returns the data directory named by $METASGMCMC_DATA, and skips
// the test when it is unset or lacks the MNIST files. A relative directory
// is taken relative to the working directory, else to the module root (CI
// sets ../shared/data relative to the root, while tests run in the package
// directory).
func dataDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(datadir.EnvVar)
	if dir == "" {
		datatest.Skip(t, fmt.Sprintf("the MNIST tests read $%s, which is not set", datadir.EnvVar))
	}
	if !filepath.IsAbs(dir) {
		if _, err := os.Stat(filepath.Join(dir, Subdir)); err != nil {
			if root := moduleRoot(); root != "" {
				dir = filepath.Join(root, dir)
			}
		}
	}
	for _, name := range Files {
		if _, err := datadir.Path(dir, filepath.Join(Subdir, name), source(name)); err != nil {
			datatest.Skip(t, err.Error())
		}
	}
	return dir
}

// moduleRoot returns the nearest directory above the working directory
// holding go.mod, or "".
func moduleRoot() string {
	d, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

var realSets struct {
	once        sync.Once
	train, test *Set
	err         error
}

// realData loads the real MNIST splits once per test binary, skipping the
// test when the data are absent.
func realData(t *testing.T) (train, test *Set) {
	t.Helper()
	dir := dataDir(t)
	realSets.once.Do(func() { realSets.train, realSets.test, realSets.err = Load(dir) })
	if realSets.err != nil {
		t.Fatalf("Load(%s): %v", dir, realSets.err)
	}
	return realSets.train, realSets.test
}
