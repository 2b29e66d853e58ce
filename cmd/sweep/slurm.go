package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/sweep"
)

// slurmScript is what a job array's batch script needs.
type slurmScript struct {
	name      string
	indices   []int // array indices: the runs
	maxAtOnce int   // the array's % limit; 0 for none
	res       sweep.Resources
	signal    time.Duration // SIGTERM this long before the time limit
	logs      string        // the directory of the tasks' logs
	chdir     string        // the directory the tasks run in
	extra     []string      // further #SBATCH options
	sweepBin  string        // the sweep binary
	sample    string        // the sample binary
	root      string        // the runs directory
	file      string        // the sweep file
	note      string        // how it was written, for a comment
}

// arrayRanges writes sorted indices as Slurm's --array list: 0-3,7,9-12.
func arrayRanges(idx []int) string {
	var parts []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(idx[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", idx[i], idx[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// slurmTime writes a time limit as Slurm's days-hours:minutes:seconds,
// rounded up to whole minutes (Slurm's resolution).
func slurmTime(d time.Duration) string {
	m := int(math.Ceil(d.Minutes()))
	days, h, mins := m/(24*60), m/60%24, m%60
	if days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:00", days, h, mins)
	}
	return fmt.Sprintf("%02d:%02d:00", h, mins)
}

// shellQuote quotes a word for bash when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+%@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// text returns the batch script. Each array task runs "sweep task", which
// takes the run of $SLURM_ARRAY_TASK_ID and executes sample in its place
// (exec twice over: the batch shell becomes sample), so that the signal
// --signal=B:TERM sends to the batch shell before the time limit, and
// Slurm's SIGTERM before a requeue or a preemption, reach sample once:
// it writes its checkpoint and stops, and the requeued task resumes from
// it (a task without one starts afresh).
func (s slurmScript) text() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("#!/bin/bash")
	w("# The job array of the sweep %s: array index i carries out its run i", s.file)
	w("# (sweep list %s), resuming it from its checkpoint after a requeue.", s.file)
	w("# %s", s.note)
	w("# Memory: the largest run's estimate %s (catalog.Task.SampleBytes, a lower bound)", catalog.FormatBytes(s.res.Estimate))
	w("# times %d plus %s, unless the sweep's memory line or --mem sets it.", sweep.MemoryFactor, catalog.FormatBytes(sweep.MemoryBase))
	if s.res.Time > 0 {
		w("# Time: %d steps of the longest run times the step time, times %g, plus %v, or --time.", s.res.Steps, sweep.TimeMargin, sweep.TimeBase)
	} else {
		w("# Time: no step-time line in the sweep nor --time: the partition's default limit.")
	}
	w("#SBATCH --job-name=%s", s.name)
	arr := arrayRanges(s.indices)
	if s.maxAtOnce > 0 {
		arr += "%" + strconv.Itoa(s.maxAtOnce)
	}
	w("#SBATCH --array=%s", arr)
	w("#SBATCH --ntasks=1")
	w("#SBATCH --cpus-per-task=%d", s.res.Cores)
	w("#SBATCH --mem=%dM", int64(math.Ceil(s.res.Memory/(1<<20))))
	if s.res.Time > 0 {
		w("#SBATCH --time=%s", slurmTime(s.res.Time))
	}
	w("#SBATCH --requeue")
	w("#SBATCH --signal=B:TERM@%d", int(s.signal.Seconds()))
	w("#SBATCH --open-mode=append")
	w("#SBATCH --output=%s", filepath.Join(s.logs, s.name+"-%A_%a.log"))
	w("#SBATCH --chdir=%s", s.chdir)
	for _, e := range s.extra {
		w("#SBATCH %s", e)
	}
	w("exec %s task --runs %s --sample %s %s", shellQuote(s.sweepBin), shellQuote(s.root), shellQuote(s.sample), shellQuote(s.file))
	return b.String()
}

// slurm writes, and with --submit submits, the batch script of a job
// array of the sweep's runs that have not ended.
func slurm(args []string) error {
	var root string
	fs := flagSet("slurm", &root)
	submit := fs.Bool("submit", false, "submit the script with sbatch and print the array's job ID")
	script := fs.String("script", "", "where to write the script (default: RUNS/slurm/NAME.sbatch)")
	all := fs.Bool("all", false, "an array index for every run, the ended ones too (their tasks find nothing to do)")
	maxAtOnce := fs.Int("max-running", 0, "run at most N tasks of the array at once (--array's %N); 0: no limit")
	timeLimit := fs.Duration("time", 0, "the time limit of each task (as 90m, 12h), instead of the sweep's step-time × the longest run's steps × 1.5 + 5m")
	mem := fs.String("mem", "", "the memory of each task (as 2G), instead of the sweep's memory line or the runs' estimate")
	cores := fs.Int("cores", 0, "the cores of each task, instead of the sweep's cores line")
	signal := fs.Duration("signal", 2*time.Minute, "send sample SIGTERM this long before the time limit, to write its checkpoint (--signal=B:TERM@SECONDS)")
	var extra []string
	fs.StringArrayVar(&extra, "sbatch", nil, "a further sbatch option for the script, as --sbatch=--partition=short (repeatable)")
	samplePath := fs.String("sample", "", "the sample binary the tasks run (default: the one beside sweep, else on $PATH)")
	sws, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	s := sws[0]
	for _, e := range extra {
		if !strings.HasPrefix(e, "-") {
			return cli.Usagef("--sbatch %q: want an sbatch option, as --sbatch=--partition=short", e)
		}
	}
	if *maxAtOnce < 0 || *cores < 0 || *timeLimit < 0 || *signal < 0 || *signal > 65535*time.Second {
		return cli.Usagef("--max-running, --cores and --time must be non-negative, --signal between 0 and 65535 s")
	}
	if root, err = mustAbs(root); err != nil {
		return cli.Usagef("--runs %v", err)
	}
	jobs, err := plan(s, root, nil, false, false)
	if err != nil {
		return err
	}
	var idx []int
	for _, j := range jobs {
		if *all || j.action != sweep.Skip {
			idx = append(idx, j.r.Index)
		}
	}
	fmt.Fprintf(os.Stderr, "sweep: %s: %d runs: %s\n", s.Path, len(jobs), planSummary(jobs))
	if len(idx) == 0 {
		fmt.Fprintln(os.Stderr, "sweep: every run has ended: nothing to submit (--all submits them anyway)")
		return nil
	}
	var runs []sweep.Run
	for _, i := range idx {
		runs = append(runs, s.Run(i, root))
	}
	res, err := s.Resources(runs, lookupEnv)
	if err != nil {
		return cli.Usagef("cannot derive the array's resources: %v", err)
	}
	if *cores > 0 {
		res.Cores = *cores
	}
	if *mem != "" {
		if res.Memory, err = sweep.ParseSize(*mem); err != nil {
			return cli.Usagef("--mem %s: %v", *mem, err)
		}
	}
	if *timeLimit > 0 {
		res.Time = *timeLimit
	}
	sample, err := findSample(*samplePath)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return fmt.Errorf("cannot find this program's path for the script: %v", err)
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return cli.Usagef("sweep slurm writes its own path into the script, and go run's build of it (%s) is deleted when it ends: build it, as go build -o bin/ ./cmd/sweep ./cmd/sample ./cmd/figures, and run bin/sweep", exe)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	file, err := mustAbs(s.Path)
	if err != nil {
		return err
	}
	logs := filepath.Join(root, "slurm")
	if *script == "" {
		*script = filepath.Join(logs, s.Name+".sbatch")
	}
	sc := slurmScript{name: s.Name, indices: idx, maxAtOnce: *maxAtOnce, res: res, signal: *signal, logs: logs, chdir: cwd,
		extra: extra, sweepBin: exe, sample: sample, root: root, file: file,
		note: "Written by: sweep slurm " + commandLine(args)}
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*script), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(*script, []byte(sc.text()), 0o755); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "sweep: wrote %s: %d array tasks, %d cores, %s of memory, time limit %s each\n", *script, len(idx), res.Cores,
		catalog.FormatBytes(res.Memory), timeNote(res.Time))
	if !*submit {
		fmt.Fprintf(os.Stderr, "sweep: submit it with: sbatch %s\n", *script)
		return nil
	}
	if _, err := exec.LookPath("sbatch"); err != nil {
		return fmt.Errorf("sbatch is not on $PATH: submit %s from a machine with Slurm's commands (sbatch %s)", *script, *script)
	}
	out, err := exec.Command("sbatch", "--parsable", *script).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sbatch %s: %v: %s", *script, err, strings.Join(bufferedLines(out), "; "))
	}
	lines := bufferedLines(out)
	if len(lines) == 0 {
		return fmt.Errorf("sbatch %s printed no job ID", *script)
	}
	id, _, _ := strings.Cut(lines[len(lines)-1], ";")
	fmt.Println(id)
	fmt.Fprintf(os.Stderr, "sweep: submitted job array %s; follow it with squeue -j %s and sweep status %s; logs in %s\n", id, id, s.Path, logs)
	return nil
}

// timeNote describes a time limit for a message.
func timeNote(d time.Duration) string {
	if d == 0 {
		return "the partition's default"
	}
	return slurmTime(d)
}
