// Package sweep reads an experiment's sweep file: its grid of cmd/sample
// runs (flag files × seeds × extra flags, written once as data), from which
// every run's output directory and command line follow. The runs are
// numbered, and the run of an index is the same wherever it runs: locally
// (cmd/sweep run), as a Slurm job array's SLURM_ARRAY_TASK_ID and as a
// Kubernetes Indexed Job's JOB_COMPLETION_INDEX (cmd/sweep task).
//
// # The sweep file
//
// One directive a line; words are separated by spaces or tabs, double
// quotes group words into one ("test NLL", with \" and \\ inside), and a
// '#' that starts a word (outside quotes) starts a comment that runs to the
// end of the line:
//
//	out PATTERN            each run's output directory under the runs directory
//	                       (sweep --runs, default runs), {AXIS} standing for the
//	                       run's label on an axis, {seed} for its seed (required)
//	args FLAG...           flags of every run
//	seeds LIST             the seed axis: --seed N for each N of LIST (15-24;
//	                       1,2; 3 5 8); its runs are the repeats that a table
//	                       row averages
//	axis NAME LABEL[=TITLE] FLAG...
//	                       one value of the axis NAME, a line per value in
//	                       order: LABEL names it in output directories, TITLE
//	                       (default LABEL) in table rows, and its runs get FLAGs
//	row TEMPLATE           a table row's name, {AXIS} standing for the run's
//	                       title on an axis (default: the titles of its axes
//	                       but the seeds, joined by ", ")
//	name NAME              the sweep's name, Slurm's job name (default: the
//	                       file's directory and base name, as mnist-nt-table)
//	cores N                cores of each run (GOMAXPROCS; Slurm's
//	                       --cpus-per-task); default 1
//	step-time DURATION     the time a step of the slowest run takes on one
//	                       core (Go's 30ms, 2.5s), from which a Slurm time
//	                       limit follows
//	memory SIZE            memory of each run (2G, 800M), instead of the
//	                       estimate from the run's own settings
//	table FILE FLAG...     a table of "figures table FLAG...", written by
//	                       "figures sweep" to FILE beside the sweep file;
//	                       tables with the same FILE follow one another
//	curves FIG FLAG...     a figure of "figures curves FLAG...", written to
//	                       FIG.png and FIG.svg beside the sweep file
//	record DIR             keep each ended run's summary.json and metrics.csv
//	                       (what figures reads of a run) under DIR, beside the
//	                       sweep file, at the run's out path: a record that
//	                       outlives the runs directory, to commit with the
//	                       tables (see Keep and InspectRun)
//
// A run's command line is sample's flags in the order: args, then each
// axis's FLAGs (the seed axis's --seed N) in the order the axes are
// written. Paths in flags are taken, as in flag files, relative to the
// directory the command runs in (the repository root); $NAME and ${NAME}
// in them are the environment's variables, expanded when the run starts
// (Run.Command). Table and figure files and the record directory are
// relative to the sweep file's directory.
//
// # Numbering
//
// Runs are numbered from 0 as nested loops over the axes in the order the
// file writes them (the seed axis among them), the first outermost: with
// axes of n₀, n₁, …, n_last values, run i takes value i mod n_last on the
// last axis, ⌊i/n_last⌋ mod n_{last−1} on the one before, and so on. A
// sweep that writes its seeds first thus runs every other value of the first
// seed before any of the second.
package sweep

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SeedAxis is the name of the seed axis, {seed} in an out pattern.
const SeedAxis = "seed"

// Sweep is a sweep file's grid of runs.
type Sweep struct {
	// Path is the sweep file, as given to Parse.
	Path string
	// Name is the sweep's name, as Slurm's job name.
	Name string
	// Out is the pattern of the runs' output directories, relative to the
	// runs directory.
	Out string
	// Args are the flags of every run.
	Args []string
	// Axes are the grid's axes, in the order the file writes them.
	Axes []Axis
	// Row is the pattern of a table row's name; "" for the default.
	Row string
	// Cores is the number of cores of each run.
	Cores int
	// StepTime is the time a step of the slowest run takes on one core; 0
	// if the file does not say.
	StepTime time.Duration
	// Memory is each run's memory in bytes if the file sets it, else 0.
	Memory float64
	// Tables and Curves are what figures sweep draws from the runs.
	Tables []Figure
	Curves []Figure
	// Record is the directory, relative to the sweep file's, that keeps
	// the ended runs' records; "" if the file has no record line.
	Record string
}

