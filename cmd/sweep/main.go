// Command sweep runs an experiment's sweep file (package
// cmd/internal/sweep: its grid of cmd/sample runs, flag files × seeds ×
// extra flags) locally or on a Slurm cluster:
//
//	sweep list FILE...           every run: its index, state, output directory and command line
//	sweep status FILE...         how many runs have finished, and where the others stand
//	sweep run --jobs N FILE...   the runs not finished, N at a time: new ones, interrupted
//	                             ones resumed from their checkpoint (sample --resume) or
//	                             started afresh where they wrote none; finished and failed
//	                             ones are skipped, and so are stale ones (ended with flags
//	                             that the sweep or its flag files no longer set: status
//	                             names them, figures leaves them out)
//	sweep task FILE              the one run of the index in --index, SLURM_ARRAY_TASK_ID
//	                             or JOB_COMPLETION_INDEX (a Kubernetes Indexed Job), as run
//	                             does it
//	sweep slurm [--submit] FILE  a Slurm batch script of a job array, one array index per
//	                             run not finished, with resources derived from the runs'
//	                             settings; --submit hands it to sbatch
//
// Runs go under --runs (default runs), each in the directory the sweep's
// out line names; figures sweep FILE builds the sweep's tables and figures
// from the runs that have finished. A sweep with a record line keeps each
// ended run's summary.json and metrics.csv beside the sweep file (run
// writes them as each run ends): where the runs directory lacks a run, its
// record stands for it, so list, status, run and slurm count it as ended. sweep runs the sample binary beside its
// own (go build -o bin/ ./cmd/sweep ./cmd/sample ./cmd/figures), else the
// one on $PATH, or --sample's.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/sweep"
)

func main() { cli.Main("sweep", run) }

// description is the command's one-line description, the first line of
// its help.
const description = "runs an experiment's sweep file (its grid of sample runs) locally, N at a time, or as a Slurm job array"

// commands are the command's sub-commands, in the order the help lists
// them.
func commands() cli.Commands {
	return cli.Commands{Program: "sweep", Description: description, Noun: "command", Usage: "sweep COMMAND [flags] FILE...",
		Footer: "A sweep file's format: go doc ./cmd/internal/sweep. Run \"sweep COMMAND --help\" for a command's flags.",
		List: []cli.Command{
			{Name: "list", Synopsis: "[flags] FILE...", What: "every run of the sweeps: its index, state, output directory and command line", Run: plain(list)},
			{Name: "status", Synopsis: "[flags] FILE...", What: "how many runs have finished, and where the others stand", Run: plain(status)},
			{Name: "run", Synopsis: "[flags] FILE...", What: "the runs not finished, --jobs at a time: interrupted ones resume from their checkpoint, finished ones are skipped", Run: runLocal},
			{Name: "task", Synopsis: "[flags] FILE", What: "the run of one index (--index, $SLURM_ARRAY_TASK_ID or $JOB_COMPLETION_INDEX), as run does it: a job array's task", Run: plain(task)},
			{Name: "slurm", Synopsis: "[flags] FILE", What: "a Slurm batch script of a job array of the runs not finished, resources derived; --submit hands it to sbatch", Run: plain(slurm)},
		}}
}

// plain makes a sub-command's function a cli.Command's Run.
func plain(f func([]string) error) func(context.Context, []string) error {
	return func(_ context.Context, a []string) error { return f(a) }
}

func run(ctx context.Context, args []string) error { return commands().Run(ctx, args) }

// flagSet returns the flag set of a sub-command, with its help and --runs.
func flagSet(name string, root *string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("sweep "+name, pflag.ContinueOnError)
	fs.StringVar(root, "runs", "runs", "the runs directory: each run's output directory is the sweep's out line under it")
	cli.SetUsage(fs, commands().Help(name, cli.Arg{Name: "FILE", Usage: "a sweep file, as experiments/mnist-nt/table.sweep"}))
	return fs
}

