//go:build !netcdf || !cgo

package trace

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestNoNetCDF: without the build tag netcdf, converting is an error that
// names the tag and the package, and writes nothing.
func TestNoNetCDF(t *testing.T) {
	dir := t.TempDir()
	stream := filepath.Join(dir, "trace.bin")
	writeStream(t, stream, Header{Chains: 1, Dim: 1, Coords: []int{0}}, []int{1})
	err := ConvertFile(filepath.Join(dir, "trace.nc"), stream, time.Now())
	if !errors.Is(err, ErrNoNetCDF) || err.Error() != "trace: this program was built without netCDF support: install libnetcdf-dev (apt-get install libnetcdf-dev) and build it with -tags netcdf (cgo on)" {
		t.Errorf("ConvertFile: %v", err)
	}
	onlyFiles(t, dir, "trace.bin")
}