// Axis is one axis of the grid.
type Axis struct {
	Name   string
	Values []Value
}

// Seed reports whether a is the seed axis.
func (a Axis) Seed() bool { return a.Name == SeedAxis }

// Value is one value of an axis.
type Value struct {
	// Label names the value in output directories, Title in table rows.
	Label, Title string
	// Args are the flags it gives its runs.
	Args []string
}

// Figure is a table or a figure of figures sweep: its file, relative to
// the sweep file's directory, and the flags of figures table or curves.
type Figure struct {
	File string
	Args []string
}

// Run is one run of a sweep.
type Run struct {
	// Index is the run's number.
	Index int
	// Values holds, for each axis of the sweep, the index of the run's
	// value.
	Values []int
	// Dir is the run's output directory: the runs directory joined with
	// the sweep's out pattern.
	Dir string
	// Args are the run's flags for sample, as the sweep file writes them
	// (variables not expanded).
	Args []string
	// Row is the name of the table row the run belongs to; the runs of a
	// row differ in their seed alone.
	Row string
	// Record is the directory that keeps the run's record once it has
	// ended (Keep): the sweep's record directory joined with the out
	// pattern; "" if the sweep keeps none.
	Record string
}

// Len returns the number of runs.
func (s *Sweep) Len() int {
	n := 1
	for _, a := range s.Axes {
		n *= len(a.Values)
	}
	return n
}

// Dir returns the directory of the sweep file.
func (s *Sweep) Dir() string { return filepath.Dir(s.Path) }

// Run returns the run with index i (0 ≤ i < Len()) and its output
// directory under the runs directory root.
func (s *Sweep) Run(i int, root string) Run {
	r := Run{Index: i, Values: make([]int, len(s.Axes))}
	rest := i
	for j := len(s.Axes) - 1; j >= 0; j-- {
		n := len(s.Axes[j].Values)
		r.Values[j] = rest % n
		rest /= n
	}
	r.Args = append(r.Args, s.Args...)
	labels, titles := map[string]string{}, map[string]string{}
	var rowTitles []string
	for j, a := range s.Axes {
		v := a.Values[r.Values[j]]
		r.Args = append(r.Args, v.Args...)
		labels[a.Name], titles[a.Name] = v.Label, v.Title
		if !a.Seed() {
			rowTitles = append(rowTitles, v.Title)
		}
	}
	out := filepath.FromSlash(fill(s.Out, labels))
	r.Dir = filepath.Join(root, out)
	if s.Record != "" {
		r.Record = filepath.Join(s.Dir(), filepath.FromSlash(s.Record), out)
	}
	if s.Row != "" {
		r.Row = fill(s.Row, titles)
	} else {
		r.Row = strings.Join(rowTitles, ", ")
	}
	if r.Row == "" {
		r.Row = s.Name
	}
	return r
}

// Runs returns every run, in order, with their output directories under
// root.
func (s *Sweep) Runs(root string) []Run {
	runs := make([]Run, s.Len())
	for i := range runs {
		runs[i] = s.Run(i, root)
	}
	return runs
}

// Label returns the run's label on the axis called name, and whether the
// sweep has that axis.
func (s *Sweep) Label(r Run, name string) (string, bool) {
	for j, a := range s.Axes {
		if a.Name == name {
			return a.Values[r.Values[j]].Label, true
		}
	}
	return "", false
}

// placeholder matches {NAME} in a pattern.
var placeholder = regexp.MustCompile(`\{([^{}]*)\}`)

// fill replaces each {NAME} of pattern by values[NAME].
func fill(pattern string, values map[string]string) string {
	return placeholder.ReplaceAllStringFunc(pattern, func(m string) string { return values[m[1:len(m)-1]] })
}