// parse parses a sub-command's flags and reads its sweep files; one says
// whether it takes exactly one.
func parse(fs *pflag.FlagSet, args []string, one bool) ([]*sweep.Sweep, error) {
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	files := fs.Args()
	switch {
	case len(files) == 0:
		return nil, cli.Usagef("no sweep file given, as experiments/mnist-nt/table.sweep")
	case one && len(files) > 1:
		return nil, cli.Usagef("%s takes one sweep file, got %d", fs.Name(), len(files))
	}
	var sws []*sweep.Sweep
	for _, f := range files {
		s, err := sweep.Parse(f)
		if err != nil {
			return nil, cli.Usagef("%v", err)
		}
		sws = append(sws, s)
	}
	return sws, nil
}

// lookupEnv reads the environment's variables, for the runs' flags.
func lookupEnv(name string) (string, bool) { return os.LookupEnv(name) }

// commandLine formats a command line for reading: words with spaces or
// quotes quoted.
func commandLine(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a == "" || strings.ContainsAny(a, " \t\"'\\$`") {
			a = strconv.Quote(a)
		}
		b.WriteString(a)
	}
	return b.String()
}

// list prints every run of the sweeps: index, state ("(stale)" added for an
// ended run of other flags or inputs than the sweep's now), output directory and
// the command line of a new run.
func list(args []string) error {
	var root string
	fs := flagSet("list", &root)
	sws, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	for _, s := range sws {
		fmt.Printf("# %s: %d runs (sweep %s)\n", s.Path, s.Len(), s.Name)
		tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		for _, r := range s.Runs(root) {
			st, err := sweep.InspectRun(r)
			if err != nil {
				return err
			}
			state := st.State.String()
			if st.Running {
				state = "running"
			}
			if st.Stale != "" {
				state += " (stale)"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\tsample %s\n", r.Index, state, r.Dir, commandLine(r.Args))
		}
		tw.Flush()
	}
	return nil
}

// status prints how many runs of each sweep are in each state, and the
// runs not finished.
func status(args []string) error {
	var root string
	fs := flagSet("status", &root)
	all := fs.Bool("all", false, "list every run, the finished ones too")
	sws, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	for _, s := range sws {
		count := map[sweep.State]int{}
		running := 0
		var lines []string
		for _, r := range s.Runs(root) {
			st, err := sweep.InspectRun(r)
			if err != nil {
				return err
			}
			if st.Running && !st.State.Done() {
				running++
			} else {
				count[st.State]++
			}
			if *all || st.State != sweep.Finished || st.Stale != "" {
				lines = append(lines, fmt.Sprintf("%d\t%s\t%s", r.Index, r.Dir, st))
			}
		}
		var parts []string
		for st := sweep.Finished; st >= sweep.New; st-- {
			if st == sweep.Stopped && running > 0 {
				parts = append(parts, fmt.Sprintf("%d running", running))
			}
			if count[st] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", count[st], st))
			}
		}
		fmt.Printf("%s: %d runs: %s\n", s.Path, s.Len(), strings.Join(parts, ", "))
		tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		for _, l := range lines {
			fmt.Fprintln(tw, "  "+l)
		}
		tw.Flush()
	}
	return nil
}

// parseIndices reads a list of run indices: numbers and ranges A-B,
// separated by commas.
func parseIndices(s string, n int) ([]int, error) {
	var idx []int
	seen := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(f), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a {
			return nil, cli.Usagef("--index %s: %q is not an index nor a range A-B", s, f)
		}
		if b >= n {
			return nil, cli.Usagef("--index %s: the sweep has runs 0 to %d", s, n-1)
		}
		for i := a; i <= b; i++ {
			if !seen[i] {
				seen[i] = true
				idx = append(idx, i)
			}
		}
	}
	sort.Ints(idx)
	return idx, nil
}

// findSample returns the sample binary: flag's, else the one beside this
// program, else the one on $PATH.
func findSample(flag string) (string, error) {
	if flag != "" {
		p, err := exec.LookPath(flag)
		if err != nil {
			return "", cli.Usagef("--sample %s: %v", flag, errors.Unwrap(err))
		}
		return filepath.Abs(p)
	}
	exe, err := os.Executable()
	if err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			p := filepath.Join(filepath.Dir(exe), "sample")
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	if p, err := exec.LookPath("sample"); err == nil {
		return filepath.Abs(p)
	}
	return "", cli.Usagef("no sample binary beside this sweep (%s) nor on $PATH: build them together, as go build -o bin/ ./cmd/sweep ./cmd/sample ./cmd/figures (with -tags openblas for OpenBLAS), and run bin/sweep; or give --sample PATH", exe)
}

