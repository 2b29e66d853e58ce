package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
	"github.com/metasgmcmc/metasgmcmc/samplers/trace"
)

// TestConvertTrace: --trace converts a stream to netCDF-4 (an HDF5 file) in
// a build with netCDF, and says how to get one otherwise; usage errors
// write nothing.
func TestConvertTrace(t *testing.T) {
	dir := t.TempDir()
	stream := filepath.Join(dir, "trace.bin")
	w, err := trace.Create(stream, trace.Header{Chains: 2, Dim: 2, Coords: []int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for step := 1; step <= 3; step++ {
		if err := w.Write(step, []float64{1, 2, 3, 4}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "trace.nc")
	err = run(context.Background(), []string{"--trace", stream, "--out", out})
	b, _ := os.ReadFile(out)
	switch {
	case trace.NetCDF && (err != nil || !bytes.HasPrefix(b, []byte("\x89HDF\r\n\x1a\n"))):
		t.Errorf("convert --trace: %v; want an HDF5 file, got %d bytes", err, len(b))
	case !trace.NetCDF && (!errors.Is(err, trace.ErrNoNetCDF) || b != nil):
		t.Errorf("convert --trace without netCDF: %v, want %v and no file", err, trace.ErrNoNetCDF)
	}
	os.Remove(out)

	notStream := filepath.Join(dir, "metrics.csv")
	os.WriteFile(notStream, []byte("step,seconds\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--trace", stream, "--sampler", "toy", "--out", out}, "--sampler is for the authors' samplers; --trace converts a run's trace alone"},
		{[]string{"--trace", stream}, "--out: name the netCDF file to write"},
		{[]string{"--trace", filepath.Join(dir, "none.bin"), "--out", out}, "no such file"},
		{[]string{"--trace", notStream, "--out", out}, `not a complete trace stream: it does not start with "MSGTRACE"`},
	} {
		err := run(context.Background(), tc.args)
		var u *cli.UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v wrote %s", tc.args, out)
		}
	}
}

// TestConvertTraceOfAnUnfinishedStream: a stream whose run is still going,
// or was killed, converts its complete draws and says so in a line on
// standard error.
func TestConvertTraceOfAnUnfinishedStream(t *testing.T) {
	dir := t.TempDir()
	stream := filepath.Join(dir, "trace.bin")
	w, err := trace.Create(stream, trace.Header{Chains: 2, Dim: 2, Coords: []int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for step := 1; step <= 3; step++ {
		if err := w.Write(step, []float64{1, 2, 3, 4}); err != nil {
			t.Fatal(err)
		}
	}
	w.Abort() // as a run that stops without completing its stream
	f, _ := os.OpenFile(stream, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{1, 2, 3}) // and a torn draw
	f.Close()
	code, stderr := clitest.Command(t, "--trace", stream, "--out", filepath.Join(dir, "trace.nc"))
	want := "convert: " + stream + " is unfinished, its run still going or stopped without closing it: converting its 3 complete draws (and drops a torn last draw of 3 bytes)\n"
	if !strings.HasPrefix(stderr, want) || (trace.NetCDF && code != 0) {
		t.Errorf("status %d, stderr %q; want it to start with %q", code, stderr, want)
	}
}
