package cli

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/spf13/pflag"
)

func TestExitMessage(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantMsg  string
		wantCode int
	}{
		{"nil", nil, "", 0},
		{"help", pflag.ErrHelp, "", 0},
		{"wrapped help", fmt.Errorf("parsing: %w", pflag.ErrHelp), "", 0},
		{"usage", Usagef("bad --steps %d", -1), "prog: error: bad --steps -1", 2},
		{"wrapped usage", fmt.Errorf("loading: %w", Usagef("bad input")), "prog: error: loading: bad input", 2},
		{"usage wrapping", Usagef("reading data: %w", os.ErrNotExist), "prog: error: reading data: file does not exist", 2},
		{"failure", errors.New("out of memory"), "prog: error: out of memory", 1},
		{"multi-line", errors.Join(errors.New("first"), errors.New(" second \n")), "prog: error: first; second", 1},
		{"SIGINT", &InterruptError{Signal: os.Interrupt, Err: errors.New("training interrupted: checkpoint written")}, "prog: SIGINT: training interrupted: checkpoint written", 130},
		{"SIGTERM", &InterruptError{Signal: syscall.SIGTERM, Err: errors.New("interrupted by SIGTERM after 5 steps")}, "prog: interrupted by SIGTERM after 5 steps", 143},
		{"SIGHUP", &InterruptError{Signal: syscall.SIGHUP, Err: errors.New("interrupted by SIGHUP after 5 steps")}, "prog: interrupted by SIGHUP after 5 steps", 129},
		{"signal name elsewhere", &InterruptError{Signal: syscall.SIGTERM, Err: errors.New("stopped; see /tmp/SIGTERM")}, "prog: SIGTERM: stopped; see /tmp/SIGTERM", 143},
		{"wrapped SIGTERM", fmt.Errorf("run: %w", &InterruptError{Signal: syscall.SIGTERM, Err: Usagef("x")}), "prog: SIGTERM: run: x", 143},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, code := exitMessage("prog", tt.err)
			if msg != tt.wantMsg || code != tt.wantCode {
				t.Errorf("exitMessage = %q, %d; want %q, %d", msg, code, tt.wantMsg, tt.wantCode)
			}
		})
	}
}

func TestExitMessageFromParse(t *testing.T) {
	tests := []struct {
		args     []string
		wantMsg  string
		wantCode int
	}{
		{[]string{"--steps=x"}, `train: error: invalid argument "x" for "-n, --steps" flag: must be an integer`, 2},
		{[]string{"--flagfile=/nonexistent/x.flags"}, "train: error: cannot read flag file /nonexistent/x.flags: no such file or directory", 2},
		{[]string{"-h"}, "", 0},
	}
	for _, tt := range tests {
		msg, code := exitMessage("train", Parse(newFlags(), tt.args))
		if msg != tt.wantMsg || code != tt.wantCode {
			t.Errorf("Parse(%q): exitMessage = %q, %d; want %q, %d", tt.args, msg, code, tt.wantMsg, tt.wantCode)
		}
	}
}

func TestUsageErrorUnwrap(t *testing.T) {
	err := Usagef("reading data: %w", os.ErrNotExist)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("errors.Is(%v, os.ErrNotExist) = false", err)
	}
}
