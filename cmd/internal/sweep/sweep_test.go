package sweep

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// mnist is a sweep as the experiments write them.
const mnist = `# Table 1, NT column
out mnist/nt-{sampler}-{seed}   # under --runs
seeds 15-17
axis sampler nnsghmc=NNSGHMC --flagfile experiments/mnist-nt/nnsghmc.flags
axis sampler sghmc=SGHMC --flagfile experiments/mnist-nt/sghmc.flags
args --float32
cores 2
step-time 90ms
memory 1.5G
table table.md --metric test_error --steps 100,1200 --summary seconds
table table.md --metric test_nll --steps 100,1200
curves test_error --metric test_error --title "mnist-nt: test_error \"of\" the ensemble"
`

func TestParse(t *testing.T) {
	s, err := ParseText("experiments/mnist-nt/table.sweep", mnist)
	if err != nil {
		t.Fatal(err)
	}
	want := &Sweep{
		Path: "experiments/mnist-nt/table.sweep", Name: "mnist-nt-table", Out: "mnist/nt-{sampler}-{seed}",
		Args: []string{"--float32"},
		Axes: []Axis{
			{Name: "seed", Values: []Value{{"15", "15", []string{"--seed", "15"}}, {"16", "16", []string{"--seed", "16"}}, {"17", "17", []string{"--seed", "17"}}}},
			{Name: "sampler", Values: []Value{
				{"nnsghmc", "NNSGHMC", []string{"--flagfile", "experiments/mnist-nt/nnsghmc.flags"}},
				{"sghmc", "SGHMC", []string{"--flagfile", "experiments/mnist-nt/sghmc.flags"}}}},
		},
		Cores: 2, StepTime: 90 * time.Millisecond, Memory: 1.5 * (1 << 30),
		Tables: []Figure{
			{"table.md", []string{"--metric", "test_error", "--steps", "100,1200", "--summary", "seconds"}},
			{"table.md", []string{"--metric", "test_nll", "--steps", "100,1200"}}},
		Curves: []Figure{{"test_error", []string{"--metric", "test_error", "--title", `mnist-nt: test_error "of" the ensemble`}}},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Parse:\n got %+v\nwant %+v", s, want)
	}
	if s.Len() != 6 {
		t.Errorf("Len() = %d, want 6", s.Len())
	}
}

