// Package clitest holds checks that the commands' tests share.
package clitest

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"

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
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		old := os.Stdout
		os.Stdout = w
		err = run([]string{arg})
		w.Close()
		os.Stdout = old
		b, _ := io.ReadAll(r)
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
