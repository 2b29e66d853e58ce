//go:build !netcdf || !cgo

package trace

import "time"

// NetCDF reports whether this build writes netCDF files: true with the
// build tag netcdf and cgo, false otherwise.
const NetCDF = false

// WriteNetCDF writes the draws of r, from the next on, as ArviZ
// InferenceData in netCDF-4 to the file path, replacing it. This build has
// no netCDF support: it returns ErrNoNetCDF.
func WriteNetCDF(path string, r *Reader, created time.Time) error {
	return ErrNoNetCDF
}
