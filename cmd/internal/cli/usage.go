package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"
)

// Help is what a command's --help says besides its flags.
type Help struct {
	Name        string // the command, e.g. "figures table"
	Description string // one line: what the command does
	Synopsis    string // e.g. "figures table [flags] NAME=DIR..."
	Args        []Arg  // the positional arguments, if any
}

// Arg is a positional argument of a command, as its help lists it.
type Arg struct {
	Name  string // as written on the command line, e.g. NAME=DIR
	Usage string // one line
}

// SetUsage makes --help and -h on fs print h and the flags of fs to
// standard output (see Help.Write). Parse then returns pflag.ErrHelp, for
// which Exit exits with status 0.
func SetUsage(fs *pflag.FlagSet, h Help) {
	fs.Usage = func() { h.Write(os.Stdout, fs) }
}

// Write writes the help of the command whose flags are fs to w:
//
//	NAME: DESCRIPTION
//
//	Usage: SYNOPSIS
//
//	Arguments:
//	  ARG   its usage
//
//	Flags:
//	  the flags, as pflag lists them
//
// with the Arguments section only when there are arguments.
func (h Help) Write(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "%s: %s\n\nUsage: %s\n", h.Name, h.Description, h.Synopsis)
	if len(h.Args) > 0 {
		fmt.Fprint(w, "\nArguments:\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, a := range h.Args {
			fmt.Fprintf(tw, "  %s\t%s\n", a.Name, a.Usage)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nFlags:\n%s", flagUsages(fs))
}

// flagUsages lists the flags of fs as pflag does, but that a flag whose
// usage says its default itself ("(default: the task's)") is not given a
// second one by pflag (a sentinel such as "(default -1)").
func flagUsages(fs *pflag.FlagSet) string {
	shown := pflag.NewFlagSet(fs.Name(), pflag.ContinueOnError)
	shown.SortFlags = fs.SortFlags
	fs.VisitAll(func(f *pflag.Flag) {
		c := *f
		if strings.Contains(c.Usage, "(default") {
			switch t := c.Value.Type(); {
			case t == "string":
				c.DefValue = ""
			case t == "bool":
				c.DefValue = "false"
			case strings.HasSuffix(t, "Slice"):
				c.DefValue = "[]"
			default:
				c.DefValue = "0"
			}
		}
		shown.AddFlag(&c)
	})
	return shown.FlagUsages()
}