// job is a run to carry out.
type job struct {
	s      *sweep.Sweep
	r      sweep.Run
	st     sweep.Status
	action sweep.Action
	args   []string // sample's
}

// name is how messages name the job's run.
func (j job) name() string { return fmt.Sprintf("%s run %d (%s)", j.s.Name, j.r.Index, j.r.Dir) }

// plan inspects the runs of s with the given indices (all if nil) and
// returns what to do with each.
func plan(s *sweep.Sweep, root string, indices []int, redo, quiet bool) ([]job, error) {
	if indices == nil {
		for i := 0; i < s.Len(); i++ {
			indices = append(indices, i)
		}
	}
	var jobs []job
	for _, i := range indices {
		r := s.Run(i, root)
		st, err := sweep.InspectRun(r)
		if err != nil {
			return nil, err
		}
		a := sweep.Plan(st, redo)
		args, err := r.Command(a, quiet, lookupEnv)
		if err != nil {
			return nil, cli.Usagef("%s run %d: %v", s.Path, i, err)
		}
		jobs = append(jobs, job{s: s, r: r, st: st, action: a, args: args})
	}
	return jobs, nil
}

// planSummary says in one line how many runs of jobs are in each action.
func planSummary(jobs []job) string {
	count := map[sweep.Action]int{}
	failed, stale, running := 0, 0, 0
	for _, j := range jobs {
		if j.action == sweep.Skip && j.st.Running && !j.st.State.Done() {
			running++
			continue
		}
		count[j.action]++
		if j.action == sweep.Skip && j.st.State == sweep.Failed {
			failed++
		}
		if j.action == sweep.Skip && j.st.Stale != "" {
			stale++
		}
	}
	var parts []string
	if n := count[sweep.Skip]; n > 0 {
		s := fmt.Sprintf("%d ended", n)
		if failed > 0 {
			s += fmt.Sprintf(" (%d of them failed: --redo-failed runs them again)", failed)
		}
		if stale > 0 {
			s += fmt.Sprintf(" (%d of them with flags or input files that have changed since, left out of its tables: sweep status lists them; delete a run's directory and record to run it again)", stale)
		}
		parts = append(parts, s)
	}
	if running > 0 {
		parts = append(parts, fmt.Sprintf("%d running in another process, left to it", running))
	}
	for _, a := range []sweep.Action{sweep.Resume, sweep.Restart, sweep.Start} {
		if n := count[a]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d to %s", n, a))
		}
	}
	return strings.Join(parts, ", ")
}

// childEnv is the environment of a run: this one's, with GOMAXPROCS set to
// cores and OPENBLAS_NUM_THREADS to 1 unless the environment sets them
// (the results do not depend on either).
func childEnv(cores int) []string {
	env := os.Environ()
	if _, ok := os.LookupEnv("GOMAXPROCS"); !ok {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(max(1, cores)))
	}
	if _, ok := os.LookupEnv("OPENBLAS_NUM_THREADS"); !ok {
		env = append(env, "OPENBLAS_NUM_THREADS=1")
	}
	return env
}

// runLocal carries out the sweeps' runs that have not ended, --jobs at a
// time.
func runLocal(ctx context.Context, args []string) error {
	var root string
	fs := flagSet("run", &root)
	jobsN := fs.Int("jobs", 1, "runs at once; each gets GOMAXPROCS = this machine's cores / jobs unless the environment sets GOMAXPROCS")
	index := fs.String("index", "", "only the runs with these indices (as 0,3,5-9; one sweep file)")
	redo := fs.Bool("redo-failed", false, "run again, afresh, the runs that failed (a summary with an error, such as a divergence)")
	dry := fs.Bool("dry-run", false, "say what would be run, and run nothing")
	verbose := fs.Bool("verbose", false, "sample's progress lines too (without it, sample runs with --quiet)")
	samplePath := fs.String("sample", "", "the sample binary (default: the one beside sweep, else on $PATH)")
	sws, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	if *jobsN < 1 {
		return cli.Usagef("--jobs must be at least 1, got %d", *jobsN)
	}
	var indices []int
	if *index != "" {
		if len(sws) > 1 {
			return cli.Usagef("--index picks runs of one sweep file; give one")
		}
		if indices, err = parseIndices(*index, sws[0].Len()); err != nil {
			return err
		}
	}
	var todo []job
	for _, s := range sws {
		jobs, err := plan(s, root, indices, *redo, !*verbose)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "sweep: %s: %d runs: %s\n", s.Path, len(jobs), planSummary(jobs))
		for _, j := range jobs {
			if j.action != sweep.Skip {
				todo = append(todo, j)
			}
		}
	}
	if *dry {
		for _, j := range todo {
			fmt.Printf("%s %d %s: sample %s\n", j.s.Name, j.r.Index, j.action, commandLine(j.args))
		}
		return nil
	}
	if len(todo) == 0 {
		return nil
	}
	sample, err := findSample(*samplePath)
	if err != nil {
		return err
	}
	return carryOut(ctx, sample, todo, *jobsN)
}

