package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// ErrNoNetCDF is WriteNetCDF's error in a build without the build tag
// netcdf (or without cgo).
var ErrNoNetCDF = errors.New("trace: this program was built without netCDF support: install libnetcdf-dev (apt-get install libnetcdf-dev) and build it with -tags netcdf (cgo on)")

// Names of InferenceData's groups, dimensions and variables.
const (
	// Posterior is the group of the traced coordinates of θ.
	Posterior = "posterior"
	// SampleStats is the group of the sample stats.
	SampleStats = "sample_stats"
	// ThetaVar is the posterior's variable, with dimensions (chain, draw,
	// theta_dim_0).
	ThetaVar = "theta"
	// ThetaDim is the dimension of the traced coordinates, named as ArviZ
	// names a variable's first own dimension.
	ThetaDim = "theta_dim_0"
)

// InferenceLibrary is the default inference_library attribute.
const InferenceLibrary = "metasgmcmc"

// CreatedAt formats t as ArviZ's created_at attribute does (Python's
// datetime.isoformat in UTC), as "2026-01-02T15:04:05.123456+00:00".
func CreatedAt(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000") + "+00:00"
}

// attr is a text attribute.
type attr struct{ name, value string }

// groupAttrs are the attributes that WriteNetCDF puts on the file and on
// each group: created_at, then the header's Attrs in name order, with
// inference_library InferenceLibrary unless the header gives it.
func groupAttrs(h Header, created time.Time) []attr {
	as := []attr{{"created_at", CreatedAt(created)}}
	names := make([]string, 0, len(h.Attrs))
	for n := range h.Attrs {
		if n != "created_at" {
			names = append(names, n)
		}
	}
	if _, ok := h.Attrs["inference_library"]; !ok {
		as = append(as, attr{"inference_library", InferenceLibrary})
	}
	slices.Sort(names)
	for _, n := range names {
		as = append(as, attr{n, h.Attrs[n]})
	}
	return as
}

// ConvertFile writes the stream at stream as ArviZ InferenceData to path
// (see WriteNetCDF), atomically: through a temporary file beside path,
// renamed over it only when complete. An unfinished stream gives its
// complete draws, as Open reads them.
func ConvertFile(path, stream string, created time.Time) (err error) {
	if !NetCDF {
		return ErrNoNetCDF
	}
	r, err := Open(stream)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	tmp := f.Name()
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err = WriteNetCDF(tmp, r, created); err != nil {
		return err
	}
	if err = os.Chmod(tmp, 0o644); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("trace: writing %s: %w", path, err)
	}
	return nil
}

// eachDraw calls f with every remaining draw of r and its index.
func eachDraw(r *Reader, f func(i int, d *Draw) error) error {
	var d Draw
	for i := 0; ; i++ {
		switch err := r.Next(&d); {
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
		if err := f(i, &d); err != nil {
			return err
		}
	}
}
