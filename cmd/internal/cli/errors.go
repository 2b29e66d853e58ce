package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
)

// UsageError is an error in what the user asked for: a bad flag, flag file,
// argument or input. Exit reports it with status 2.
type UsageError struct {
	Err error
}

// Error returns the message of the underlying error.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a *UsageError whose message is formatted as by fmt.Errorf,
// so %w may wrap another error.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Exit ends the program for err. For nil it exits with status 0. For
// pflag.ErrHelp, whose usage message pflag has already printed, it exits
// with status 0 and prints nothing. Otherwise it prints "prog: error:
// message" as one line on standard error (the lines of a multi-line message
// are joined with "; ") and exits with status 2 if err is or wraps a
// *UsageError, as every error from Parse but ErrHelp does, and with status 1
// for any other failure. An *InterruptError (see Interrupted) is printed as
// "prog: message", the message prefixed with the signal's name (as
// "SIGTERM: ") unless it begins "interrupted by SIGTERM", and exits with 128 plus the
// signal's number: 130 for SIGINT, 143 for SIGTERM. An empty prog stands for the base name of
// os.Args[0].
func Exit(prog string, err error) {
	if prog == "" {
		prog = filepath.Base(os.Args[0])
	}
	msg, code := exitMessage(prog, err)
	if msg != "" {
		fmt.Fprintln(os.Stderr, msg)
	}
	os.Exit(code)
}

// exitMessage returns the line Exit prints for err, "" for none, and the
// status it exits with.
func exitMessage(prog string, err error) (string, int) {
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return "", 0
	}
	var ie *InterruptError
	if errors.As(err, &ie) {
		msg, name := oneLine(err.Error()), SignalName(ie.Signal)
		if !strings.HasPrefix(msg, "interrupted by "+name) {
			msg = name + ": " + msg
		}
		return prog + ": " + msg, signalStatus(ie.Signal)
	}
	code := 1
	var ue *UsageError
	if errors.As(err, &ue) {
		code = 2
	}
	return prog + ": error: " + oneLine(err.Error()), code
}

// oneLine joins the non-blank lines of s with "; ".
func oneLine(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}