// carryOut runs the jobs, n at a time, each sample in a process group of
// its own with its output passed on line by line under the run's name. A
// signal (ctx cancelled by cli.NotifyContext) is passed on to the runs
// going, which write their checkpoints and stop, and no other starts.
func carryOut(ctx context.Context, sample string, todo []job, n int) error {
	cores := max(1, runtime.NumCPU()/n)
	queue := make(chan job)
	var (
		mu       sync.Mutex
		running  = map[*exec.Cmd]bool{}
		failures []string
		done     int // runs that ended, finished or failed
		stopped  int // runs that a signal stopped
		out      = &lineWriter{w: os.Stderr}
	)
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		sig := cli.Signal(ctx)
		if sig == nil {
			sig = syscall.SIGTERM
		}
		for c := range running {
			c.Process.Signal(sig)
		}
	})
	defer stop()
	var wg sync.WaitGroup
	for w := 0; w < min(n, len(todo)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				c := exec.Command(sample, j.args...)
				c.Env = childEnv(cores)
				c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a terminal's Ctrl-C reaches sweep alone, which passes it on
				prefix := fmt.Sprintf("[%s %d] ", j.s.Name, j.r.Index)
				c.Stdout, c.Stderr = out.prefixed(prefix), out.prefixed(prefix)
				mu.Lock()
				if ctx.Err() != nil {
					mu.Unlock()
					continue
				}
				what := j.action.String()
				if j.action == sweep.Resume {
					what = fmt.Sprintf("resume from step %d", j.st.Step)
				}
				out.line(fmt.Sprintf("sweep: %s: %s: sample %s", j.name(), what, commandLine(j.args)))
				err := c.Start()
				if err == nil {
					running[c] = true
				}
				mu.Unlock()
				if err == nil {
					err = c.Wait()
				}
				mu.Lock()
				delete(running, c)
				if err == nil || ctx.Err() == nil {
					done++
				}
				switch {
				case err != nil && ctx.Err() != nil:
					stopped++
					out.line(fmt.Sprintf("sweep: %s stopped (%v); the same command continues it", j.name(), err))
					if _, err := sweep.Keep(j.r); err != nil {
						out.line(fmt.Sprintf("sweep: %s: keeping its metrics so far: %v", j.name(), err))
					}
				case err != nil:
					failures = append(failures, fmt.Sprintf("%s: %v", j.name(), err))
					out.line(fmt.Sprintf("sweep: %s failed (%v); %d of %d runs done", j.name(), err, done, len(todo)))
				default:
					out.line(fmt.Sprintf("sweep: %s finished; %d of %d runs done", j.name(), done, len(todo)))
					if _, err := sweep.Keep(j.r); err != nil {
						failures = append(failures, fmt.Sprintf("%s: %v", j.name(), err))
						out.line(fmt.Sprintf("sweep: %s: %v", j.name(), err))
					}
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range todo {
		if ctx.Err() != nil {
			break
		}
		select {
		case queue <- j:
		case <-ctx.Done():
		}
	}
	close(queue)
	wg.Wait()
	out.flush()
	if ctx.Err() != nil {
		return fmt.Errorf("%d of %d runs done before the signal, %d stopped; run the same command to continue them and the others", done, len(todo), stopped)
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d of %d runs failed: %s", len(failures), len(todo), strings.Join(failures, "; "))
	}
	return nil
}

// lineWriter writes whole lines to w from several writers at once, each
// line under its writer's prefix.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
	ws []*prefixWriter
}