// TestRunMapping checks the index → run mapping: nested loops over the
// axes in the file's order, the first outermost, the same for every
// caller.
func TestRunMapping(t *testing.T) {
	s, err := ParseText("x/table.sweep", `out r/{a}-{seed}-{b}
axis a a1 --x 1
axis a a2="A two" --x 2
seeds 7 9
axis b b1
axis b b2 --y
axis b b3 --z 3
args --task gaussian20
row {b}/{a}
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		i    int
		dir  string
		args string
		row  string
	}{
		{0, "root/r/a1-7-b1", "--task gaussian20 --x 1 --seed 7", "b1/a1"},
		{1, "root/r/a1-7-b2", "--task gaussian20 --x 1 --seed 7 --y", "b2/a1"},
		{2, "root/r/a1-7-b3", "--task gaussian20 --x 1 --seed 7 --z 3", "b3/a1"},
		{3, "root/r/a1-9-b1", "--task gaussian20 --x 1 --seed 9", "b1/a1"},
		{5, "root/r/a1-9-b3", "--task gaussian20 --x 1 --seed 9 --z 3", "b3/a1"},
		{6, "root/r/a2-7-b1", "--task gaussian20 --x 2 --seed 7", "b1/A two"},
		{11, "root/r/a2-9-b3", "--task gaussian20 --x 2 --seed 9 --z 3", "b3/A two"},
	} {
		r := s.Run(tc.i, "root")
		if r.Index != tc.i || r.Dir != filepath.FromSlash(tc.dir) || strings.Join(r.Args, " ") != tc.args || r.Row != tc.row {
			t.Errorf("Run(%d) = %d %s [%s] %q, want %s [%s] %q", tc.i, r.Index, r.Dir, strings.Join(r.Args, " "), r.Row, tc.dir, tc.args, tc.row)
		}
	}
	if s.Len() != 12 || len(s.Runs("root")) != 12 {
		t.Errorf("Len() = %d, want 12", s.Len())
	}
	// every run has its own directory, and the default row name leaves
	// out the seed
	s.Row = ""
	seen := map[string]bool{}
	for _, r := range s.Runs("") {
		if seen[r.Dir] {
			t.Errorf("two runs in %s", r.Dir)
		}
		seen[r.Dir] = true
		if strings.Contains(r.Row, "7") || strings.Contains(r.Row, "9") {
			t.Errorf("run %d: row %q has its seed", r.Index, r.Row)
		}
	}
	if got := s.Run(7, "").Row; got != "A two, b2" {
		t.Errorf("default row of run 7 = %q, want %q", got, "A two, b2")
	}
}

// TestParseRefuses checks that a bad sweep file gets one line naming the
// file, the line and what to do.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"seeds 1\n", "no out line"},
		{"out x\nout y\n", ":2: out is given twice (first on line 1)"},
		{"out /abs/{seed}\nseeds 1\n", "must be a path under the runs directory"},
		{"out ../x/{seed}\nseeds 1\n", "must be a path under the runs directory"},
		{"out x-{seed}\nseeds 1 2\naxis s a\naxis s b\n", "out x-{seed} lacks {s}"},
		{"out x-{sampler}\n", "{sampler} is no axis of the sweep (its axes: none)"},
		{"out x\nseeds 3-1\n", `"3-1" is not a seed nor a range`},
		{"out x\nseeds 1,2,1\n", "seed 1 is given twice"},
		{"out x\nseeds\n", "no seeds given"},
		{"out x\naxis sampler\n", "axis takes a name"},
		{"out x\naxis Sampler a\n", `axis name "Sampler"`},
		{"out x\naxis seed 1\n", "written with seeds LIST"},
		{"out x\naxis s a/b\n", `label "a/b"`},
		{"out x-{s}\naxis s a\naxis s a\n", "label a is given twice"},
		{"out x-{s}-{t}\naxis s a\naxis t b\naxis s c\n", "must be on consecutive lines"},
		{"out x\naxis s a sghmc\n", `"sghmc" is not a flag`},
		{"out x\nargs --out y\n", "--out is set by the sweep"},
		{"out x\nargs --force\n", "--force is set by the sweep"},
		{"out x\ncores 0\n", "cores 0: want a positive whole number"},
		{"out x\nstep-time 5\n", "step-time 5: want a positive duration"},
		{"out x\nmemory lots\n", "memory lots: want a positive size"},
		{"out x\ntable\n", "table takes a file name"},
		{"out x\ntable ../t.md\n", "the file goes beside the sweep file"},
		{"out x\ncurve k\n", `unknown directive "curve"; a line starts with one of out, args`},
		{`out x "y` + "\n", "a double quote is not closed"},
		{"out x\nrow {nope}\n", "row {nope}: {nope} is no axis"},
		{"out x\nrecord ../r\n", "record ../r: the records go beside the sweep file"},
		{"out x\nrecord r s\n", "record takes one directory, got 2 words"},
	} {
		_, err := ParseText("exp/s.sweep", tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "exp/s.sweep") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", tc.text, err, tc.want)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"", nil},
		{"   # all comment", nil},
		{"a b\tc", []string{"a", "b", "c"}},
		{`a "b c" d`, []string{"a", "b c", "d"}},
		{`a=b" c"d`, []string{"a=b cd"}},
		{`"x \"y\" \\z"`, []string{`x "y" \z`}},
		{`a b#c # comment`, []string{"a", "b#c"}},
		{`a "#not" # yes`, []string{"a", "#not"}},
		{`""`, []string{""}},
	} {
		got, err := Split(tc.line)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Split(%q) = %q, %v, want %q", tc.line, got, err, tc.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want float64
	}{{"512M", 512 << 20}, {"2G", 2 << 30}, {"1.5GiB", 1.5 * (1 << 30)}, {"100", 100}, {"3k", 3 << 10}} {
		if got, err := ParseSize(tc.s); err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %v, %v, want %v", tc.s, got, err, tc.want)
		}
	}
	for _, s := range []string{"", "G", "-1G", "2X", "0"} {
		if _, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q): no error", s)
		}
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"DATA": "/d"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	got, err := Expand([]string{"--target-cov", "$DATA/g/Cov", "${DATA}x", "plain"}, getenv)
	if err != nil || !reflect.DeepEqual(got, []string{"--target-cov", "/d/g/Cov", "/dx", "plain"}) {
		t.Errorf("Expand = %q, %v", got, err)
	}
	if _, err := Expand([]string{"$NOPE/x"}, getenv); err == nil || !strings.Contains(err.Error(), "$NOPE is not set") {
		t.Errorf("Expand of an unset variable: %v", err)
	}
}

