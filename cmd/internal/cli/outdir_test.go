package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestHelperHoldLock is not a test: run as a subprocess with
// CLI_HOLD_LOCK=DIR, it locks DIR, says so on standard output and holds the
// lock until its standard input closes.
func TestHelperHoldLock(t *testing.T) {
	dir := os.Getenv("CLI_HOLD_LOCK")
	if dir == "" {
		t.Skip("a helper process")
	}
	d, err := OpenOutDir(dir)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	bufio.NewReader(os.Stdin).ReadString('\n')
	d.Close()
	os.Exit(0)
}

// holdLock starts a process that holds the lock of dir and returns it; it
// releases the lock when the test ends.
func holdLock(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldLock$")
	cmd.Env = append(os.Environ(), "CLI_HOLD_LOCK="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("helper: %q", line)
	}
	return cmd
}

// deadPID returns the ID of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestOpenOutDirLocks: while one run holds an output directory, another
// gets a one-line error naming the directory and the holder's PID; after
// Close the directory is free and the lock file gone.
func TestOpenOutDirLocks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	holder := holdLock(t, dir)
	_, err := OpenOutDir(dir)
	want := fmt.Sprintf("%s is in use by another run (PID %d on ", dir, holder.Process.Pid)
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("second OpenOutDir: %v; want %q...", err, want)
	}

	// in this process too (flock locks belong to open files)
	dir2 := t.TempDir()
	d, err := OpenOutDir(dir2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenOutDir(dir2); err == nil || !strings.Contains(err.Error(), "PID "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second OpenOutDir in one process: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir2, LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left behind: %v", err)
	}
	d, err = OpenOutDir(dir2)
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	d.Close()
	d.Close()
}

// TestOpenOutDirStaleLock: a lock file left by a dead process does not
// block, with the system's file locks and, where there are none, by its
// PID; one of a live process does.
func TestOpenOutDirStaleLock(t *testing.T) {
	host, _ := os.Hostname()
	tests := []struct {
		name    string
		content string
		noLocks bool   // take the system's file locks away
		want    string // "" for success, else part of the error
	}{
		{"dead PID", fmt.Sprintf("%d %s\n", deadPID(t), host), false, ""},
		{"live PID, unlocked", fmt.Sprintf("%d %s\n", os.Getppid(), host), false, ""},
		{"garbage", "\x00\x01 not a pid", false, ""},
		{"no locks: dead PID", fmt.Sprintf("%d %s\n", deadPID(t), host), true, ""},
		{"no locks: empty", "", true, ""},
		{"no locks: own PID", fmt.Sprintf("%d %s\n", os.Getpid(), host), true, ""},
		{"no locks: live PID", fmt.Sprintf("%d %s\n", os.Getppid(), host), true, fmt.Sprintf("in use by another run (PID %d on %s, by its lock file alone; remove ", os.Getppid(), host)},
		{"no locks: other host", "1 elsewhere\n", true, "(PID 1 on elsewhere, by its lock file alone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.noLocks {
				tryLock = func(*os.File) error { return errNoLocks }
				defer func() { tryLock = platformTryLock }()
			}
			dir := t.TempDir()
			lockPath := filepath.Join(dir, LockFile)
			if err := os.WriteFile(lockPath, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := OpenOutDir(dir)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("OpenOutDir: %v; want an error with %q", err, tt.want)
				}
				if b, _ := os.ReadFile(lockPath); string(b) != tt.content {
					t.Errorf("the holder's lock file changed to %q", b)
				}
				return
			}
			if err != nil {
				t.Fatalf("OpenOutDir: %v", err)
			}
			b, _ := os.ReadFile(lockPath)
			if want := fmt.Sprintf("%d %s\n", os.Getpid(), host); string(b) != want {
				t.Errorf("lock file holds %q, want %q", b, want)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(lockPath); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("lock file left behind: %v", err)
			}
		})
	}
}