// prefixed returns a writer whose lines go to l under prefix.
func (l *lineWriter) prefixed(prefix string) io.Writer {
	p := &prefixWriter{l: l, prefix: prefix}
	l.mu.Lock()
	l.ws = append(l.ws, p)
	l.mu.Unlock()
	return p
}

// line writes a line of sweep's own.
func (l *lineWriter) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, s)
}

// flush writes what is left of unfinished lines.
func (l *lineWriter) flush() {
	l.mu.Lock()
	ws := l.ws
	l.mu.Unlock()
	for _, p := range ws {
		p.Write([]byte{'\n'})
	}
}

// prefixWriter is one writer of a lineWriter.
type prefixWriter struct {
	l      *lineWriter
	prefix string
	mu     sync.Mutex
	buf    []byte
}

// Write passes on the complete lines of p.
func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		if line := p.buf[:i]; len(bytes.TrimSpace(line)) > 0 {
			p.l.line(p.prefix + string(line))
		}
		p.buf = p.buf[i+1:]
	}
}

// indexEnv are the environment variables that give a job array task's
// index, in the order task reads them.
var indexEnv = []string{"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"}

// task carries out the run of one index, by executing sample in this
// process's place: a scheduler's signals (Slurm's --signal=B:TERM, its
// SIGTERM before a requeue, Kubernetes' to the container's first process)
// reach sample, which writes its checkpoint, and no other process.
func task(args []string) error {
	var root string
	fs := flagSet("task", &root)
	index := fs.Int("index", -1, "the run's index (default: $SLURM_ARRAY_TASK_ID, else $JOB_COMPLETION_INDEX)")
	samplePath := fs.String("sample", "", "the sample binary (default: the one beside sweep, else on $PATH)")
	sws, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	s := sws[0]
	i, from := *index, "--index"
	if !fs.Changed("index") {
		from = ""
		for _, name := range indexEnv {
			if v, ok := os.LookupEnv(name); ok {
				if i, err = strconv.Atoi(v); err != nil {
					return cli.Usagef("$%s is %q, not an index", name, v)
				}
				from = "$" + name
				break
			}
		}
		if from == "" {
			return cli.Usagef("no run index: give --index N, or run under Slurm (an array task, $SLURM_ARRAY_TASK_ID) or as a Kubernetes Indexed Job ($JOB_COMPLETION_INDEX)")
		}
	}
	if i < 0 || i >= s.Len() {
		return cli.Usagef("%s %d is not a run of %s, which has runs 0 to %d", from, i, s.Path, s.Len()-1)
	}
	jobs, err := plan(s, root, []int{i}, false, false)
	if err != nil {
		return err
	}
	j := jobs[0]
	switch j.action {
	case sweep.Skip:
		fmt.Fprintf(os.Stderr, "sweep: %s has ended (%s): nothing to do\n", j.name(), j.st)
		return nil
	case sweep.Resume:
		fmt.Fprintf(os.Stderr, "sweep: %s: resuming from its checkpoint at step %d\n", j.name(), j.st.Step)
	case sweep.Restart:
		fmt.Fprintf(os.Stderr, "sweep: %s: starting afresh (it was %s)\n", j.name(), j.st)
	default:
		fmt.Fprintf(os.Stderr, "sweep: %s: starting\n", j.name())
	}
	sample, err := findSample(*samplePath)
	if err != nil {
		return err
	}
	cores := s.Cores
	if v, err := strconv.Atoi(os.Getenv("SLURM_CPUS_PER_TASK")); err == nil && v > 0 {
		cores = v
	}
	fmt.Fprintf(os.Stderr, "sweep: sample %s\n", commandLine(j.args))
	err = syscall.Exec(sample, append([]string{sample}, j.args...), childEnv(cores))
	return fmt.Errorf("cannot execute %s: %v", sample, err)
}

// mustAbs returns the absolute form of path.
func mustAbs(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	return abs, nil
}

// bufferedLines reads a command's output lines.
func bufferedLines(b []byte) []string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
