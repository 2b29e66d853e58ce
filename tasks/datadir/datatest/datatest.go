// Package datatest is what the tests that read the data sets share. A test
// whose data are missing is skipped with Skip, or Need, and the package's
// TestMain, through Main, ends the run with one line naming the tests
// skipped and why:
//
//	tasks/mnist: 2 tests skipped for want of data (set $METASGMCMC_DATA to the data directory; with CI=true they fail): TestA, TestB/sub: data file mnist/… not found in …
//
// In CI (CI=true in the environment) missing data are a failure, not a
// skip.
//
// go test hides what a passing package prints when it tests several
// packages (go test ./...), so the line also goes to the controlling
// terminal, where there is one and standard output is not it. A result
// that go test takes from its cache prints nothing: go test -count=1 runs
// the tests again.
package datatest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"golang.org/x/term"

	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
)

// InCI reports whether the tests run in CI: CI=true in the environment,
// as .ci/run and the usual CI services set it.
func InCI() bool { return os.Getenv("CI") == "true" }

var skipped = struct {
	sync.Mutex
	tests map[string]string // test name → reason
}{tests: map[string]string{}}

// Skip skips t because the data it needs are missing; reason says which
// and where. In CI it fails t instead. Main reports the skipped tests.
func Skip(t testing.TB, reason string) {
	t.Helper()
	if InCI() {
		t.Fatalf("data missing in CI (CI=true): %s", reason)
		return
	}
	skipped.Lock()
	skipped.tests[t.Name()] = reason
	skipped.Unlock()
	t.Skip("data missing: " + reason)
}

// Dir returns the data directory of the tests: datadir.Dir(""), where a
// relative directory that does not exist from the working directory (the
// package's, under go test) is taken relative to the module root, as .ci/run
// and the README give it.
func Dir() string {
	dir := datadir.Dir("")
	if filepath.IsAbs(dir) {
		return dir
	}
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		return dir
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, dir)
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// Need returns Dir if it holds every one of files (paths relative to it),
// and skips t with Skip, naming the first missing file, if not.
func Need(t testing.TB, files ...string) string {
	t.Helper()
	dir := Dir()
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			Skip(t, fmt.Sprintf("%s not found in %s", f, dir))
		}
	}
	return dir
}

// Main runs the package's tests and returns their exit code, after
// writing the line that names the tests skipped for want of data, if any.
// A package whose tests read the data has
//
//	func TestMain(m *testing.M) { os.Exit(datatest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	if line := Summary(); line != "" {
		fmt.Println(line)
		if !term.IsTerminal(int(os.Stdout.Fd())) {
			toTerminal(line)
		}
	}
	return code
}

// Summary returns the line Main writes, "" if no test was skipped for want
// of data: the number of tests, what to do, and the tests grouped by
// reason.
func Summary() string {
	skipped.Lock()
	defer skipped.Unlock()
	if len(skipped.tests) == 0 {
		return ""
	}
	byReason := map[string][]string{}
	for name, reason := range skipped.tests {
		byReason[reason] = append(byReason[reason], name)
	}
	var groups []string
	for reason, names := range byReason {
		sort.Strings(names)
		groups = append(groups, strings.Join(names, ", ")+": "+reason)
	}
	sort.Strings(groups)
	n := len(skipped.tests)
	tests := "tests"
	if n == 1 {
		tests = "test"
	}
	return fmt.Sprintf("%s: %d %s skipped for want of data (set $%s to the data directory; with CI=true they fail): %s",
		pkg(), n, tests, datadir.EnvVar, strings.Join(groups, "; "))
}

// pkg names the package under test: its directory (the working directory
// of its tests) relative to the module root.
func pkg() string {
	wd, err := os.Getwd()
	if err != nil {
		return "datatest"
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if rel, err := filepath.Rel(d, wd); err == nil {
				return filepath.ToSlash(rel)
			}
		}
		if filepath.Dir(d) == d {
			return filepath.Base(wd)
		}
	}
}

// toTerminal writes line to the controlling terminal, if the process has
// one.
func toTerminal(line string) {
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer tty.Close()
	io.WriteString(tty, line+"\n")
}

// reset forgets the skipped tests (for this package's own tests).
func reset() {
	skipped.Lock()
	skipped.tests = map[string]string{}
	skipped.Unlock()
}