// TestOutDirLeavesNoEmptyDirectory: a directory that OpenOutDir created,
// with its parents, goes away on Close if nothing was written there, also
// when the lock is refused; one that existed, or holds a file, stays.
func TestOutDirLeavesNoEmptyDirectory(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c")
	d, err := OpenOutDir(deep)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if names := dirNames(t, root); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}

	d, err = OpenOutDir(deep)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(deep, "summary.json"), []byte("{}\n"), 0o644)
	d.Close()
	if names := dirNames(t, deep); !reflect.DeepEqual(names, []string{"summary.json"}) {
		t.Errorf("after a write: %v", names)
	}

	existing := t.TempDir()
	d, err = OpenOutDir(existing)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := os.Stat(existing); err != nil {
		t.Errorf("an existing directory was removed: %v", err)
	}

	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := OpenOutDir(file); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("OpenOutDir on a file: %v", err)
	}
	var ue *UsageError
	if _, err := OpenOutDir(filepath.Join(file, "x")); !errors.As(err, &ue) {
		t.Errorf("OpenOutDir below a file: %v, want a usage error", err)
	}
}

// The contents of a run's files in TestReplace.
const (
	sampleConfig = `{"command": "sample", "flags": {}, "given": []}`
	trainConfig  = `{"command": "train", "flags": {}, "given": [], "training": {}}`
	legacyTrain  = `{"flags": {}, "given": [], "training": {}}`
	legacySample = `{"flags": {}, "given": []}`
	userConfig   = `{"learning_rate": 0.1}`
	oldSummary   = `{"sampler": "sghmc", "task": "gaussian20"}`
)

