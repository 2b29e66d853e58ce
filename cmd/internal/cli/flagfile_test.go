package cli

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// newFlags returns a flag set like a command's.
func newFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	fs.IntP("steps", "n", 10, "number of steps")
	fs.Float64("lr", 0.1, "learning rate")
	fs.String("out", "out.csv", "output file")
	fs.BoolP("verbose", "v", false, "verbose output")
	fs.StringSlice("tags", nil, "tags")
	return fs
}

// writeFlagFile writes content to a flag file in a temporary directory and
// returns its path.
func writeFlagFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.flags")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// subst replaces FILE in s with path.
func subst(s, path string) string { return strings.ReplaceAll(s, "FILE", path) }

func TestParse(t *testing.T) {
	defaults := map[string]string{
		"steps": "10", "lr": "0.1", "out": "out.csv", "verbose": "false", "tags": "[]",
	}
	tests := []struct {
		name string
		file string
		args []string          // FILE stands for the flag file
		want map[string]string // flags that differ from defaults
	}{
		{
			name: "no flag file",
			args: []string{"--steps=3", "-v"},
			want: map[string]string{"steps": "3", "verbose": "true"},
		},
		{
			name: "line forms",
			file: "--steps=3\n--lr 0.5\n-out res.csv\n--verbose\ntags = a,b\n",
			args: []string{"--flagfile", "FILE"},
			want: map[string]string{"steps": "3", "lr": "0.5", "out": "res.csv", "verbose": "true", "tags": "[a,b]"},
		},
		{
			name: "shorthand and tabs",
			file: "-n\t7\n\t-v\n",
			args: []string{"--flagfile=FILE"},
			want: map[string]string{"steps": "7", "verbose": "true"},
		},
		{
			name: "comments and blank lines",
			file: "# a comment\n\n   # indented comment\n--steps=4 # four\n--out=a#b.csv\n--lr=0.2\t# tab comment\n\r\n",
			args: []string{"--flagfile", "FILE"},
			want: map[string]string{"steps": "4", "out": "a#b.csv", "lr": "0.2"},
		},
		{
			name: "CRLF line endings",
			file: "--steps=5\r\n--out=o.csv\r\n",
			args: []string{"--flagfile", "FILE"},
			want: map[string]string{"steps": "5", "out": "o.csv"},
		},
		{
			name: "command line after flag file overrides",
			file: "--steps=3\n--lr=0.5\n",
			args: []string{"--flagfile", "FILE", "--steps=8"},
			want: map[string]string{"steps": "8", "lr": "0.5"},
		},
		{
			name: "command line before flag file overrides",
			file: "--steps=3\n--lr=0.5\n",
			args: []string{"-n", "8", "--flagfile", "FILE"},
			want: map[string]string{"steps": "8", "lr": "0.5"},
		},
		{
			name: "command line slice replaces file slice",
			file: "--tags=a\n--tags=b\n",
			args: []string{"--tags=c", "--flagfile", "FILE"},
			want: map[string]string{"tags": "[c]"},
		},
		{
			name: "repeated slice in file accumulates",
			file: "--tags=a\n--tags=b\n",
			args: []string{"--flagfile", "FILE"},
			want: map[string]string{"tags": "[a,b]"},
		},
		{
			name: "bool values",
			file: "--verbose=false\n",
			args: []string{"--flagfile", "FILE"},
			want: map[string]string{},
		},
		{
			name: "bool value after space",
			file: "--verbose true\n",
			args: []string{"--flagfile", "FILE"},
			want: map[string]string{"verbose": "true"},
		},
		{
			name: "command line bool overrides file",
			file: "--verbose\n",
			args: []string{"--verbose=false", "--flagfile", "FILE"},
			want: map[string]string{},
		},
		{
			name: "empty value",
			file: "--out=\n",
			args: []string{"--flagfile", "FILE"},
			want: map[string]string{"out": ""},
		},
		{
			name: "relative path kept",
			file: "--out=../runs/a.csv\n",
			args: []string{"--flagfile", "FILE"},
			want: map[string]string{"out": "../runs/a.csv"},
		},
		{
			name: "empty flag file",
			file: "",
			args: []string{"--flagfile", "FILE"},
			want: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFlagFile(t, tt.file)
			fs := newFlags()
			var args []string
			for _, a := range tt.args {
				args = append(args, subst(a, path))
			}
			if err := Parse(fs, args); err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := map[string]string{"flagfile": ""}
			if strings.Contains(strings.Join(tt.args, " "), "FILE") {
				want["flagfile"] = path
			}
			for k, v := range defaults {
				want[k] = v
			}
			for k, v := range tt.want {
				want[k] = v
			}
			if got := Resolved(fs); !reflect.DeepEqual(got, want) {
				t.Errorf("Resolved = %v, want %v", got, want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		args []string // FILE stands for the flag file
		want string   // the error message; FILE stands for the flag file
	}{
		{
			name: "unknown flag",
			file: "--steps=3\n# comment\n--foo=1\n",
			args: []string{"--flagfile", "FILE"},
			want: "flag file FILE line 3: unknown flag --foo",
		},
		{
			name: "unknown flag without dashes",
			file: "foo = 1\n",
			args: []string{"--flagfile", "FILE"},
			want: "flag file FILE line 1: unknown flag --foo",
		},
		{
			name: "unknown shorthand",
			file: "-x 1\n",
			args: []string{"--flagfile", "FILE"},
			want: "flag file FILE line 1: unknown flag -x",
		},
		{
			name: "unknown flag set on command line too",
			file: "--foo=1\n",
			args: []string{"--steps=2", "--flagfile", "FILE"},
			want: "flag file FILE line 1: unknown flag --foo",
		},
		{
			name: "nested flag file",
			file: "\n--flagfile=other.flags\n",
			args: []string{"--flagfile", "FILE"},
			want: "flag file FILE line 2: --flagfile is not allowed in a flag file",
		},
		{
			name: "missing value",
			file: "--steps\n",
			args: []string{"--flagfile", "FILE"},
			want: "flag file FILE line 1: flag --steps needs a value",
		},
		{
			name: "invalid value",
			file: "--steps=many\n",
			args: []string{"--flagfile", "FILE"},
			want: `flag file FILE line 1: invalid argument "many" for "-n, --steps" flag: must be an integer`,
		},
		{
			name: "no flag name",
			file: "= 3\n",
			args: []string{"--flagfile", "FILE"},
			want: `flag file FILE line 1: expected a flag, got "= 3"`,
		},
		{
			name: "long line shortened",
			file: "--" + strings.Repeat("x", 100) + "=1\n",
			args: []string{"--flagfile", "FILE"},
			want: "flag file FILE line 1: unknown flag --" + strings.Repeat("x", 58) + "…",
		},
		{
			name: "missing flag file",
			args: []string{"--flagfile", "FILE.missing"},
			want: "cannot read flag file FILE.missing: no such file or directory",
		},
		{
			name: "bad command line",
			args: []string{"--bogus"},
			want: "unknown flag: --bogus",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFlagFile(t, tt.file)
			var args []string
			for _, a := range tt.args {
				args = append(args, subst(a, path))
			}
			err := Parse(newFlags(), args)
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if got, want := err.Error(), subst(tt.want, path); got != want {
				t.Errorf("error = %q, want %q", got, want)
			}
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Errorf("error %v is %T, want a *UsageError", err, err)
			}
		})
	}
}

func TestParseHelp(t *testing.T) {
	fs := newFlags()
	var out strings.Builder
	fs.SetOutput(&out)
	err := Parse(fs, []string{"--help"})
	if !errors.Is(err, pflag.ErrHelp) {
		t.Fatalf("Parse(--help) = %v, want pflag.ErrHelp", err)
	}
	if !strings.Contains(out.String(), "--flagfile FILE") {
		t.Errorf("usage does not show --flagfile FILE:\n%s", out.String())
	}
}

func TestParseKeepsExistingFlagFileFlag(t *testing.T) {
	fs := newFlags()
	fs.String(FlagFileFlag, "", "custom usage")
	path := writeFlagFile(t, "--steps=2\n")
	if err := Parse(fs, []string{"--flagfile", path}); err != nil {
		t.Fatal(err)
	}
	if got := fs.Lookup(FlagFileFlag).Usage; got != "custom usage" {
		t.Errorf("usage = %q, want the caller's", got)
	}
	if got, _ := fs.GetInt("steps"); got != 2 {
		t.Errorf("steps = %d, want 2", got)
	}
}

func TestParseKeepsArgs(t *testing.T) {
	fs := newFlags()
	path := writeFlagFile(t, "--steps=2\n")
	if err := Parse(fs, []string{"a", "--flagfile", path, "b"}); err != nil {
		t.Fatal(err)
	}
	if got, want := fs.Args(), []string{"a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Args = %q, want %q", got, want)
	}
}

