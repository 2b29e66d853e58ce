//go:build netcdf && cgo

package trace

/*
#include <stdlib.h>
#include <netcdf.h>
*/
import "C"

import "unsafe"

// ncVar is a variable read back by readNetCDF: its dimensions' names and
// lengths and its values as float64, in C order.
type ncVar struct {
	dims   []string
	lens   []int
	values []float64
	attrs  map[string]string
}

// readNetCDF reads the variable name of group (the root group when group
// is "") of the netCDF file at path with libnetcdf, with its text
// attributes, and the names of the root's groups and the group's text
// attributes: the tests' netCDF reader.
func readNetCDF(path, group, name string) (v ncVar, groups []string, groupAttrs map[string]string, err error) {
	var id C.int
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	if err := nc(path, "nc_open", C.nc_open(p, C.NC_NOWRITE, &id)); err != nil {
		return v, nil, nil, err
	}
	defer C.nc_close(id)
	var ng C.int
	if err := nc(path, "nc_inq_grps", C.nc_inq_grps(id, &ng, nil)); err != nil {
		return v, nil, nil, err
	}
	if ng > 0 {
		ids := make([]C.int, ng)
		C.nc_inq_grps(id, &ng, &ids[0])
		for _, g := range ids {
			var b [C.NC_MAX_NAME + 1]C.char
			if err := nc(path, "nc_inq_grpname", C.nc_inq_grpname(g, &b[0])); err != nil {
				return v, nil, nil, err
			}
			groups = append(groups, C.GoString(&b[0]))
		}
	}
	g := id
	if group != "" {
		s := C.CString(group)
		defer C.free(unsafe.Pointer(s))
		if err := nc(path, "nc_inq_grp_ncid "+group, C.nc_inq_grp_ncid(id, s, &g)); err != nil {
			return v, groups, nil, err
		}
	}
	if groupAttrs, err = textAttrs(path, g, C.NC_GLOBAL); err != nil {
		return v, groups, nil, err
	}
	var varid C.int
	s := C.CString(name)
	defer C.free(unsafe.Pointer(s))
	if err := nc(path, "nc_inq_varid "+name, C.nc_inq_varid(g, s, &varid)); err != nil {
		return v, groups, groupAttrs, err
	}
	var nd C.int
	if err := nc(path, "nc_inq_varndims", C.nc_inq_varndims(g, varid, &nd)); err != nil {
		return v, groups, groupAttrs, err
	}
	dimids := make([]C.int, nd+1)
	if err := nc(path, "nc_inq_vardimid", C.nc_inq_vardimid(g, varid, &dimids[0])); err != nil {
		return v, groups, groupAttrs, err
	}
	size := 1
	for _, d := range dimids[:nd] {
		var b [C.NC_MAX_NAME + 1]C.char
		var n C.size_t
		if err := nc(path, "nc_inq_dim", C.nc_inq_dim(g, d, &b[0], &n)); err != nil {
			return v, groups, groupAttrs, err
		}
		v.dims = append(v.dims, C.GoString(&b[0]))
		v.lens = append(v.lens, int(n))
		size *= int(n)
	}
	if size > 0 {
		v.values = make([]float64, size)
		if err := nc(path, "nc_get_var_double", C.nc_get_var_double(g, varid, (*C.double)(unsafe.Pointer(&v.values[0])))); err != nil {
			return v, groups, groupAttrs, err
		}
	}
	v.attrs, err = textAttrs(path, g, varid)
	return v, groups, groupAttrs, err
}

// textAttrs reads the text attributes of a variable (or of a group, for
// NC_GLOBAL).
func textAttrs(path string, g, varid C.int) (map[string]string, error) {
	var na C.int
	if err := nc(path, "nc_inq_varnatts", C.nc_inq_varnatts(g, varid, &na)); err != nil {
		return nil, err
	}
	as := map[string]string{}
	for i := C.int(0); i < na; i++ {
		var b [C.NC_MAX_NAME + 1]C.char
		if err := nc(path, "nc_inq_attname", C.nc_inq_attname(g, varid, i, &b[0])); err != nil {
			return nil, err
		}
		var typ C.nc_type
		var n C.size_t
		if err := nc(path, "nc_inq_att", C.nc_inq_att(g, varid, &b[0], &typ, &n)); err != nil {
			return nil, err
		}
		if typ != C.NC_CHAR {
			continue
		}
		buf := make([]byte, n+1)
		if err := nc(path, "nc_get_att_text", C.nc_get_att_text(g, varid, &b[0], (*C.char)(unsafe.Pointer(&buf[0])))); err != nil {
			return nil, err
		}
		as[C.GoString(&b[0])] = string(buf[:n])
	}
	return as, nil
}
