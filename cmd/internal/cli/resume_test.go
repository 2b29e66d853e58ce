package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestResumeTakesTheInputsItStartedWith: a run records the absolute path
// and content hash of each input file; resumed from another directory it
// reads the same file, and it refuses a file whose content changed, one
// that is gone, and another file given on the command line, naming the
// flag and the path.
func TestResumeTakesTheInputsItStartedWith(t *testing.T) {
	r := RunFlags{Files: []string{"meta"}, Damaged: "restore it"}
	newFS := func() *pflag.FlagSet {
		fs := pflag.NewFlagSet("sample", pflag.ContinueOnError)
		fs.String("meta", "", "trained sampler")
		fs.Int("steps", 10, "steps")
		return fs
	}
	tests := []struct {
		name string
		// edit changes the world after the run started, in directory
		// b (the current one when resuming); it returns the command line
		edit func(t *testing.T, a, b string) []string
		want string // "" for success, else part of the error
	}{
		{"same file", func(t *testing.T, a, b string) []string { return nil }, ""},
		{"same file named again", func(t *testing.T, a, b string) []string {
			return []string{"--meta", filepath.Join("..", "a", "s.json")}
		}, ""},
		{"a file of the same name here", func(t *testing.T, a, b string) []string {
			os.WriteFile(filepath.Join(b, "s.json"), []byte("other"), 0o644)
			return nil
		}, ""},
		{"the same name given here", func(t *testing.T, a, b string) []string {
			os.WriteFile(filepath.Join(b, "s.json"), []byte("other"), 0o644)
			return []string{"--meta", "s.json"}
		}, "--meta s.json conflicts with the run in RUN, which started with --meta A/s.json"},
		{"changed", func(t *testing.T, a, b string) []string {
			os.WriteFile(filepath.Join(a, "s.json"), []byte("edited"), 0o644)
			return nil
		}, "cannot resume RUN: --meta A/s.json has changed since the run started (sha256 "},
		{"gone", func(t *testing.T, a, b string) []string {
			os.Remove(filepath.Join(a, "s.json"))
			return nil
		}, "cannot resume RUN: it started with --meta A/s.json, which cannot be read now (no such file or directory): put that file back"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			a, b, run := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "run")
			for _, d := range []string{a, b, run} {
				os.Mkdir(d, 0o755)
			}
			os.WriteFile(filepath.Join(a, "s.json"), []byte("trained"), 0o644)
			t.Chdir(a)
			fs := newFS()
			if err := Parse(fs, []string{"--meta", "s.json"}); err != nil {
				t.Fatal(err)
			}
			in, err := r.Inputs(fs)
			if err != nil {
				t.Fatal(err)
			}
			b0, _ := json.Marshal(map[string]any{"command": "sample", "flags": Resolved(fs), "given": r.Given(fs), "inputs": in})
			os.WriteFile(filepath.Join(run, ConfigFile), b0, 0o644)
			if got := in["meta"].Path; got != filepath.Join(a, "s.json") {
				t.Fatalf("recorded path %q", got)
			}

			args := tt.edit(t, a, b)
			t.Chdir(b)
			fs = newFS()
			if err := Parse(fs, args); err != nil {
				t.Fatal(err)
			}
			err = r.Apply(fs, run)
			want := strings.NewReplacer("RUN", run, "A/", a+string(filepath.Separator)).Replace(tt.want)
			switch {
			case want == "" && err != nil:
				t.Fatalf("Apply: %v", err)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Fatalf("Apply: %v; want an error with %q", err, want)
			case want == "":
				if got, _ := fs.GetString("meta"); got != filepath.Join(a, "s.json") {
					t.Errorf("--meta is %q, want the run's %q", got, filepath.Join(a, "s.json"))
				}
			}
		})
	}
}
