package datatest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Skip and Fatalf instead of ending
// the test.
type recorder struct {
	testing.TB
	name, skip, fatal string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Name() string                      { return r.name }
func (r *recorder) Skip(args ...any)                  { r.skip = fmt.Sprint(args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

// TestSkipsAreCountedAndFailInCI is the regression test of data tests
// skipped silently: each skip is recorded for the summary line, grouped by
// reason, and with CI=true it is a failure instead.
func TestSkipsAreCountedAndFailInCI(t *testing.T) {
	defer reset()
	t.Setenv("CI", "")
	reset()
	if s := Summary(); s != "" {
		t.Errorf("summary with no skips: %q", s)
	}
	for _, r := range []*recorder{{name: "TestB"}, {name: "TestA/sub"}, {name: "TestC"}} {
		reason := "music/x.mat not found in /nowhere"
		if r.name == "TestC" {
			reason = "mnist/y.gz not found in /nowhere"
		}
		Skip(r, reason)
		if r.fatal != "" || !strings.Contains(r.skip, reason) {
			t.Errorf("%s: skip %q, fatal %q", r.name, r.skip, r.fatal)
		}
	}
	want := "tasks/datadir/datatest: 3 tests skipped for want of data (set $METASGMCMC_DATA to the data directory; with CI=true they fail): " +
		"TestA/sub, TestB: music/x.mat not found in /nowhere; TestC: mnist/y.gz not found in /nowhere"
	if s := Summary(); s != want {
		t.Errorf("summary\n%q, want\n%q", s, want)
	}

	reset()
	t.Setenv("CI", "true")
	r := &recorder{name: "TestD"}
	Skip(r, "gaussian not found")
	if r.skip != "" || !strings.Contains(r.fatal, "data missing in CI (CI=true): gaussian not found") {
		t.Errorf("in CI: skip %q, fatal %q; want a failure", r.skip, r.fatal)
	}
	if s := Summary(); s != "" {
		t.Errorf("a failure in CI is not a skip: summary %q", s)
	}
}

func TestNeedAndDir(t *testing.T) {
	defer reset()
	t.Setenv("CI", "")
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "music"), 0o755)
	os.WriteFile(filepath.Join(dir, "music", "a.mat"), nil, 0o644)
	t.Setenv("METASGMCMC_DATA", dir)
	if Dir() != dir {
		t.Errorf("Dir() = %q, want %q", Dir(), dir)
	}
	r := &recorder{name: "TestNeed"}
	if got := Need(r, "music/a.mat"); got != dir || r.skip != "" {
		t.Errorf("Need of a present file: %q, skip %q", got, r.skip)
	}
	Need(r, "music/a.mat", "mnist/b.gz")
	if want := "mnist/b.gz not found in " + dir; !strings.Contains(r.skip, want) {
		t.Errorf("Need of a missing file: skip %q, want %q", r.skip, want)
	}
	// a relative directory is taken from the module root
	t.Setenv("METASGMCMC_DATA", "tasks")
	if d := Dir(); !filepath.IsAbs(d) || filepath.Base(d) != "tasks" {
		t.Errorf("relative Dir() = %q, want the module root's tasks", d)
	}
}
