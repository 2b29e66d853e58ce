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
