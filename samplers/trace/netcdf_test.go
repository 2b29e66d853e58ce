//go:build netcdf && cgo

package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/metasgmcmc/metasgmcmc/samplers/trace/tracetest"
)

// idataCase is a stream and the InferenceData it must give.
type idataCase struct {
	name  string
	h     Header
	steps []int
}

var idataCases = []idataCase{
	{"three chains, two stats", Header{Chains: 3, Dim: 4, Coords: []int{0, 2, 3},
		Stats: []Stat{{Name: "lp", Doc: "minus the energy"}, {Name: "u"}}, Attrs: map[string]string{"task": "gaussian20", "seed": "3"}}, []int{10, 20, 30, 40}},
	{"one chain, one coordinate, no stats", Header{Chains: 1, Dim: 1, Coords: []int{0}}, []int{1}},
	{"no draws", Header{Chains: 2, Dim: 3, Coords: []int{1}, Stats: []Stat{{Name: "lp"}}}, nil},
}

// convert writes tc's stream and converts it, returning the netCDF file.
func convert(t *testing.T, tc idataCase) string {
	t.Helper()
	dir := t.TempDir()
	stream, path := filepath.Join(dir, "trace.bin"), filepath.Join(dir, "trace.nc")
	writeStream(t, stream, tc.h, tc.steps)
	created := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	if err := ConvertFile(path, stream, created); err != nil {
		t.Fatal(err)
	}
	onlyFiles(t, dir, "trace.bin", "trace.nc")
	return path
}

// wantValues are the values of theta (chain, draw, theta_dim_0) and of
// each stat (chain, draw) that tc's draws give.
func wantValues(tc idataCase) (theta []float64, stats [][]float64) {
	h := tc.h
	c, ns := len(h.Coords), len(h.Stats)
	ds := make([]Draw, len(tc.steps))
	for i, step := range tc.steps {
		ds[i] = wantDraw(h, step)
	}
	stats = make([][]float64, ns)
	for k := 0; k < h.Chains; k++ {
		for _, d := range ds {
			theta = append(theta, d.Theta[k*c:(k+1)*c]...)
			for s := range ns {
				stats[s] = append(stats[s], d.Stats[k*ns+s])
			}
		}
	}
	return theta, stats
}

func floatsOf(xs []int) []float64 {
	var f []float64
	for _, x := range xs {
		f = append(f, float64(x))
	}
	return f
}

// TestNetCDFReadsBack reads the written file with libnetcdf: its groups,
// the dimensions, lengths and values of every variable, and the attributes.
func TestNetCDFReadsBack(t *testing.T) {
	for _, tc := range idataCases {
		t.Run(tc.name, func(t *testing.T) {
			path := convert(t, tc)
			h, n := tc.h, len(tc.steps)
			theta, stats := wantValues(tc)
			chains := make([]int, h.Chains)
			for i := range chains {
				chains[i] = i
			}
			type want struct {
				group, name string
				dims        []string
				lens        []int
				values      []float64
			}
			wants := []want{
				{Posterior, ThetaVar, []string{"chain", "draw", ThetaDim}, []int{h.Chains, n, len(h.Coords)}, theta},
				{Posterior, "chain", []string{"chain"}, []int{h.Chains}, floatsOf(chains)},
				{Posterior, "draw", []string{"draw"}, []int{n}, floatsOf(tc.steps)},
				{Posterior, ThetaDim, []string{ThetaDim}, []int{len(h.Coords)}, floatsOf(h.Coords)},
				{SampleStats, "chain", []string{"chain"}, []int{h.Chains}, floatsOf(chains)},
				{SampleStats, "draw", []string{"draw"}, []int{n}, floatsOf(tc.steps)},
			}
			for s, st := range h.Stats {
				wants = append(wants, want{SampleStats, st.Name, []string{"chain", "draw"}, []int{h.Chains, n}, stats[s]})
			}
			for _, w := range wants {
				v, groups, attrs, err := readNetCDF(path, w.group, w.name)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(groups, []string{Posterior, SampleStats}) {
					t.Errorf("groups %q", groups)
				}
				if !reflect.DeepEqual(v.dims, w.dims) || !reflect.DeepEqual(v.lens, w.lens) || !reflect.DeepEqual(v.values, w.values) {
					t.Errorf("%s/%s: dims %v %v, values %v; want %v %v, %v", w.group, w.name, v.dims, v.lens, v.values, w.dims, w.lens, w.values)
				}
				if attrs["created_at"] != "2026-01-02T03:04:05.000006+00:00" || attrs["inference_library"] != InferenceLibrary || attrs["task"] != h.Attrs["task"] {
					t.Errorf("%s's attributes: %v", w.group, attrs)
				}
			}
			for _, st := range h.Stats {
				v, _, _, _ := readNetCDF(path, SampleStats, st.Name)
				if v.attrs["long_name"] != st.Doc && st.Doc != "" {
					t.Errorf("%s's long_name %q, want %q", st.Name, v.attrs["long_name"], st.Doc)
				}
			}
			if _, _, root, err := readNetCDF(path, "", "none"); root["created_at"] == "" || err == nil {
				t.Errorf("root group: attributes %v, a variable none (%v)", root, err)
			}
		})
	}
}

