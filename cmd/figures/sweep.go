package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/sweep"
)

// maxListed is how many runs that have not ended a table's note names.
const maxListed = 8

// sweepFigures writes the tables and curves that sweep files name (their
// table and curves lines) from their runs that have ended: a table row,
// or a curve, per combination of the sweeps' axes but the seeds, over the
// seeds whose runs have ended (mean ± standard error where there are
// several). It says on standard error which runs have not ended, and under
// the tables of a sweep that lacks some, how many and which. Where the
// sweep keeps records, it writes (or brings up to date) the record of each
// run ended in the runs directory, and reads a run the runs directory
// lacks from its record.
func sweepFigures(args []string) error {
	fs := pflag.NewFlagSet("figures sweep", pflag.ContinueOnError)
	root := fs.String("runs", "runs", "the runs directory the sweep ran into (sweep --runs)")
	stdout := fs.Bool("stdout", false, "print the tables on standard output instead of writing their files, and draw no curves")
	readme := fs.Bool("readme", true, "also copy each table file into the README.md beside it, between its <!-- FILE --> and <!-- /FILE --> lines, where it has them")
	usage(fs, "sweep", cli.Arg{Name: "FILE", Usage: "a sweep file (cmd/sweep), as experiments/mnist-nt/table.sweep; " +
		"the tables of several for one file follow one another, in the order given"})
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return cli.Usagef("no sweep file given, as experiments/mnist-nt/table.sweep")
	}
	var order []string // table files, in the order first written
	tables := map[string]*bytes.Buffer{}
	for _, path := range fs.Args() {
		s, err := sweep.Parse(path)
		if err != nil {
			return cli.Usagef("%v", err)
		}
		rowArgs, partial, note, err := sweepRows(s, *root)
		if err != nil {
			return err
		}
		if len(rowArgs) == 0 && len(partial) == 0 {
			fmt.Fprintf(os.Stderr, "figures: %s: no run has ended or been scored yet: no tables or curves (sweep status %s)\n", s.Path, s.Path)
			continue
		}
		written := map[string]bool{}
		tablesOf := s.Tables
		if len(rowArgs) == 0 && len(tablesOf) > 0 {
			fmt.Fprintf(os.Stderr, "figures: %s: no run has ended yet: no tables\n", s.Path)
			tablesOf = nil
		}
		for _, t := range tablesOf {
			file := filepath.Join(s.Dir(), t.File)
			b := tables[file]
			if b == nil {
				b = &bytes.Buffer{}
				tables[file] = b
				order = append(order, file)
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			if err := table(b, append(append([]string(nil), t.Args...), rowArgs...)); err != nil {
				return fmt.Errorf("%s: table %s: %w", s.Path, t.File, err)
			}
			written[file] = true
		}
		if note != "" {
			for _, file := range order {
				if written[file] {
					fmt.Fprintf(tables[file], "\n%s\n", note)
				}
			}
		}
		if *stdout {
			continue
		}
		for _, c := range s.Curves {
			a := append([]string{"--out", filepath.Join(s.Dir(), c.File)}, c.Args...)
			if err := curves(append(append(a, rowArgs...), partial...)); err != nil {
				return fmt.Errorf("%s: curves %s: %w", s.Path, c.File, err)
			}
		}
	}
	for i, file := range order {
		b := tables[file].Bytes()
		if *stdout {
			if i > 0 {
				fmt.Println()
			}
			os.Stdout.Write(b)
			continue
		}
		if err := cli.WriteFile(file, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return err
		}
		if *readme {
			if err := intoReadme(file, b); err != nil {
				return err
			}
		}
		fmt.Fprintf(os.Stderr, "figures: wrote %s\n", file)
	}
	return nil
}

