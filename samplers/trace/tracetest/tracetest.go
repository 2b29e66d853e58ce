// Package tracetest opens netCDF files with Python's xarray, group by
// group, as arviz.from_netcdf does: the check, in the tests of
// samplers/trace and cmd/sample, that a trace opens in ArviZ.
package tracetest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// Python is the interpreter that Xarray runs: Debian's, where apt-get
// install python3-xarray python3-netcdf4 puts the modules.
const Python = "/usr/bin/python3"

// Variable is a variable of a group as xarray reads it: its dimensions,
// shape and values (flattened in C order).
type Variable struct {
	Dims   []string
	Shape  []int
	Values []float64
}

// Group is a group as xarray reads it: its attributes and its data and
// coordinate variables by name.
type Group struct {
	Attrs map[string]string
	Vars  map[string]Variable
}

// script opens each group named in argv[2:] of the file argv[1] with
// xarray.open_dataset(path, group=…), with the engines netcdf4 and, where
// it is installed, h5netcdf (ArviZ's default), and prints the groups as
// JSON, one line per engine.
const script = `
import json, sys, xarray
engines = ["netcdf4"]
try:
    import h5netcdf
    engines.append("h5netcdf")
except ImportError:
    pass
for engine in engines:
    out = {}
    for group in sys.argv[2:]:
        with xarray.open_dataset(sys.argv[1], group=group, engine=engine) as ds:
            out[group] = {"attrs": {k: str(v) for k, v in ds.attrs.items()}, "vars": {
                name: {"dims": list(v.dims), "shape": list(v.shape), "values": v.values.ravel().tolist()}
                for name, v in list(ds.data_vars.items()) + list(ds.coords.items())}}
    print(json.dumps(out))
`

// Xarray opens the groups of the netCDF file at path with xarray and
// returns them by name, once per engine (netcdf4, then h5netcdf where
// installed). It skips t where Python with xarray and netCDF4 is missing,
// and fails it instead in CI (CI=true).
func Xarray(t testing.TB, path string, groups ...string) []map[string]Group {
	t.Helper()
	if err := exec.Command(Python, "-c", "import xarray, netCDF4").Run(); err != nil {
		msg := Python + " with xarray and netCDF4 is needed (apt-get install python3-xarray python3-netcdf4): " + err.Error()
		if datatest.InCI() {
			t.Fatal(msg + " (CI=true)")
		}
		t.Skip(msg)
	}
	cmd := exec.Command(Python, append([]string{"-c", script, path}, groups...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xarray cannot open %s: %v\n%s", path, err, stderr.String())
	}
	var opened []map[string]Group
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var g map[string]Group
		if err := json.Unmarshal([]byte(line), &g); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		opened = append(opened, g)
	}
	return opened
}