// Directives are the sweep file's directives, in the order the package
// documentation describes them.
var Directives = []string{"out", "args", "seeds", "axis", "row", "name", "cores", "step-time", "memory", "table", "curves", "record"}

var (
	axisName  = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	labelChar = regexp.MustCompile(`^[A-Za-z0-9._+-]+$`)
)

// Parse reads the sweep file at path. Every error names the file and the
// line, and says what to do.
func Parse(path string) (*Sweep, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot read sweep file %s: %v", path, err)
	}
	return ParseText(path, string(data))
}

// ParseText reads a sweep file's text; path names it in errors and is the
// directory its tables are written to.
func ParseText(path, text string) (*Sweep, error) {
	s := &Sweep{Path: path, Cores: 1}
	seen := map[string]int{} // directive given once: its line
	axes := map[string]int{} // axis name: its index in s.Axes
	for n, line := range strings.Split(strings.TrimPrefix(text, "\ufeff"), "\n") {
		n++
		fail := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", path, n, fmt.Sprintf(format, args...))
		}
		words, err := Split(line)
		if err != nil {
			return nil, fail("%v", err)
		}
		if len(words) == 0 {
			continue
		}
		dir, rest := words[0], words[1:]
		once := func() error {
			if first, ok := seen[dir]; ok {
				return fail("%s is given twice (first on line %d); give it once", dir, first)
			}
			seen[dir] = n
			return nil
		}
		one := func(what string) (string, error) {
			if err := once(); err != nil {
				return "", err
			}
			if len(rest) != 1 {
				return "", fail("%s takes one %s, got %d words", dir, what, len(rest))
			}
			return rest[0], nil
		}
		switch dir {
		case "out":
			if s.Out, err = one("pattern"); err != nil {
				return nil, err
			}
			if filepath.IsAbs(s.Out) || slices.Contains(strings.Split(s.Out, "/"), "..") {
				return nil, fail("out %s must be a path under the runs directory: relative, without ..", s.Out)
			}
		case "args":
			if err := once(); err != nil {
				return nil, err
			}
			if err := checkFlags(rest); err != nil {
				return nil, fail("args: %v", err)
			}
			s.Args = rest
		case "seeds":
			if err := once(); err != nil {
				return nil, err
			}
			if _, ok := axes[SeedAxis]; ok {
				return nil, fail("seeds: there is an axis called %s already", SeedAxis)
			}
			seeds, err := parseSeeds(rest)
			if err != nil {
				return nil, fail("seeds: %v", err)
			}
			a := Axis{Name: SeedAxis}
			for _, sd := range seeds {
				v := strconv.FormatUint(sd, 10)
				a.Values = append(a.Values, Value{Label: v, Title: v, Args: []string{"--seed", v}})
			}
			axes[SeedAxis] = len(s.Axes)
			s.Axes = append(s.Axes, a)
		case "axis":
			if len(rest) < 2 {
				return nil, fail("axis takes a name, a value's LABEL[=TITLE] and its flags, as: axis sampler sghmc=SGHMC --flagfile DIR/sghmc.flags")
			}
			name, label, flags := rest[0], rest[1], rest[2:]
			switch {
			case name == SeedAxis:
				return nil, fail("axis %s: the seed axis is written with seeds LIST", name)
			case !axisName.MatchString(name):
				return nil, fail("axis name %q: want lower-case letters, digits, _ and -, starting with a letter", name)
			}
			label, title, _ := strings.Cut(label, "=")
			if title == "" {
				title = label
			}
			if !labelChar.MatchString(label) || label == "." || label == ".." {
				return nil, fail("axis %s: label %q: want letters, digits, '.', '_', '+' and '-' (it names output directories)", name, label)
			}
			if err := checkFlags(flags); err != nil {
				return nil, fail("axis %s %s: %v", name, label, err)
			}
			j, ok := axes[name]
			if !ok {
				j = len(s.Axes)
				axes[name] = j
				s.Axes = append(s.Axes, Axis{Name: name})
			} else if j != len(s.Axes)-1 {
				return nil, fail("axis %s: its values must be on consecutive lines (it continues after axis %s)", name, s.Axes[len(s.Axes)-1].Name)
			}
			for _, v := range s.Axes[j].Values {
				if v.Label == label {
					return nil, fail("axis %s: label %s is given twice", name, label)
				}
			}
			s.Axes[j].Values = append(s.Axes[j].Values, Value{Label: label, Title: title, Args: flags})
		case "row":
			if err := once(); err != nil {
				return nil, err
			}
			s.Row = strings.Join(rest, " ")
		case "name":
			if s.Name, err = one("name"); err != nil {
				return nil, err
			}
			if !labelChar.MatchString(s.Name) {
				return nil, fail("name %q: want letters, digits, '.', '_', '+' and '-'", s.Name)
			}
		case "cores":
			v, err := one("number")
			if err != nil {
				return nil, err
			}
			if s.Cores, err = strconv.Atoi(v); err != nil || s.Cores < 1 {
				return nil, fail("cores %s: want a positive whole number", v)
			}
		case "step-time":
			v, err := one("duration")
			if err != nil {
				return nil, err
			}
			if s.StepTime, err = time.ParseDuration(v); err != nil || s.StepTime <= 0 {
				return nil, fail("step-time %s: want a positive duration, as 30ms or 2.5s", v)
			}
		case "memory":
			v, err := one("size")
			if err != nil {
				return nil, err
			}
			if s.Memory, err = ParseSize(v); err != nil {
				return nil, fail("memory %s: %v", v, err)
			}
		case "table", "curves":
			if len(rest) < 1 {
				return nil, fail("%s takes a file name and the flags of figures %s", dir, dir)
			}
			f := Figure{File: rest[0], Args: rest[1:]}
			if filepath.IsAbs(f.File) || slices.Contains(strings.Split(f.File, "/"), "..") {
				return nil, fail("%s %s: the file goes beside the sweep file: give a relative name without ..", dir, f.File)
			}
			if err := checkFlags(f.Args); err != nil {
				return nil, fail("%s %s: %v", dir, f.File, err)
			}
			if dir == "table" {
				s.Tables = append(s.Tables, f)
			} else {
				s.Curves = append(s.Curves, f)
			}
		case "record":
			if s.Record, err = one("directory"); err != nil {
				return nil, err
			}
			if filepath.IsAbs(s.Record) || slices.Contains(strings.Split(s.Record, "/"), "..") {
				return nil, fail("record %s: the records go beside the sweep file: give a relative directory without ..", s.Record)
			}
		default:
			return nil, fail("unknown directive %q; a line starts with one of %s", dir, strings.Join(Directives, ", "))
		}
	}
	if s.Out == "" {
		return nil, fmt.Errorf("%s: no out line: add one naming each run's output directory, as out mnist/nt-{sampler}-{seed}", path)
	}
	used := map[string]bool{}
	for _, m := range placeholder.FindAllStringSubmatch(s.Out, -1) {
		used[m[1]] = true
		if _, ok := axes[m[1]]; !ok {
			return nil, fmt.Errorf("%s: out %s: {%s} is no axis of the sweep (its axes: %s)", path, s.Out, m[1], s.axisNames())
		}
	}
	for _, a := range s.Axes {
		if len(a.Values) > 1 && !used[a.Name] {
			return nil, fmt.Errorf("%s: out %s lacks {%s}: runs that differ in their %s would share a directory", path, s.Out, a.Name, a.Name)
		}
	}
	for _, m := range placeholder.FindAllStringSubmatch(s.Row, -1) {
		if _, ok := axes[m[1]]; !ok {
			return nil, fmt.Errorf("%s: row %s: {%s} is no axis of the sweep (its axes: %s)", path, s.Row, m[1], s.axisNames())
		}
	}
	if s.Name == "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		base := strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
		s.Name = base
		if d := filepath.Base(filepath.Dir(abs)); d != "." && d != string(filepath.Separator) {
			s.Name = d + "-" + base
		}
		if !labelChar.MatchString(s.Name) {
			return nil, fmt.Errorf("%s: the sweep's name %q, from its path, has characters other than letters, digits, '.', '_', '+' and '-': give it a name line", path, s.Name)
		}
	}
	if s.Len() > math.MaxInt32 {
		return nil, fmt.Errorf("%s: %d runs are too many", path, s.Len())
	}
	return s, nil
}

