// Package clitest holds checks that the commands' tests share.
package clitest

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// CheckHelp is the regression test of a --help that began with pflag's bare
// "Usage of PROG:": run with --help, -h and -help, the command prog must
// print to standard output a one-line description of itself, a blank line,
// its synopsis and its flags (--out among them), and return pflag.ErrHelp
// (status 0).
func CheckHelp(t *testing.T, prog string, run func(args []string) error) {
	t.Helper()
	for _, arg := range []string{"--help", "-h", "-help"} {
		out, err := Stdout(t, func() error { return run([]string{arg}) })
		b := []byte(out)
		if !errors.Is(err, pflag.ErrHelp) {
			t.Errorf("%s: error %v, want pflag.ErrHelp (status 0)", arg, err)
		}
		lines := strings.Split(string(b), "\n")
		if len(lines) < 4 || !strings.HasPrefix(lines[0], prog+": ") || len(lines[0]) < 40 || lines[1] != "" ||
			!strings.HasPrefix(lines[2], "Usage: "+prog+" ") || !strings.Contains(string(b), "\nFlags:\n") || !strings.Contains(string(b), "--out ") {
			t.Errorf("%s: help\n%s\nwant a description, the synopsis and the flags", arg, b)
		}
	}
}

// Stdout runs f with the process's standard output redirected and returns
// what f printed there, and f's error.
func Stdout(t testing.TB, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	err = f()
	w.Close()
	os.Stdout = old
	b, _ := io.ReadAll(r)
	return string(b), err
}

// RunMainEnv is the environment variable under which a command's test
// binary runs the command itself (see Main and Command).
const RunMainEnv = "METASGMCMC_RUN_MAIN"

// Main is a command's TestMain: with RunMainEnv=1 in the environment the
// test binary is the command (it runs main, which exits); otherwise it
// runs the tests with run (for example datatest.Main) and returns their
// exit status.
func Main(m *testing.M, main func(), run func(*testing.M) int) int {
	if os.Getenv(RunMainEnv) == "1" {
		main()
		return 0
	}
	return run(m)
}

// Cmd is the test binary set up to run as the command with args (see
// Main).
func Cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), RunMainEnv+"=1")
	return cmd
}

// Command runs the command with args (see Main) and returns its exit
// status and standard error.
func Command(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := Cmd(args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// CheckUsageError fails the test unless the command, run with args, exited
// with code 2 and wrote one line to standard error that begins
// "prog: error: " and contains want: how the commands refuse bad input.
func CheckUsageError(t *testing.T, prog string, args []string, code int, stderr, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != 2 || len(lines) != 1 || !strings.HasPrefix(stderr, prog+": error: ") || !strings.Contains(stderr, want) {
		t.Errorf("%v: status %d, stderr %q; want status 2 and one line with %q", args, code, stderr, want)
	}
}

// Started is the command running in the background (see Start).
type Started struct {
	Cmd    *exec.Cmd
	Stderr *bytes.Buffer // what the command writes to standard error
}

// Start starts the command with args in the background (see Main); the
// test's cleanup kills it if it is still running.
func Start(t *testing.T, args ...string) *Started {
	t.Helper()
	cmd := Cmd(args...)
	s := &Started{Cmd: cmd, Stderr: new(bytes.Buffer)}
	cmd.Stderr = s.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return s
}

// WaitFor waits until path exists, as a command started by Start writes
// it, and fails the test if it does not appear within a minute.
func WaitFor(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear", path)
}

// KilledRuns runs the command with args and -out a new directory to its
// end, then ten times more with -out another new directory each, killed
// with SIGKILL at a moment drawn from rng after the file named checkpoint
// appears in the directory, up to half the uninterrupted run's time later
// (where the moments fall varies with the machine's speed). It returns the
// uninterrupted run's directory and the ten killed runs', to resume and
// compare, and fails the test unless at least five of the ten were killed
// before they finished: otherwise it tests little.
func KilledRuns(t *testing.T, rng *rand.Rand, checkpoint string, args ...string) (straight string, killed []string) {
	t.Helper()
	straight = filepath.Join(t.TempDir(), "straight")
	began := time.Now()
	if code, stderr := Command(t, append(args, "-out", straight)...); code != 0 {
		t.Fatalf("uninterrupted run: status %d, %s", code, stderr)
	}
	took := time.Since(began)
	stopped := 0
	for range 10 {
		out := filepath.Join(t.TempDir(), "run")
		p := Start(t, append(args, "-out", out)...)
		WaitFor(t, filepath.Join(out, checkpoint))
		time.Sleep(time.Duration(rng.Float64() * float64(took) / 2))
		p.Cmd.Process.Kill()
		if err := p.Cmd.Wait(); err != nil {
			stopped++
		}
		killed = append(killed, out)
	}
	t.Logf("%d of 10 runs were killed before they finished", stopped)
	if stopped < 5 {
		t.Errorf("only %d of 10 runs were killed before they finished: the test tests little", stopped)
	}
	return straight, killed
}

// StopSignal is a signal that stops a command cleanly (see
// cli.NotifyContext) and the exit status it gives.
type StopSignal struct {
	Sig  syscall.Signal
	Name string // as the command names it: "SIGINT"
	Code int
}

// StopSignals are SIGINT, SIGTERM and SIGHUP, for a test of each.
var StopSignals = []StopSignal{{syscall.SIGINT, "SIGINT", 130}, {syscall.SIGTERM, "SIGTERM", 143}, {syscall.SIGHUP, "SIGHUP", 129}}

// Stop sends sig to the command and waits for it to exit; it fails the test
// unless the command exits with sig's status.
func (s *Started) Stop(t *testing.T, sig StopSignal) {
	t.Helper()
	s.Cmd.Process.Signal(sig.Sig)
	err := s.Cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != sig.Code {
		t.Fatalf("stopped by %s: %v; want status %d", sig.Name, err, sig.Code)
	}
}

// ReadCSV parses the CSV file at path with encoding/csv, failing the test
// on a missing or malformed file.
func ReadCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s is not a valid CSV file: %v", path, err)
	}
	return records
}

// CopyDir copies the files of a run's directory into a new directory, to
// run it on in two ways, and returns the copy.
func CopyDir(t *testing.T, dir string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// LogLines splits a command's standard error into lines, without the notes
// that depend on the machine rather than the run (OpenBLAS's kernels,
// graph/openblas.Advice).
func LogLines(stderr string) []string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	return slices.DeleteFunc(lines, func(l string) bool { return strings.Contains(l, "note: OpenBLAS runs") })
}
