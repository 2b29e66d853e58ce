//go:build netcdf && cgo

package trace

/*
#cgo LDFLAGS: -lnetcdf
#include <stdlib.h>
#include <netcdf.h>
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"
)

// NetCDF reports whether this build writes netCDF files: true with the
// build tag netcdf and cgo, false otherwise.
const NetCDF = true

// nc checks a libnetcdf status: an error naming the call and the file,
// with nc_strerror's message, unless it is NC_NOERR.
func nc(path, call string, status C.int) error {
	if status == C.NC_NOERR {
		return nil
	}
	return fmt.Errorf("trace: %s: netCDF %s: %s", path, call, C.GoString(C.nc_strerror(status)))
}

// ncFile is a netCDF file being written: the first error is kept and
// later calls do nothing, so a sequence of calls is checked once.
type ncFile struct {
	path string
	err  error
}

func (f *ncFile) do(call string, status func() C.int) {
	if f.err == nil {
		f.err = nc(f.path, call, status())
	}
}

// cstr returns s as a C string, freed by the caller.
func cstr(s string) *C.char { return C.CString(s) }

func (f *ncFile) putAttrs(id, varid C.int, as []attr) {
	for _, a := range as {
		name, value := cstr(a.name), cstr(a.value)
		f.do("nc_put_att_text "+a.name, func() C.int {
			return C.nc_put_att_text(id, varid, name, C.size_t(len(a.value)), value)
		})
		C.free(unsafe.Pointer(name))
		C.free(unsafe.Pointer(value))
	}
}

func (f *ncFile) defGroup(id C.int, name string) C.int {
	var g C.int
	n := cstr(name)
	defer C.free(unsafe.Pointer(n))
	f.do("nc_def_grp "+name, func() C.int { return C.nc_def_grp(id, n, &g) })
	return g
}

func (f *ncFile) defDim(id C.int, name string, n int) C.int {
	var d C.int
	s := cstr(name)
	defer C.free(unsafe.Pointer(s))
	f.do("nc_def_dim "+name, func() C.int { return C.nc_def_dim(id, s, C.size_t(n), &d) })
	return d
}

// defVar defines a variable, not filled with fill values first (every
// value is written).
func (f *ncFile) defVar(id C.int, name string, typ C.nc_type, dims ...C.int) C.int {
	var v C.int
	s := cstr(name)
	defer C.free(unsafe.Pointer(s))
	var dp *C.int
	if len(dims) > 0 {
		dp = &dims[0]
	}
	f.do("nc_def_var "+name, func() C.int { return C.nc_def_var(id, s, typ, C.int(len(dims)), dp, &v) })
	f.do("nc_def_var_fill "+name, func() C.int { return C.nc_def_var_fill(id, v, 1, nil) })
	return v
}

func (f *ncFile) putInts(id, varid C.int, name string, vals []int64) {
	if len(vals) == 0 {
		return
	}
	f.do("nc_put_var_longlong "+name, func() C.int {
		return C.nc_put_var_longlong(id, varid, (*C.longlong)(unsafe.Pointer(&vals[0])))
	})
}

func (f *ncFile) putDoubles(id, varid C.int, name string, start, count []C.size_t, vals []float64) {
	if len(vals) == 0 {
		return
	}
	f.do("nc_put_vara_double "+name, func() C.int {
		return C.nc_put_vara_double(id, varid, &start[0], &count[0], (*C.double)(unsafe.Pointer(&vals[0])))
	})
}

// WriteNetCDF writes the draws of r, from the next on, as ArviZ
// InferenceData in netCDF-4 to the file path, replacing it, with created
// as the created_at attribute: the groups posterior and sample_stats (see
// the package documentation). Every libnetcdf call is checked; its error
// names the call, with libnetcdf's message. The file is written in place:
// ConvertFile writes one atomically.
func WriteNetCDF(path string, r *Reader, created time.Time) error {
	h := r.Header()
	k, c, ns, n := h.Chains, len(h.Coords), len(h.Stats), r.Draws()-r.read
	f := &ncFile{path: path}
	var id C.int
	p := cstr(path)
	f.do("nc_create", func() C.int { return C.nc_create(p, C.NC_NETCDF4|C.NC_CLOBBER, &id) })
	C.free(unsafe.Pointer(p))
	if f.err != nil {
		return f.err
	}
	as := groupAttrs(h, created)
	f.putAttrs(id, C.NC_GLOBAL, as)

	// the groups, each with its own dimensions and coordinate variables
	type group struct {
		id, chain, draw C.int // the group, its variables chain and draw
	}
	def := func(name string) (group, C.int, C.int) {
		g := group{id: f.defGroup(id, name)}
		f.putAttrs(g.id, C.NC_GLOBAL, as)
		dc, dd := f.defDim(g.id, "chain", k), f.defDim(g.id, "draw", n)
		g.chain = f.defVar(g.id, "chain", C.NC_INT64, dc)
		g.draw = f.defVar(g.id, "draw", C.NC_INT64, dd)
		return g, dc, dd
	}
	post, dc, dd := def(Posterior)
	dt := f.defDim(post.id, ThetaDim, c)
	coordVar := f.defVar(post.id, ThetaDim, C.NC_INT64, dt)
	theta := f.defVar(post.id, ThetaVar, C.NC_DOUBLE, dc, dd, dt)
	stats, dc, dd := def(SampleStats)
	statVars := make([]C.int, ns)
	for s, st := range h.Stats {
		statVars[s] = f.defVar(stats.id, st.Name, C.NC_DOUBLE, dc, dd)
		if st.Doc != "" {
			f.putAttrs(stats.id, statVars[s], []attr{{"long_name", st.Doc}})
		}
	}
	f.do("nc_enddef", func() C.int { return C.nc_enddef(id) })

	chains := make([]int64, k)
	for i := range chains {
		chains[i] = int64(i)
	}
	coords := make([]int64, c)
	for j, i := range h.Coords {
		coords[j] = int64(i)
	}
	steps := make([]int64, 0, n)
	f.putInts(post.id, post.chain, "chain", chains)
	f.putInts(stats.id, stats.chain, "chain", chains)
	f.putInts(post.id, coordVar, ThetaDim, coords)

	buf := make([]float64, k)
	err := eachDraw(r, func(i int, d *Draw) error {
		steps = append(steps, int64(d.Step))
		at := C.size_t(i)
		f.putDoubles(post.id, theta, ThetaVar, []C.size_t{0, at, 0}, []C.size_t{C.size_t(k), 1, C.size_t(c)}, d.Theta)
		for s := range ns {
			for ch := range k {
				buf[ch] = d.Stats[ch*ns+s]
			}
			f.putDoubles(stats.id, statVars[s], h.Stats[s].Name, []C.size_t{0, at}, []C.size_t{C.size_t(k), 1}, buf)
		}
		return f.err
	})
	if err == nil && len(steps) != n {
		err = fmt.Errorf("trace: writing %s: %d draws read, the stream counts %d", path, len(steps), n)
	}
	f.putInts(post.id, post.draw, "draw", steps)
	f.putInts(stats.id, stats.draw, "draw", steps)
	if err == nil {
		err = f.err
	}
	if err != nil {
		C.nc_abort(id)
		return err
	}
	return nc(path, "nc_close", C.nc_close(id))
}
