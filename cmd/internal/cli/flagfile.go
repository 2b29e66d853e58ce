package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/spf13/pflag"
)

// FlagFileFlag is the name of the flag that Parse registers to name a flag
// file.
const FlagFileFlag = "flagfile"

// Parse parses args into fs, reading further flags from the file named by
// --flagfile if one is given.
//
// Parse registers a --flagfile string flag on fs unless fs already has one.
// Each flag in the flag file is applied only if it was not set on the command
// line, so the command line overrides the file whatever the order of the
// arguments. A repeated flag within the file behaves as it would when
// repeated on the command line (the last value wins, slices accumulate).
//
// The flag file holds one flag per line, in any of these forms:
//
//	--name=value
//	--name value
//	-name value
//	name = value
//	--bool-flag
//
// Blank lines and lines whose first non-space character is '#' are ignored,
// and a '#' preceded by a space or tab starts a comment that runs to the end
// of the line. Values are taken literally, without quoting or escapes, and
// relative paths in them are not rewritten. A flag file may not itself
// contain --flagfile.
//
// Every error except pflag.ErrHelp is a *UsageError, so Exit reports it with
// status 2; errors in the flag file name the file and line. fs should be
// created with pflag.ContinueOnError so that errors reach the caller.
func Parse(fs *pflag.FlagSet, args []string) error {
	if fs.Lookup(FlagFileFlag) == nil {
		fs.String(FlagFileFlag, "", "read flags from `FILE`, one per line; flags on the command line override it")
	}
	if err := fs.Parse(singleDashLong(args)); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return &UsageError{Err: err}
	}
	path := fs.Lookup(FlagFileFlag).Value.String()
	if path == "" {
		return nil
	}
	return applyFlagFile(fs, path)
}

// singleDashLong rewrites Go-style long flags written with one dash
// (-task x, -steps=5) to pflag's double dash, so both spellings work. Values
// such as -1.5 are left alone: only a dash followed by a letter and at least
// one more character is rewritten, and nothing after a "--" terminator.
func singleDashLong(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "--" {
			copy(out[i:], args[i:])
			break
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && unicode.IsLetter(rune(a[1])) {
			a = "-" + a
		}
		out[i] = a
	}
	return out
}

// applyFlagFile sets on fs each flag in the file at path that was not
// already set on the command line.
func applyFlagFile(fs *pflag.FlagSet, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return Usagef("cannot read flag file %s: %v", path, err)
	}
	onCommandLine := make(map[string]bool)
	fs.Visit(func(f *pflag.Flag) { onCommandLine[f.Name] = true })

	text := strings.TrimPrefix(string(data), "\ufeff")
	for i, line := range strings.Split(text, "\n") {
		fail := func(format string, args ...any) error {
			return Usagef("flag file %s line %d: %s", path, i+1, fmt.Sprintf(format, args...))
		}
		l, ok := parseFlagLine(line)
		if !ok {
			continue
		}
		if l.name == "" {
			return fail("expected a flag, got %q", strings.TrimSpace(line))
		}
		f := fs.Lookup(l.name)
		if f == nil && len(l.name) == 1 {
			f = fs.ShorthandLookup(l.name)
		}
		switch {
		case f == nil:
			return fail("unknown flag %s", l.spelled())
		case f.Name == FlagFileFlag:
			return fail("%s is not allowed in a flag file", l.spelled())
		case !l.hasValue && f.NoOptDefVal == "":
			return fail("flag %s needs a value", l.spelled())
		}
		if onCommandLine[f.Name] {
			continue
		}
		value := l.value
		if !l.hasValue {
			value = f.NoOptDefVal
		}
		if err := fs.Set(f.Name, value); err != nil {
			return fail("%v", err)
		}
	}
	return nil
}

// flagLine is one flag as written in a flag file.
type flagLine struct {
	dashes   string // leading dashes as written: "", "-" or "--"
	name     string // flag name without dashes; "" if missing
	value    string
	hasValue bool
}

// spelled returns the flag as it is best shown in an error message.
func (l flagLine) spelled() string {
	if l.dashes == "-" && len(l.name) == 1 {
		return "-" + l.name
	}
	return "--" + l.name
}

// parseFlagLine splits a line of a flag file into a flag name and value. It
// reports false for blank and comment lines.
func parseFlagLine(line string) (flagLine, bool) {
	line = strings.TrimSpace(stripComment(line))
	if line == "" {
		return flagLine{}, false
	}
	var l flagLine
	switch {
	case strings.HasPrefix(line, "--"):
		l.dashes = "--"
	case strings.HasPrefix(line, "-"):
		l.dashes = "-"
	}
	line = line[len(l.dashes):]
	end := strings.IndexAny(line, "= \t")
	if end < 0 {
		l.name = line
		return l, true
	}
	l.name = line[:end]
	rest := strings.TrimSpace(line[end:])
	rest, _ = strings.CutPrefix(rest, "=")
	l.value = strings.TrimSpace(rest)
	l.hasValue = true
	return l, true
}

// stripComment removes a comment: a '#' at the start of the line or after a
// space or tab, and everything after it.
func stripComment(line string) string {
	for i := 0; i < len(line); i++ {
		if line[i] == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			return line[:i]
		}
	}
	return line
}

// Resolved returns the final value of every flag in fs, including
// --flagfile, keyed by flag name, as the flags' Value.String methods give
// them. It is meant for recording the resolved configuration of a run, for
// example with WriteJSON.
func Resolved(fs *pflag.FlagSet) map[string]string {
	m := make(map[string]string)
	fs.VisitAll(func(f *pflag.Flag) { m[f.Name] = f.Value.String() })
	return m
}