// sweepRows returns the NAME=DIR1,DIR2,… arguments of figures table and
// curves for the sweep's rows that have runs that have ended (a row's
// runs differ in their seed alone), in the order of the runs; the
// NAME (not ended)=FILE.csv arguments of curves for the runs that have
// not ended but have been scored (running, stopped, or kept in the
// record as a signal stopped them: partialMetrics), each drawn alone and
// as far as it went; and, if some runs have not ended or are stale (ran
// with flags that the sweep no longer sets, or with input files that
// have changed since), a note that names them for under the tables.
func sweepRows(s *sweep.Sweep, root string) (args, partial []string, note string, err error) {
	var names []string
	dirs := map[string][]string{}
	var missing []string
	anyStale := false
	runs := s.Runs(root)
	runsOfRow := map[string]int{}
	for _, r := range runs {
		runsOfRow[r.Row]++
	}
	for _, r := range runs {
		if strings.Contains(r.Row, "=") {
			return nil, nil, "", cli.Usagef("%s: the row name %q has a '=', which figures cannot tell from NAME=DIR: change the sweep's titles or row line", s.Path, r.Row)
		}
		if strings.Contains(r.Dir, ",") {
			return nil, nil, "", cli.Usagef("%s: the run directory %s has a ',', which figures cannot tell from DIR1,DIR2", s.Path, r.Dir)
		}
		if _, err := sweep.Keep(r); err != nil {
			return nil, nil, "", err
		}
		st, err := sweep.InspectRun(r)
		if err != nil {
			return nil, nil, "", err
		}
		if _, ok := dirs[r.Row]; !ok {
			names = append(names, r.Row)
			dirs[r.Row] = nil
		}
		if !st.State.Done() || st.Stale != "" {
			rel, err := filepath.Rel(root, r.Dir)
			if err != nil {
				rel = r.Dir
			}
			why := st.State.String()
			if st.Running {
				why = "running"
			}
			if st.Stale != "" {
				why, anyStale = "stale: "+st.Stale, true
			}
			if st.StoppedMetrics != "" {
				kept, err := filepath.Rel(s.Dir(), st.StoppedMetrics)
				if err != nil {
					kept = st.StoppedMetrics
				}
				why += "; an earlier run's metrics until it was stopped: " + filepath.ToSlash(kept)
			}
			missing = append(missing, fmt.Sprintf("%s (%s)", rel, why))
			if path := partialMetrics(r, st); path != "" {
				which := ")"
				if runsOfRow[r.Row] > 1 {
					which = ", " + filepath.ToSlash(rel) + ")"
				}
				partial = append(partial, r.Row+notEnded+which+"="+path)
			}
			continue
		}
		dirs[r.Row] = append(dirs[r.Row], r.Source(st))
	}
	for _, name := range names {
		if len(dirs[name]) > 0 {
			args = append(args, name+"="+strings.Join(dirs[name], ","))
		}
	}
	if len(missing) > 0 {
		which := "which have not ended"
		if anyStale {
			which += " or ran with flags or input files that have changed since"
		}
		fmt.Fprintf(os.Stderr, "figures: %s: %d of %d runs, %s, are left out: %s\n", s.Path, len(missing), len(runs), which, strings.Join(missing, ", "))
		listed := missing
		if len(listed) > maxListed {
			listed = append(listed[:maxListed:maxListed], "…")
		}
		note = fmt.Sprintf("Not in the table%s: %d of the sweep's %d runs, %s: %s.",
			plural(len(s.Tables)), len(missing), len(runs), which, strings.Join(listed, ", "))
	}
	return args, partial, note, nil
}

// partialMetrics returns the metrics file of a run that has not ended,
// where it has been scored at least once: its record's
// sweep.StoppedMetricsFile where its output directory holds nothing, or
// the metrics.csv of its output directory (running, or stopped by a
// signal); "" where there is none or it holds no scoring yet.
func partialMetrics(r sweep.Run, st sweep.Status) string {
	if st.State.Done() || st.Stale != "" {
		return ""
	}
	path := st.StoppedMetrics
	if path == "" {
		path = filepath.Join(r.Dir, sweep.MetricsFile)
	}
	if _, err := readCSV(path); err != nil {
		return ""
	}
	return path
}

// plural returns "s" for more than one.
func plural(n int) string {
	if n > 1 {
		return "s"
	}
	return ""
}

// intoReadme copies the table file's content b into the README.md beside
// it, between its lines "<!-- NAME -->" and "<!-- /NAME -->" (NAME the
// file's base name), when it has both; otherwise it leaves it alone.
func intoReadme(file string, b []byte) error {
	readme := filepath.Join(filepath.Dir(file), "README.md")
	old, err := os.ReadFile(readme)
	if err != nil {
		return nil
	}
	name := filepath.Base(file)
	start, stop := "<!-- "+name+" -->", "<!-- /"+name+" -->"
	lines := strings.SplitAfter(string(old), "\n")
	i := indexLine(lines, start, 0)
	j := indexLine(lines, stop, i+1)
	if i < 0 || j < 0 {
		return nil
	}
	var out strings.Builder
	for _, l := range lines[:i+1] {
		out.WriteString(l)
	}
	out.Write(b)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		out.WriteByte('\n')
	}
	for _, l := range lines[j:] {
		out.WriteString(l)
	}
	if out.String() == string(old) {
		return nil
	}
	return cli.WriteFile(readme, func(w io.Writer) error { _, err := io.WriteString(w, out.String()); return err })
}

// indexLine returns the index of the first of lines from from on that
// contains s, or -1.
func indexLine(lines []string, s string, from int) int {
	if from < 0 {
		return -1
	}
	for i := from; i < len(lines); i++ {
		if strings.Contains(lines[i], s) {
			return i
		}
	}
	return -1
}