// TestReplace: an output directory with an earlier run of the command is
// refused unless force; force removes the run's files, interrupted writes
// included, and nothing else, and a symbolic link as a link, never its
// target. A directory of another command's run, or of anything but a run
// (a user's own config.json), is refused with or without force, named as
// what it is.
func TestReplace(t *testing.T) {
	sample := RunKind{Command: KindSample, Files: []string{"config.json", "metrics.csv", "summary.json", "trace.csv"}, Keep: func(string) string { return "give --force to replace it, or choose another --out" }}
	train := RunKind{Command: KindTrain, Files: []string{"config.json", "checkpoint.json", "train.csv", "sampler.json"}, Keep: func(dir string) string { return "continue it with --resume " + dir + ", or choose another --out" }}
	tests := []struct {
		name    string
		kind    RunKind
		entries []string // files to create, "name=content" or "name" (content "old"); "name->target" for a link, "name/" for a directory
		force   bool
		want    string   // "" for success, else part of the error
		left    []string // entries afterwards, the lock file aside
	}{
		{"empty", sample, nil, false, "", nil},
		{"a run", sample, []string{"config.json=" + sampleConfig, "metrics.csv", "summary.json"}, false, "already holds a sample run (config.json, metrics.csv, summary.json); give --force to replace it", []string{"config.json", "metrics.csv", "summary.json"}},
		{"a crashed run", sample, []string{"config.json=" + sampleConfig}, false, "already holds a sample run (config.json)", []string{"config.json"}},
		{"a run before config.json", sample, []string{"summary.json=" + oldSummary, "metrics.csv"}, false, "already holds a sample run", []string{"metrics.csv", "summary.json"}},
		{"force", sample, []string{"config.json=" + legacySample, "metrics.csv", "summary.json", "trace.csv", ".trace.csv.tmp123"}, true, "", nil},
		{"force keeps other files", sample, []string{"summary.json=" + oldSummary, "notes.txt"}, true, "", []string{"notes.txt"}},
		{"only interrupted writes", sample, []string{".summary.json.tmp42"}, false, "", nil},
		{"something else", sample, []string{"notes.txt", "data/"}, false, "is not empty and holds no run of this program (it has data, notes.txt); sample writes only into a new or empty directory, or one of its own runs", []string{"data", "notes.txt"}},
		{"something else, force", sample, []string{"notes.txt", "metrics.csv"}, true, "holds no run of this program (it has metrics.csv, notes.txt)", []string{"metrics.csv", "notes.txt"}},
		{"a user's config.json and train.csv", train, []string{"config.json=" + userConfig, "train.csv"}, false, "holds no run of this program (it has config.json, train.csv)", []string{"config.json", "train.csv"}},
		{"a training run, sample --force", sample, []string{"config.json=" + trainConfig, "checkpoint.json", "train.csv"}, true, "holds a train run, not a sample run: sample does not write over it", []string{"checkpoint.json", "config.json", "train.csv"}},
		{"an old training run, sample --force", sample, []string{"config.json=" + legacyTrain, "checkpoint.json"}, true, "holds a train run, not a sample run", []string{"checkpoint.json", "config.json"}},
		{"a sample run, train", train, []string{"config.json=" + sampleConfig, "summary.json"}, false, "holds a sample run, not a train run", []string{"config.json", "summary.json"}},
		{"a training run, train", train, []string{"config.json=" + trainConfig, "checkpoint.json"}, false, "already holds a train run (checkpoint.json, config.json); continue it with --resume " + "DIR", []string{"checkpoint.json", "config.json"}},
		{"link", sample, []string{"summary.json=" + oldSummary, "trace.csv->TARGET"}, true, "", nil},
		{"a directory in the way", sample, []string{"summary.json=" + oldSummary, "trace.csv/"}, true, "trace.csv is a directory", []string{"summary.json", "trace.csv"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outside := t.TempDir()
			target := filepath.Join(outside, "precious")
			os.WriteFile(target, []byte("keep"), 0o644)
			dir := t.TempDir()
			for _, e := range tt.entries {
				name, content, ok := strings.Cut(e, "=")
				if !ok {
					content = "old"
				}
				p := filepath.Join(dir, name)
				var err error
				switch {
				case strings.HasSuffix(e, "->TARGET"):
					err = os.Symlink(target, strings.TrimSuffix(p, "->TARGET"))
				case strings.HasSuffix(e, "/"):
					err = os.MkdirAll(filepath.Join(p, "inner"), 0o755)
				default:
					err = os.WriteFile(p, []byte(content), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			want := strings.ReplaceAll(tt.want, "DIR", dir)
			check := func(what string, err error) {
				t.Helper()
				switch {
				case want == "" && err != nil:
					t.Errorf("%s: %v", what, err)
				case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
					t.Errorf("%s: %v; want an error with %q", what, err, want)
				}
			}
			check("Check", tt.kind.Check(dir, tt.force))
			d, err := OpenOutDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			check("Replace", d.Replace(tt.kind, tt.force))
			left := slices.DeleteFunc(dirNames(t, dir), func(n string) bool { return n == LockFile })
			if !slices.Equal(left, tt.left) {
				t.Errorf("left %v, want %v", left, tt.left)
			}
			if b, _ := os.ReadFile(target); string(b) != "keep" {
				t.Errorf("the link's target was touched")
			}
		})
	}
}

// TestCheckNamesTheRunInUse: an output directory that a live run is
// writing is refused as in use, by that run's PID, before anything else
// is said of it (not "continue it with --resume").
func TestCheckNamesTheRunInUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	holder := holdLock(t, dir)
	os.WriteFile(filepath.Join(dir, ConfigFile), []byte(`{"command": "train", "flags": {}}`), 0o644)
	k := RunKind{Command: KindTrain, Files: []string{ConfigFile}, Keep: func(dir string) string { return "continue it with --resume " + dir }}
	err := k.Check(dir, false)
	want := fmt.Sprintf("%s is in use by another run (PID %d on ", dir, holder.Process.Pid)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Check: %v; want %q…", err, want)
	}
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err != nil {
		t.Errorf("the holder's lock file: %v", err)
	}
}

// TestCheckResume: --resume refuses a directory of another command's run,
// naming the command that continues it, and one that holds no run.
func TestCheckResume(t *testing.T) {
	k := RunKind{Command: KindTrain}
	tests := []struct{ config, want string }{
		{trainConfig, ""},
		{legacyTrain, ""},
		{sampleConfig, "it holds a sample run, not a train run; continue it with sample --resume"},
		{userConfig, "it holds no train run"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, ConfigFile), []byte(tt.config), 0o644)
		err := k.CheckResume(dir)
		if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: CheckResume: %v; want %q", tt.config, err, tt.want)
		}
	}
	if err := k.CheckResume(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("CheckResume of a missing directory: no error")
	}
}

// TestRemoveTemps: a resumed run removes the temporary files that a
// killed process left (".train.png.tmp123"), and nothing else.
func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"train.png", ".train.png.tmp123", ".config.json.tmp9", ".notes.tmp1", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	d, err := OpenOutDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.RemoveTemps(RunKind{Command: KindTrain, Files: []string{"train.png", "config.json"}}); err != nil {
		t.Fatal(err)
	}
	left := slices.DeleteFunc(dirNames(t, dir), func(n string) bool { return n == LockFile })
	if want := []string{".notes.tmp1", "notes.txt", "train.png"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}