// TestNetCDFOfUnfinishedStream: a stream whose writer was never closed,
// ending in a torn draw, converts its complete draws.
func TestNetCDFOfUnfinishedStream(t *testing.T) {
	tc := idataCases[0]
	dir := t.TempDir()
	stream, path := filepath.Join(dir, "trace.bin"), filepath.Join(dir, "trace.nc")
	w, err := Create(stream, tc.h)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	writeDraws(t, w, tc.steps)
	appendBytes(t, stream, make([]byte, tc.h.recordLen()/2))
	if err := ConvertFile(path, stream, time.Now()); err != nil {
		t.Fatal(err)
	}
	theta, stats := wantValues(tc)
	for _, want := range []struct {
		group, name string
		values      []float64
	}{
		{Posterior, "draw", floatsOf(tc.steps)},
		{Posterior, ThetaVar, theta},
		{SampleStats, tc.h.Stats[0].Name, stats[0]},
	} {
		v, _, _, err := readNetCDF(path, want.group, want.name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v.values, want.values) {
			t.Errorf("%s/%s: %v, want %v", want.group, want.name, v.values, want.values)
		}
	}
}

// TestNetCDFErrors: a stream that cannot be read or a file that cannot be
// written is an error naming it, and leaves no file.
func TestNetCDFErrors(t *testing.T) {
	dir := t.TempDir()
	if err := ConvertFile(filepath.Join(dir, "t.nc"), filepath.Join(dir, "none.bin"), time.Now()); err == nil || !strings.Contains(err.Error(), "none.bin") {
		t.Errorf("missing stream: %v", err)
	}
	stream := filepath.Join(dir, "t.bin")
	writeStream(t, stream, idataCases[1].h, idataCases[1].steps)
	if err := ConvertFile(filepath.Join(dir, "no", "t.nc"), stream, time.Now()); err == nil || !strings.Contains(err.Error(), "no") {
		t.Errorf("missing directory: %v", err)
	}
	r, _ := Open(stream)
	defer r.Close()
	if err := WriteNetCDF(filepath.Join(dir, "no", "t.nc"), r, time.Now()); err == nil || !strings.Contains(err.Error(), "t.nc: netCDF nc_create: ") {
		t.Errorf("WriteNetCDF into a missing directory: %v", err)
	}
	onlyFiles(t, dir, "t.bin")
}

// TestXarrayOpensGroups opens the file with Python's xarray, as
// arviz.from_netcdf does. Without python3 and xarray it is skipped, unless
// CI is true.
func TestXarrayOpensGroups(t *testing.T) {
	tc := idataCases[0]
	path := convert(t, tc)
	h, n := tc.h, len(tc.steps)
	theta, stats := wantValues(tc)
	type variable = tracetest.Variable
	wants := map[string]map[string]variable{
		Posterior: {
			ThetaVar: {Dims: []string{"chain", "draw", ThetaDim}, Shape: []int{h.Chains, n, len(h.Coords)}, Values: theta},
			"chain":  {Dims: []string{"chain"}, Shape: []int{h.Chains}, Values: []float64{0, 1, 2}},
			"draw":   {Dims: []string{"draw"}, Shape: []int{n}, Values: floatsOf(tc.steps)},
			ThetaDim: {Dims: []string{ThetaDim}, Shape: []int{len(h.Coords)}, Values: floatsOf(h.Coords)},
		},
		SampleStats: {
			"lp":    {Dims: []string{"chain", "draw"}, Shape: []int{h.Chains, n}, Values: stats[0]},
			"u":     {Dims: []string{"chain", "draw"}, Shape: []int{h.Chains, n}, Values: stats[1]},
			"chain": {Dims: []string{"chain"}, Shape: []int{h.Chains}, Values: []float64{0, 1, 2}},
			"draw":  {Dims: []string{"draw"}, Shape: []int{n}, Values: floatsOf(tc.steps)},
		},
	}
	opened := tracetest.Xarray(t, path, Posterior, SampleStats)
	for _, got := range opened {
		for name, vars := range wants {
			g := got[name]
			if !reflect.DeepEqual(g.Vars, vars) {
				t.Errorf("%s: %+v\nwant %+v", name, g.Vars, vars)
			}
			if g.Attrs["inference_library"] != InferenceLibrary || g.Attrs["created_at"] == "" || g.Attrs["seed"] != "3" {
				t.Errorf("%s's attributes: %v", name, g.Attrs)
			}
		}
	}
	t.Logf("opened with %d xarray engines", len(opened))
}

// TestNetCDFSameStreamSameBytes: the same stream converted with the same
// created_at gives the same bytes (runs differ in created_at alone).
func TestNetCDFSameStreamSameBytes(t *testing.T) {
	var files [][]byte
	for range 2 {
		b, err := os.ReadFile(convert(t, idataCases[0]))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
		time.Sleep(1100 * time.Millisecond) // past any timestamp of HDF5's, which counts seconds
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("the same stream and created_at gave different files")
	}
}
