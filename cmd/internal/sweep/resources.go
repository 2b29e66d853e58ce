package sweep

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/graph"
)

// boolFlags are sample's flags that take no value: on a sweep line, the
// word after any other flag is its value (unless it starts with --).
var boolFlags = map[string]bool{"float32": true, "valid": true, "initial-state": true, "reset-after": true, "quiet": true, "force": true, "tune-step": true, "download": true}

// Flags returns the flags that args set, with those of the flag files they
// name (--flagfile FILE) as sample reads them: a flag on the command line
// overrides the files, a later file an earlier one. Values are as written;
// a flag without a value is "true".
func Flags(args []string) (map[string]string, error) {
	cmd := map[string]string{}
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			return nil, fmt.Errorf("%q is not a flag", a)
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && !boolFlags[name] && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			i++
			value, hasValue = args[i], true
		}
		if !hasValue {
			value = "true"
		}
		if name == "flagfile" {
			files = append(files, value)
			continue
		}
		cmd[name] = value
	}
	flags := map[string]string{}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("cannot read flag file %s: %v", path, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i]
			}
			if i := strings.Index(line, "\t#"); i >= 0 {
				line = line[:i]
			}
			line = strings.TrimSpace(line)
			if line == "" || line[0] == '#' {
				continue
			}
			line = strings.TrimLeft(line, "-")
			end := strings.IndexAny(line, "= \t")
			if end < 0 {
				flags[line] = "true"
				continue
			}
			value := strings.TrimSpace(line[end:])
			value = strings.TrimSpace(strings.TrimPrefix(value, "="))
			flags[line[:end]] = value
		}
	}
	for k, v := range cmd {
		flags[k] = v
	}
	return flags, nil
}

// Settings are what a run's resources follow from: its task and the
// sizes sample takes from the flags or the task's defaults.
type Settings struct {
	Task                     string
	Chains, Steps, EvalEvery int
	// Bytes is the run's memory estimate (catalog.Task.SampleBytes): a
	// lower bound on the chains' state and what the task's monitor keeps.
	Bytes float64
}

// Tasks builds the runs' tasks, each once: building a data task reads its
// data set.
type Tasks struct {
	built map[string]*catalog.Task
}

// Settings returns the settings of a run with the flags args (the
// environment's variables expanded), building its task.
func (ts *Tasks) Settings(args []string) (Settings, error) {
	flags, err := Flags(args)
	if err != nil {
		return Settings{}, err
	}
	s := Settings{Task: flags["task"]}
	if s.Task == "" {
		s.Task = "gaussian20" // sample's default
	}
	o := catalog.DefaultOptions
	o.DataDir = flags["data-dir"]
	o.TargetCov = flags["target-cov"]
	o.Valid = flags["valid"] == "true"
	o.InitialState = flags["initial-state"] == "true"
	o.ResetAfter = flags["reset-after"] == "true"
	if flags["float32"] == "true" {
		o.Dtype = graph.Float32
	}
	num := func(name string, v *int) error {
		if flags[name] == "" {
			return nil
		}
		n, err := strconv.Atoi(flags[name])
		if err != nil || n < 0 {
			return fmt.Errorf("--%s %s: want a whole number", name, flags[name])
		}
		*v = n
		return nil
	}
	if err := num("hidden", &o.Hidden); err != nil {
		return s, err
	}
	if v := flags["target-seed"]; v != "" {
		if o.TargetSeed, err = strconv.ParseUint(v, 10, 64); err != nil {
			return s, fmt.Errorf("--target-seed %s: want a whole number", v)
		}
	}
	if v := flags["target-scale"]; v != "" {
		if o.TargetScale, err = strconv.ParseFloat(v, 64); err != nil {
			return s, fmt.Errorf("--target-scale %s: want a number", v)
		}
	}
	key := fmt.Sprintf("%s %+v", s.Task, o)
	t := ts.built[key]
	if t == nil {
		if t, err = catalog.New(s.Task, o); err != nil {
			return s, err
		}
		if ts.built == nil {
			ts.built = map[string]*catalog.Task{}
		}
		ts.built[key] = t
	}
	s.Chains, s.Steps, s.EvalEvery = t.Defaults.Chains, t.Defaults.Steps, t.Defaults.EvalEvery
	for _, f := range []struct {
		name string
		v    *int
	}{{"chains", &s.Chains}, {"steps", &s.Steps}, {"eval-every", &s.EvalEvery}} {
		if err := num(f.name, f.v); err != nil {
			return s, err
		}
	}
	s.Bytes = t.SampleBytes(s.Chains, s.Steps, s.EvalEvery)
	return s, nil
}

// Memory headroom over a run's estimate (Settings.Bytes), which is a lower
// bound: the catalog counts 10 vectors of the chains' D×K numbers where
// the GRU's activations peak at about 57 (catalog.stateVectors), and
// leaves out the data set, the graphs and Go's runtime, which the fixed
// part covers (a 12,000-step mnist-nt run peaks at 334 MB, the main job's
// training at 1.65 GB; experiments/BENCHMARKS.md).
const (
	MemoryFactor = 6
	MemoryBase   = 512 << 20
)

// TimeMargin multiplies the steps' time for a time limit, and TimeBase is
// added for loading data and scoring.
const (
	TimeMargin = 1.5
	TimeBase   = 5 * time.Minute
)

// Resources are what each run of a sweep asks a scheduler for: the most
// that any of its runs needs.
type Resources struct {
	Cores int
	// Memory in bytes: the sweep's memory line, else MemoryFactor times the
	// largest estimate plus MemoryBase.
	Memory float64
	// Estimate is the largest run's estimate, and Steps the most steps of a
	// run.
	Estimate float64
	Steps    int
	// Time is the time limit: the most steps times the sweep's step time,
	// times TimeMargin, plus TimeBase; 0 if the sweep gives no step time.
	Time time.Duration
}

// Resources derives the resources of the runs (the environment's variables
// in their flags expanded by getenv), building their tasks.
func (s *Sweep) Resources(runs []Run, getenv func(string) (string, bool)) (Resources, error) {
	r := Resources{Cores: s.Cores}
	var ts Tasks
	for _, run := range runs {
		args, err := Expand(run.Args, getenv)
		if err != nil {
			return r, fmt.Errorf("run %d (%s): %v", run.Index, run.Dir, err)
		}
		st, err := ts.Settings(args)
		if err != nil {
			return r, fmt.Errorf("run %d (%s): %v", run.Index, run.Dir, err)
		}
		r.Estimate = math.Max(r.Estimate, st.Bytes)
		r.Steps = max(r.Steps, st.Steps)
	}
	r.Memory = s.Memory
	if r.Memory == 0 {
		r.Memory = MemoryFactor*r.Estimate + MemoryBase
	}
	if s.StepTime > 0 {
		r.Time = time.Duration(float64(r.Steps)*float64(s.StepTime)*TimeMargin) + TimeBase
	}
	return r, nil
}
