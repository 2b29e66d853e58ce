//go:build netcdf && cgo

package main

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/samplers/trace/tracetest"
)

// TestTraceOpensInArviZ: a run's trace.nc opens group by group in xarray,
// as arviz.from_netcdf opens it, with the draws of trace.bin.
func TestTraceOpensInArviZ(t *testing.T) {
	out := t.TempDir()
	if err := run(context.Background(), append(small, "-trace-every", "10", "-trace-coords", "5", "-out", out)); err != nil {
		t.Fatal(err)
	}
	_, ds := readTrace(t, out)
	// trace.bin's draws in xarray's (chain, draw, …) order
	var theta, lp []float64
	for k := 0; k < 4; k++ {
		for _, d := range ds {
			theta = append(theta, d.Theta[k*5:(k+1)*5]...)
			lp = append(lp, d.Stats[k])
		}
	}
	for _, groups := range tracetest.Xarray(t, filepath.Join(out, traceNetCDF), "posterior", "sample_stats") {
		post, stats := groups["posterior"], groups["sample_stats"]
		if v := post.Vars["theta"]; !reflect.DeepEqual(v.Dims, []string{"chain", "draw", "theta_dim_0"}) || !reflect.DeepEqual(v.Shape, []int{4, 3, 5}) ||
			!reflect.DeepEqual(v.Values, theta) {
			t.Errorf("posterior.theta: %+v", v)
		}
		if v := post.Vars["draw"]; !reflect.DeepEqual(v.Values, []float64{10, 20, 30}) {
			t.Errorf("posterior.draw: %+v", v)
		}
		if v := post.Vars["theta_dim_0"]; !reflect.DeepEqual(v.Values, []float64{0, 1, 2, 3, 4}) {
			t.Errorf("posterior.theta_dim_0: %+v", v)
		}
		if v := stats.Vars["lp"]; !reflect.DeepEqual(v.Dims, []string{"chain", "draw"}) || !reflect.DeepEqual(v.Values, lp) {
			t.Errorf("sample_stats.lp: %+v", v)
		}
		for _, g := range []tracetest.Group{post, stats} {
			if g.Attrs["task"] != "gaussian20" || g.Attrs["sampler"] != "nnsghmc" || g.Attrs["inference_library"] != "metasgmcmc" || g.Attrs["created_at"] == "" {
				t.Errorf("attributes %v", g.Attrs)
			}
		}
	}
}