// ParseNoArgs refuses the arguments that Parse keeps, as a usage error,
// and accepts flags alone.
func TestParseNoArgs(t *testing.T) {
	var ue *UsageError
	err := ParseNoArgs(newFlags(), []string{"--steps=2", "a", "b"})
	if !errors.As(err, &ue) || err.Error() != `unexpected arguments ["a" "b"]` {
		t.Errorf("ParseNoArgs with arguments: %v, want a usage error naming them", err)
	}
	fs := newFlags()
	if err := ParseNoArgs(fs, []string{"--steps=2"}); err != nil || fs.Lookup("steps").Value.String() != "2" {
		t.Errorf("ParseNoArgs(--steps=2): %v, steps %v", err, fs.Lookup("steps").Value)
	}
}

func TestParseFlagLine(t *testing.T) {
	tests := []struct {
		line string
		want flagLine
		ok   bool
	}{
		{"", flagLine{}, false},
		{"   \t", flagLine{}, false},
		{"# --steps=3", flagLine{}, false},
		{"  # --steps=3", flagLine{}, false},
		{"--a=b", flagLine{"--", "a", "b", true}, true},
		{"--a=b=c", flagLine{"--", "a", "b=c", true}, true},
		{"--a b=c", flagLine{"--", "a", "b=c", true}, true},
		{"--a  b c ", flagLine{"--", "a", "b c", true}, true},
		{"-a b", flagLine{"-", "a", "b", true}, true},
		{"-name b", flagLine{"-", "name", "b", true}, true},
		{"a = b", flagLine{"", "a", "b", true}, true},
		{"a=b", flagLine{"", "a", "b", true}, true},
		{"--a = b", flagLine{"--", "a", "b", true}, true},
		{"--a", flagLine{"--", "a", "", false}, true},
		{"--a=", flagLine{"--", "a", "", true}, true},
		{"--a=x#y", flagLine{"--", "a", "x#y", true}, true},
		{"--a=x #y", flagLine{"--", "a", "x", true}, true},
		{"--a # on", flagLine{"--", "a", "", false}, true},
		{"--a=#x", flagLine{"--", "a", "#x", true}, true},
	}
	for _, tt := range tests {
		got, ok := parseFlagLine(tt.line)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseFlagLine(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func TestResolvedDefaults(t *testing.T) {
	fs := newFlags()
	if err := Parse(fs, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"steps": "10", "lr": "0.1", "out": "out.csv", "verbose": "false", "tags": "[]", "flagfile": "",
	}
	if got := Resolved(fs); !reflect.DeepEqual(got, want) {
		t.Errorf("Resolved = %v, want %v", got, want)
	}
}

func TestParseAcceptsSingleDashLongFlags(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	task := fs.String("task", "", "")
	beta := fs.Float64("beta", 0, "")
	steps := fs.Int("steps", 0, "")
	if err := Parse(fs, []string{"-task", "gaussian20", "-beta", "-1.5", "-steps=7", "--", "-x"}); err != nil {
		t.Fatal(err)
	}
	if *task != "gaussian20" || *beta != -1.5 || *steps != 7 || fs.Arg(0) != "-x" {
		t.Errorf("got task %q, beta %v, steps %d, args %q", *task, *beta, *steps, fs.Args())
	}
	// a value that looks like a flag stays a value
	if err := Parse(fs, []string{"-task", "-odd", "-beta=-2"}); err != nil {
		t.Fatal(err)
	}
	if *task != "-odd" || *beta != -2 {
		t.Errorf("got task %q, beta %v", *task, *beta)
	}
}

// TestParseFlagFilesInOrder: --flagfile given more than once applies every
// file in order, a later file overriding an earlier one (a slice flag takes
// the later file's values alone), and the command line overrides them all.
func TestParseFlagFilesInOrder(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.flags")
	over := filepath.Join(dir, "over.flags")
	os.WriteFile(base, []byte("--steps=3\n--lr=0.5\n--tags=a\n--tags=b\n--out=base.csv\n"), 0o644)
	os.WriteFile(over, []byte("--steps=4\n--tags=c\n--verbose\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want map[string]string
	}{
		{"one file", []string{"--flagfile", base},
			map[string]string{"steps": "3", "lr": "0.5", "tags": "[a,b]", "out": "base.csv", "verbose": "false", "flagfile": base}},
		{"later file overrides", []string{"--flagfile", base, "--flagfile", over},
			map[string]string{"steps": "4", "lr": "0.5", "tags": "[c]", "out": "base.csv", "verbose": "true", "flagfile": base + "," + over}},
		{"order matters", []string{"--flagfile", over, "--flagfile", base},
			map[string]string{"steps": "3", "lr": "0.5", "tags": "[a,b]", "out": "base.csv", "verbose": "true", "flagfile": over + "," + base}},
		{"command line wins", []string{"--steps=9", "--flagfile", base, "--flagfile=" + over, "--tags=z"},
			map[string]string{"steps": "9", "lr": "0.5", "tags": "[z]", "out": "base.csv", "verbose": "true", "flagfile": base + "," + over}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFlags()
			if err := Parse(fs, tt.args); err != nil {
				t.Fatal(err)
			}
			if got := Resolved(fs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Resolved = %v, want %v", got, tt.want)
			}
		})
	}
	// a caller's own --flagfile flag sees every file too
	fs := newFlags()
	last := fs.String(FlagFileFlag, "", "custom")
	if err := Parse(fs, []string{"--flagfile", base, "--flagfile", over}); err != nil {
		t.Fatal(err)
	}
	if steps, _ := fs.GetInt("steps"); steps != 4 || *last != over {
		t.Errorf("with the caller's flag: steps %d, flag value %q", steps, *last)
	}
}

// TestParseRefusesBinaryFlagFiles: a binary file given as a flag file is
// named in a one-line error that does not echo its bytes.
func TestParseRefusesBinaryFlagFiles(t *testing.T) {
	tests := []struct {
		name    string
		content []byte
		want    string // after "flag file FILE "
	}{
		{"NUL", []byte("--steps=3\n\x00\x00\x00"), "is not a text file (byte 10 is 0x00)"},
		{"gzip", []byte{0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, '\n', 0xbe, 0xef}, "is not a text file (byte 0 is 0x1f)"},
		{"invalid UTF-8", []byte("--out=caf\xe9\n"), "is not a text file (byte 9 is 0xe9)"},
		{"escape", []byte("--out=\x1b[2J\n"), "is not a text file (byte 6 is 0x1b)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.flags")
			os.WriteFile(path, tt.content, 0o644)
			err := Parse(newFlags(), []string{"--flagfile", path})
			want := "flag file " + path + " " + tt.want + "; a flag file holds one flag per line, as --name=value"
			if err == nil || err.Error() != want {
				t.Errorf("error = %v, want %q", err, want)
			}
		})
	}
	// text in other scripts, a BOM, tabs and CRLF are fine
	path := writeFlagFile(t, "\ufeff--out=café—ü.csv\r\n\t--steps 2\f\n")
	fs := newFlags()
	if err := Parse(fs, []string{"--flagfile", path}); err != nil {
		t.Fatal(err)
	}
	if out, _ := fs.GetString("out"); out != "café—ü.csv" {
		t.Errorf("out = %q", out)
	}
}

// TestParseRefusesNonFiniteFloats: NaN and infinities are refused for every
// float flag, on the command line and in flag files, before any use.
func TestParseRefusesNonFiniteFloats(t *testing.T) {
	tests := []struct {
		file string
		args []string // FILE stands for the flag file
		want string
	}{
		{"", []string{"--lr", "NaN"}, "--lr must be a finite number, got NaN"},
		{"", []string{"--lr=nan"}, "--lr must be a finite number, got NaN"},
		{"", []string{"--lr=Inf"}, "--lr must be a finite number, got +Inf"},
		{"", []string{"--lr=-infinity"}, "--lr must be a finite number, got -Inf"},
		{"", []string{"-lr", "-Inf"}, "--lr must be a finite number, got -Inf"},
		{"", []string{"--lr", "-inf"}, "--lr must be a finite number, got -Inf"},
		{"", []string{"--f32=1e39"}, `invalid argument "1e39" for "--f32" flag`},
		{"", []string{"--f32=-Inf"}, "--f32 must be a finite number, got -Inf"},
		{"", []string{"--range=0,NaN"}, "--range must be a finite number, got NaN"},
		{"--lr=+Inf\n", []string{"--flagfile", "FILE"}, "--lr must be a finite number, got +Inf"},
	}
	for _, tt := range tests {
		path := writeFlagFile(t, tt.file)
		var args []string
		for _, a := range tt.args {
			args = append(args, subst(a, path))
		}
		fs := newFlags()
		fs.Float32("f32", 0, "")
		fs.Float64Slice("range", nil, "")
		fs.Float64("nan-default", math.NaN(), "a default need not be finite")
		err := Parse(fs, args)
		var ue *UsageError
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &ue) {
			t.Errorf("%q: error %v, want a usage error with %q", tt.args, err, tt.want)
		}
	}
	fs := newFlags()
	fs.Float64("nan-default", math.NaN(), "")
	if err := Parse(fs, []string{"--lr=-1e300"}); err != nil {
		t.Errorf("finite values: %v", err)
	}
}
