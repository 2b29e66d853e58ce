package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestHelpDescribesTheCommand checks what --help prints with a Help: a
// one-line description first, the synopsis, the positional arguments and
// every flag, --flagfile included.
func TestHelpDescribesTheCommand(t *testing.T) {
	fs := pflag.NewFlagSet("figures table", pflag.ContinueOnError)
	fs.String("metric", "kl", "metric column of metrics.csv")
	var buf bytes.Buffer
	h := Help{Name: "figures table", Description: "prints a Markdown table.", Synopsis: "figures table [flags] NAME=DIR[,DIR...]...",
		Args: []Arg{{"NAME=DIR[,DIR...]", "a run: its label and its directory"}, {"...", "more runs"}}}
	fs.Usage = func() { h.Write(&buf, fs) }
	if err := Parse(fs, []string{"--help"}); err != pflag.ErrHelp {
		t.Fatalf("Parse(--help) = %v, want pflag.ErrHelp", err)
	}
	got := buf.String()
	want := "figures table: prints a Markdown table.\n\nUsage: figures table [flags] NAME=DIR[,DIR...]...\n\n" +
		"Arguments:\n  NAME=DIR[,DIR...]  a run: its label and its directory\n  ...                more runs\n\nFlags:\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("help:\n%s\nwant it to start with\n%s", got, want)
	}
	for _, flag := range []string{"--metric string", "--flagfile FILE"} {
		if !strings.Contains(got, flag) {
			t.Errorf("help lacks %q:\n%s", flag, got)
		}
	}
}

// TestHelpGivesEachDefaultOnce: a flag whose usage states its default
// ("(default: the task's)") is not also given pflag's "(default -1)";
// other flags keep pflag's default.
func TestHelpGivesEachDefaultOnce(t *testing.T) {
	fs := pflag.NewFlagSet("train", pflag.ContinueOnError)
	fs.Int("sub-epochs", -1, "continuation unrolls per epoch (default: the task's)")
	fs.Float64("noise", -1, "gradient noise (default: the task's)")
	fs.IntSlice("q-hidden", []int{3}, "widths (default: the task's)")
	fs.Uint64("seed", 1, "random seed")
	var buf bytes.Buffer
	Help{Name: "train", Description: "trains.", Synopsis: "train"}.Write(&buf, fs)
	got := buf.String()
	if strings.Contains(got, "(default -1)") || strings.Contains(got, "(default [3])") || strings.Count(got, "(default: the task's)") != 3 {
		t.Errorf("help gives a default twice:\n%s", got)
	}
	if !strings.Contains(got, "random seed (default 1)") {
		t.Errorf("help lost pflag's default of --seed:\n%s", got)
	}
	if v, _ := fs.GetInt("sub-epochs"); v != -1 || fs.Lookup("sub-epochs").DefValue != "-1" {
		t.Errorf("writing the help changed the flag set")
	}
}
