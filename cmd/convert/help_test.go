package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestHelpStartsWithADescription is the regression test of a --help that
// began with pflag's bare "Usage of convert:": it starts with a one-line
// description of the command, then its synopsis and flags, and exits with
// status 0.
func TestHelpStartsWithADescription(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "-help"} {
		r, w, _ := os.Pipe()
		old := os.Stdout
		os.Stdout = w
		err := run(context.Background(), []string{arg})
		w.Close()
		os.Stdout = old
		b, _ := io.ReadAll(r)
		if !errors.Is(err, pflag.ErrHelp) {
			t.Errorf("%s: error %v, want pflag.ErrHelp (status 0)", arg, err)
		}
		lines := strings.Split(string(b), "\n")
		if len(lines) < 4 || !strings.HasPrefix(lines[0], "convert: ") || len(lines[0]) < 40 || lines[1] != "" ||
			!strings.HasPrefix(lines[2], "Usage: convert ") || !strings.Contains(string(b), "\nFlags:\n") || !strings.Contains(string(b), "--out ") {
			t.Errorf("%s: help\n%s\nwant a description, the synopsis and the flags", arg, b)
		}
	}
}