// axisNames lists the sweep's axes for a message.
func (s *Sweep) axisNames() string {
	var names []string
	for _, a := range s.Axes {
		names = append(names, a.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// ownFlags are the flags of sample that the sweep sets itself.
var ownFlags = []string{"out", "resume", "force"}

// checkFlags refuses words that are not flags where flags start, and the
// flags that the sweep sets for each run.
func checkFlags(words []string) error {
	if len(words) > 0 && !strings.HasPrefix(words[0], "-") {
		return fmt.Errorf("%q is not a flag (flags start with -)", words[0])
	}
	for _, w := range words {
		name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if strings.HasPrefix(w, "-") && slices.Contains(ownFlags, name) {
			return fmt.Errorf("--%s is set by the sweep for each run (out: the out line)", name)
		}
	}
	return nil
}

// parseSeeds reads a list of seeds: numbers and ranges A-B, separated by
// spaces or commas.
func parseSeeds(words []string) ([]uint64, error) {
	var seeds []uint64
	for _, w := range words {
		for _, f := range strings.Split(w, ",") {
			if f == "" {
				continue
			}
			lo, hi, isRange := strings.Cut(f, "-")
			a, err := strconv.ParseUint(lo, 10, 64)
			b := a
			if err == nil && isRange {
				b, err = strconv.ParseUint(hi, 10, 64)
			}
			if err != nil || b < a {
				return nil, fmt.Errorf("%q is not a seed nor a range of seeds A-B (A ≤ B)", f)
			}
			if b-a >= 1<<20 {
				return nil, fmt.Errorf("%q: more than %d seeds", f, 1<<20)
			}
			for sd := a; ; sd++ {
				if slices.Contains(seeds, sd) {
					return nil, fmt.Errorf("seed %d is given twice", sd)
				}
				seeds = append(seeds, sd)
				if sd == b {
					break
				}
			}
		}
	}
	if len(seeds) == 0 {
		return nil, errors.New("no seeds given: list them, as seeds 15-24")
	}
	return seeds, nil
}

// Split splits a line of a sweep file into words: separated by spaces and
// tabs, double quotes grouping (\" and \\ escape inside them), a '#' that
// starts a word outside quotes starting a comment.
func Split(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\\' && i+1 < len(line) && (line[i+1] == '"' || line[i+1] == '\\'):
			i++
			w.WriteByte(line[i])
		case c == '"':
			quoted, inWord = !quoted, true
		case quoted:
			w.WriteByte(c)
		case c == ' ' || c == '\t' || c == '\r':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		case c == '#' && !inWord:
			return words, nil
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		return nil, errors.New("a double quote is not closed")
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// ParseSize reads a size in bytes with an optional binary unit: 512M,
// 2G, 1.5GiB, 300000K.
func ParseSize(s string) (float64, error) {
	units := map[string]float64{"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
		"G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30, "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(s)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	u, ok := units[strings.ToUpper(s[i:])]
	if err != nil || !ok || !(v > 0) || math.IsInf(v, 0) {
		return 0, errors.New("want a positive size with a unit, as 800M or 2G")
	}
	return v * u, nil
}

// Expand returns args with $NAME and ${NAME} replaced by the environment
// variables that getenv gives; a variable that is not set is an error
// naming it.
func Expand(args []string, getenv func(string) (string, bool)) ([]string, error) {
	out := make([]string, len(args))
	var missing string
	for i, a := range args {
		out[i] = os.Expand(a, func(name string) string {
			v, ok := getenv(name)
			if !ok && missing == "" {
				missing = name
			}
			return v
		})
	}
	if missing != "" {
		return nil, fmt.Errorf("$%s is not set: the sweep's flags use it (set it, as METASGMCMC_DATA to the data directory)", missing)
	}
	return out, nil
}
