package cli

import (
	"context"
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

// Command is one sub-command of a command that has several (sweep
// list, figures table).
type Command struct {
	Name     string
	Synopsis string // after the name, e.g. "[flags] FILE..."
	What     string // one line: what it does
	Run      func(ctx context.Context, args []string) error
}

// Commands are a command's sub-commands, in the order its help lists
// them.
type Commands struct {
	Program     string // e.g. "sweep"
	Description string // one line: what the command does
	Noun        string // what a sub-command is called, e.g. "command", "figure"
	Usage       string // the help's synopsis, e.g. "sweep COMMAND [flags] FILE..."
	Footer      string // the help's last paragraph
	List        []Command
}

// Run runs the sub-command args[0] with the rest of args; "help", -h and
// --help write the overview, "help NAME" the sub-command's help.
func (c Commands) Run(ctx context.Context, args []string) error {
	var names []string
	for _, s := range c.List {
		names = append(names, s.Name)
	}
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	if len(args) == 0 {
		return Usagef("want a %s: %s (%s --help says more)", c.Noun, want, c.Program)
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			return c.Run(ctx, []string{args[1], "--help"})
		}
		return c.Overview(os.Stdout)
	}
	if s, ok := c.Lookup(args[0]); ok {
		return s.Run(ctx, args[1:])
	}
	return Usagef("unknown %s %q (want %s)", c.Noun, args[0], want)
}

// Lookup returns the sub-command called name.
func (c Commands) Lookup(name string) (Command, bool) {
	for _, s := range c.List {
		if s.Name == name {
			return s, true
		}
	}
	return Command{}, false
}

// Help returns the help of the sub-command called name, with its
// positional arguments.
func (c Commands) Help(name string, args ...Arg) Help {
	s, _ := c.Lookup(name)
	return Help{Name: c.Program + " " + name, Description: s.What, Synopsis: c.Program + " " + name + " " + s.Synopsis, Args: args}
}

// Overview writes the command's help: its description and its
// sub-commands. It returns pflag.ErrHelp, for which Exit exits with
// status 0.
func (c Commands) Overview(w io.Writer) error {
	fmt.Fprintf(w, "%s: %s\n\nUsage: %s\n\n%ss:\n", c.Program, c.Description, c.Usage, strings.ToUpper(c.Noun[:1])+c.Noun[1:])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range c.List {
		fmt.Fprintf(tw, "  %s\t%s\n", s.Name, s.What)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%s\n", c.Footer)
	return pflag.ErrHelp
}
