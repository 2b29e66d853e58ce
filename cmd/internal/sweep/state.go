package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
)

// The files of a sample run that tell its state.
const (
	SummaryFile    = "summary.json"
	CheckpointFile = "checkpoint.json"
	lockFile       = ".lock"
)

// State is where a run stands, as its output directory tells.
type State int

const (
	// New: no output directory, or an empty one.
	New State = iota
	// Started: files of a run without a summary or a checkpoint (it is
	// running, or was killed before its first checkpoint), or the summary
	// of a run interrupted before it wrote a checkpoint: it starts afresh.
	Started
	// Stopped: a checkpoint, and no summary or that of an interrupted run
	// (a signal, a lost machine): sample --resume continues it.
	Stopped
	// Failed: a summary with an error that is no interruption (a chain
	// diverged): the run has ended, and is not run again unless asked.
	Failed
	// Finished: a summary without an error.
	Finished
)

// String names the state, as status lists it.
func (s State) String() string {
	return [...]string{"new", "started", "stopped", "failed", "finished"}[s]
}

// Done reports whether a run in state s has ended: finished, or failed;
// figures sweep builds its tables from such runs.
func (s State) Done() bool { return s == Finished || s == Failed }

// Status is a run's state with what its directory says about it.
type Status struct {
	State State
	// Step is the step of the checkpoint of a Stopped run.
	Step int
	// Error is the error its summary records (Failed, and Started after an
	// interruption).
	Error string
	// Lock names the process recorded in the directory's lock file, as
	// "PID 123 on host", when there is one: the run is running, or was
	// killed.
	Lock string
	// Running: a process holds the directory's lock (cli.HeldBy), so the
	// run is going; a Stopped state is then its last checkpoint's.
	Running bool
	// Recorded: the status is the run's record's (InspectRun), its output
	// directory holding nothing.
	Recorded bool
	// Stale, for an ended run, names the flags it ran with that differ
	// from the sweep's now, as "lr ran 0.0013, now 1.3e-2", and the input
	// files whose content has changed since (InspectRun): sweep run skips
	// it, figures leaves it out of the tables.
	Stale string
	// StoppedMetrics, for a run whose output directory holds nothing,
	// names the StoppedMetricsFile in its record: the metrics of an
	// earlier run that a signal stopped (its checkpoint is not kept, so
	// the run starts afresh).
	StoppedMetrics string
}

// String describes the status in a few words.
func (st Status) String() string {
	s := st.State.String()
	switch {
	case st.State == Stopped:
		s += fmt.Sprintf(" at step %d", st.Step)
	case st.Error != "":
		s += ": " + st.Error
	}
	switch {
	case st.Running && !st.State.Done():
		s = "running (" + st.Lock + ")"
		if st.State == Stopped {
			s += fmt.Sprintf(", its last checkpoint at step %d", st.Step)
		}
	case st.Lock != "" && !st.State.Done():
		s += " (lock file of " + st.Lock + ", which no process holds: killed)"
	}
	if st.Recorded {
		s += " (recorded)"
	}
	if st.Stale != "" {
		s += " (stale: " + st.Stale + ")"
	}
	if st.StoppedMetrics != "" {
		s += " (an earlier run's metrics until a signal stopped it: " + st.StoppedMetrics + ")"
	}
	return s
}

// Inspect returns the status of the run whose output directory is dir.
// It reads the directory, and tests its lock without taking it: a run
// that a process holds is Running.
func Inspect(dir string) (Status, error) {
	var st Status
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return st, nil
	case err != nil:
		return st, fmt.Errorf("cannot read the run's directory %s: %v", dir, err)
	}
	files := map[string]bool{}
	for _, e := range entries {
		files[e.Name()] = true
	}
	if b, err := os.ReadFile(filepath.Join(dir, lockFile)); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 2 {
			st.Lock = "PID " + f[0] + " on " + strings.Join(f[1:], " ")
		} else if len(f) == 1 {
			st.Lock = "PID " + f[0]
		}
	}
	if h, held := cli.HeldBy(dir); held {
		st.Running, st.Lock = true, h
	}
	delete(files, lockFile)
	if len(files) == 0 {
		return st, nil
	}
	interrupted := false
	if b, err := os.ReadFile(filepath.Join(dir, SummaryFile)); err == nil {
		var sum map[string]any
		if json.Unmarshal(b, &sum) == nil && sum != nil {
			e, failed := sum["error"].(string)
			switch {
			case !failed:
				st.State = Finished
				return st, nil
			case !strings.HasPrefix(e, "interrupted"):
				st.State, st.Error = Failed, e
				return st, nil
			}
			st.Error, interrupted = e, true
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, CheckpointFile)); err == nil {
		var cp struct {
			State *struct {
				Steps int `json:"steps"`
			} `json:"state"`
		}
		if json.Unmarshal(b, &cp) == nil && cp.State != nil {
			st.State, st.Step, st.Error = Stopped, cp.State.Steps, ""
			return st, nil
		}
	}
	st.State = Started
	if !interrupted {
		st.Error = ""
	}
	return st, nil
}

// Action is what a sweep does with a run.
type Action int

const (
	// Skip: the run has ended.
	Skip Action = iota
	// Start a new run.
	Start
	// Restart: start the run afresh, replacing what its directory holds
	// (sample --force).
	Restart
	// Resume: continue the run from its checkpoint (sample --resume).
	Resume
)

// String names the action, as listings show it.
func (a Action) String() string { return [...]string{"skip", "start", "restart", "resume"}[a] }

// Plan returns what to do with a run in status st: start a new one, start
// afresh one that started and stopped without a checkpoint, resume one
// from its checkpoint, skip one that has ended (but one that failed, when
// redo is set: it is started afresh), and one that is Running.
func Plan(st Status, redo bool) Action {
	if st.Running && !st.State.Done() {
		return Skip
	}
	switch st.State {
	case New:
		return Start
	case Started:
		return Restart
	case Stopped:
		return Resume
	case Failed:
		if redo {
			return Restart
		}
	}
	return Skip
}

// Command returns the arguments of sample that carry out action a on the
// run r: its flags with the environment's variables expanded (see
// Expand), and --out DIR, or --resume DIR (with the run's flags, which
// sample checks against those the run started with), and --force to
// restart it; quiet adds --quiet. It returns nil for Skip.
func (r Run) Command(a Action, quiet bool, getenv func(string) (string, bool)) ([]string, error) {
	if a == Skip {
		return nil, nil
	}
	args, err := Expand(r.Args, getenv)
	if err != nil {
		return nil, err
	}
	switch a {
	case Resume:
		args = append([]string{"--resume", r.Dir}, args...)
	case Restart:
		args = append(args, "--force", "--out", r.Dir)
	default:
		args = append(args, "--out", r.Dir)
	}
	if quiet {
		args = append(args, "--quiet")
	}
	return args, nil
}
