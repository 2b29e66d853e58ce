package cli

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"
)

// FlagFileFlag is the name of the flag that Parse registers to name a flag
// file.
const FlagFileFlag = "flagfile"

// Parse parses args into fs, reading further flags from the files named by
// --flagfile if any are given.
//
// Parse registers a --flagfile flag on fs unless fs already has one.
// --flagfile may be given more than once: the files are applied in the
// order given, a flag in a later file overriding the same flag in an
// earlier one (a slice flag then takes the later file's values alone). Each
// flag in a flag file is applied only if it was not set on the command
// line, so the command line overrides every file whatever the order of the
// arguments. A repeated flag within one file behaves as it would when
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
// contain --flagfile, and must be text: a file with NUL bytes, other control
// characters or invalid UTF-8 is refused, without echoing its content.
//
// Parse refuses a NaN or infinite value of any float flag that was set
// (float64, float32 and their slices), naming the flag.
//
// Every error except pflag.ErrHelp is a *UsageError, so Exit reports it with
// status 2; errors in a flag file name the file and line. fs should be
// created with pflag.ContinueOnError so that errors reach the caller.
func Parse(fs *pflag.FlagSet, args []string) error {
	files := &flagFiles{}
	if f := fs.Lookup(FlagFileFlag); f == nil {
		fs.Var(files, FlagFileFlag, "read flags from `FILE`, one per line (repeatable: later files override earlier ones); flags on the command line override them")
	} else if ff, ok := f.Value.(*flagFiles); ok {
		files = ff
	} else {
		files.orig = f.Value // the caller's own flag still sees every value
		f.Value = files
	}
	if err := fs.Parse(singleDashLong(fs, args)); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return &UsageError{Err: err}
	}
	if err := applyFlagFiles(fs, files.paths); err != nil {
		return err
	}
	return checkFinite(fs)
}

// ParseNoArgs is Parse for a command that takes flags alone: an argument
// left after the flags is a *UsageError.
func ParseNoArgs(fs *pflag.FlagSet, args []string) error {
	if err := Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected arguments %q", fs.Args())
	}
	return nil
}

// flagFiles is the value of --flagfile: every path given, in order.
type flagFiles struct {
	paths []string
	orig  pflag.Value // a flag the caller registered, also set; nil if none
}

// Set appends a path.
func (v *flagFiles) Set(s string) error {
	v.paths = append(v.paths, s)
	if v.orig != nil {
		return v.orig.Set(s)
	}
	return nil
}

// String returns the paths joined by commas.
func (v *flagFiles) String() string { return strings.Join(v.paths, ",") }

// Type names the value's type for pflag.
func (v *flagFiles) Type() string { return "string" }

// checkFinite refuses a NaN or infinite value of a float flag that was set.
func checkFinite(fs *pflag.FlagSet) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		var values []string
		switch f.Value.Type() {
		case "float64", "float32":
			values = []string{f.Value.String()}
		case "float64Slice", "float32Slice":
			if sv, ok := f.Value.(pflag.SliceValue); ok {
				values = sv.GetSlice()
			}
		default:
			return
		}
		for _, s := range values {
			if x, perr := strconv.ParseFloat(s, 64); perr == nil && (math.IsNaN(x) || math.IsInf(x, 0)) {
				err = Usagef("--%s must be a finite number, got %s", f.Name, s)
				return
			}
		}
	})
	return err
}

// singleDashLong rewrites Go-style long flags written with one dash
// (-task x, -steps=5) to pflag's double dash, so both spellings work. Values
// such as -1.5 are left alone: only a dash followed by a letter and at least
// one more character is rewritten, never the value of a flag of fs that
// takes one (-beta -Inf, -out -x), and nothing after a "--" terminator.
func singleDashLong(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, len(args))
	isValue := false // args[i] is the value of the flag before it
	for i, a := range args {
		if a == "--" && !isValue {
			copy(out[i:], args[i:])
			break
		}
		if !isValue && len(a) > 2 && a[0] == '-' && a[1] != '-' && unicode.IsLetter(rune(a[1])) {
			a = "-" + a
		}
		out[i] = a
		isValue = !isValue && takesValue(fs, a)
	}
	return out
}

// takesValue reports whether arg is a flag of fs given without "=" that
// takes the next argument as its value.
func takesValue(fs *pflag.FlagSet, arg string) bool {
	var f *pflag.Flag
	switch {
	case strings.Contains(arg, "="):
		return false
	case len(arg) > 2 && strings.HasPrefix(arg, "--"):
		f = fs.Lookup(arg[2:])
	case len(arg) == 2 && arg[0] == '-' && arg[1] != '-':
		f = fs.ShorthandLookup(arg[1:])
	}
	return f != nil && f.NoOptDefVal == ""
}

// assignment is one flag set by a flag file.
type assignment struct {
	file  int // index of the file among the --flagfile paths
	line  int // 1-based line number
	flag  *pflag.Flag
	value string
}

// applyFlagFiles reads the flag files at paths, in order, and sets on fs
// each flag that was not set on the command line, taking a flag from the
// last file that sets it.
func applyFlagFiles(fs *pflag.FlagSet, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	onCommandLine := make(map[string]bool)
	fs.Visit(func(f *pflag.Flag) { onCommandLine[f.Name] = true })
	var all []assignment
	lastFile := make(map[string]int) // flag name: the last file that sets it
	for i, path := range paths {
		as, err := readFlagFile(fs, path)
		if err != nil {
			return err
		}
		for _, a := range as {
			a.file = i
			lastFile[a.flag.Name] = i
			all = append(all, a)
		}
	}
	for _, a := range all {
		if onCommandLine[a.flag.Name] || a.file != lastFile[a.flag.Name] {
			continue
		}
		if err := fs.Set(a.flag.Name, a.value); err != nil {
			return Usagef("flag file %s line %d: %v", paths[a.file], a.line, err)
		}
	}
	return nil
}

// readFlagFile reads and checks the flag file at path and returns its
// flags in order.
func readFlagFile(fs *pflag.FlagSet, path string) ([]assignment, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, Usagef("cannot read flag file %s: %v", path, err)
	}
	if off, ok := textOffset(data); !ok {
		return nil, Usagef("flag file %s is not a text file (byte %d is 0x%02x); a flag file holds one flag per line, as --name=value", path, off, data[off])
	}
	var as []assignment
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
			return nil, fail("expected a flag, got %q", shorten(strings.TrimSpace(line)))
		}
		f := fs.Lookup(l.name)
		if f == nil && len(l.name) == 1 {
			f = fs.ShorthandLookup(l.name)
		}
		switch {
		case f == nil:
			return nil, fail("unknown flag %s", shorten(l.spelled()))
		case f.Name == FlagFileFlag:
			return nil, fail("%s is not allowed in a flag file", l.spelled())
		case !l.hasValue && f.NoOptDefVal == "":
			return nil, fail("flag %s needs a value", l.spelled())
		}
		value := l.value
		if !l.hasValue {
			value = f.NoOptDefVal
		}
		as = append(as, assignment{line: i + 1, flag: f, value: value})
	}
	return as, nil
}

// textOffset reports whether data is text: valid UTF-8 without control
// characters other than tab, line feed, carriage return, vertical tab and
// form feed. If it is not, it returns the offset of the first offending
// byte.
func textOffset(data []byte) (int, bool) {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i, false
		}
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\v' && r != '\f' || r == 0x7f {
			return i, false
		}
		i += size
	}
	return 0, true
}

// shorten cuts s to at most 60 characters for an error message.
func shorten(s string) string {
	const max = 60
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "…"
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