// TestFlags checks that a run's flags are read as sample reads them: the
// command line over the flag files, a later file over an earlier one,
// boolean flags without a value.
func TestFlags(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.flags"), filepath.Join(dir, "b.flags")
	os.WriteFile(a, []byte("# a\n--task piano-gru\n--chains 20 # twenty\nsteps = 500\n-hidden=200\n--valid\n"), 0o644)
	os.WriteFile(b, []byte("--chains=30\n\t--beta -1.5\n"), 0o644)
	got, err := Flags([]string{"--flagfile", a, "--float32", "--steps", "40", "--flagfile=" + b, "--beta", "-2", "--eval-every=5"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"task": "piano-gru", "chains": "30", "steps": "40", "hidden": "200", "valid": "true",
		"float32": "true", "beta": "-2", "eval-every": "5"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Flags = %v, want %v", got, want)
	}
	if _, err := Flags([]string{"--flagfile", filepath.Join(dir, "none")}); err == nil || !strings.Contains(err.Error(), "cannot read flag file") {
		t.Errorf("missing flag file: %v", err)
	}
}

// TestResources checks the resources derived from the runs' own settings:
// the largest memory estimate and the most steps.
func TestResources(t *testing.T) {
	s, err := ParseText("x/s.sweep", `out g/{c}
axis c small --chains 10 --steps 100
axis c big --chains 50 --steps 3000
args --task gaussian20 --eval-every 50
step-time 10ms
`)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Resources(s.Runs(""), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	var ts Tasks
	big, err := ts.Settings([]string{"--task", "gaussian20", "--chains", "50", "--steps", "3000", "--eval-every", "50"})
	if err != nil {
		t.Fatal(err)
	}
	if big.Chains != 50 || big.Steps != 3000 || big.EvalEvery != 50 || big.Bytes < 8*20*50*3000 {
		t.Errorf("settings of the big run: %+v", big)
	}
	want := Resources{Cores: 1, Estimate: big.Bytes, Memory: MemoryFactor*big.Bytes + MemoryBase, Steps: 3000,
		Time: time.Duration(3000*TimeMargin)*10*time.Millisecond + TimeBase}
	if r != want {
		t.Errorf("Resources = %+v, want %+v", r, want)
	}
	// the task's defaults where the flags say nothing
	def, err := ts.Settings([]string{"--task", "gaussian20"})
	if err != nil || def.Chains != 50 || def.Steps != 12000 {
		t.Errorf("defaults: %+v, %v; want gaussian20's 50 chains and 12,000 steps", def, err)
	}
	s.Memory = 3 << 30
	if r, _ := s.Resources(s.Runs(""), nil); r.Memory != 3<<30 {
		t.Errorf("memory line: %v, want 3 GiB", r.Memory)
	}
}

// TestExperimentsSweepFiles parses every sweep file of experiments/: each
// one a user is told to run must be one that sweep reads.
func TestExperimentsSweepFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "experiments", "*", "*.sweep"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sweep files under experiments/: %v", err)
	}
	for _, f := range files {
		if _, err := Parse(f); err != nil {
			t.Error(err)
		}
	}
}
