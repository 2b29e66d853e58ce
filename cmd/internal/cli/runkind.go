package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// RunKind describes the runs that a command writes into its output
// directory, so that no command writes over what is not its own run.
//
// A run's ConfigFile names the command that wrote it ("command"); a
// directory whose ConfigFile does not, written before it was recorded, is
// recognised by its shape (see KindOf).
type RunKind struct {
	// Command is the command's name, as ConfigFile records it: "sample",
	// "train".
	Command string
	// Files are the files the command writes into a run's directory.
	Files []string
	// Keep says what to do about the run of the command in dir when it
	// is not replaced, such as "continue it with --resume DIR, or choose
	// another --out".
	Keep func(dir string) string
}

// Run kinds' Command, as KindOf reports them.
const (
	KindSample = "sample"
	KindTrain  = "train"
)

// KindOf returns the command whose run dir holds ("sample", "train"), or
// "" when dir holds no run of ours. The run's ConfigFile names it; a
// ConfigFile without "command" is train's if it records a "training"
// set-up, sample's if it records only "flags"; a directory without a
// ConfigFile holds a sample run if its summary.json names a "sampler" and
// a "task", a training run if its checkpoint.json holds networks ("f_q").
// Any other file, such as a user's own config.json, is not a run's.
func KindOf(dir string) string {
	read := func(name string) map[string]json.RawMessage {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			return nil
		}
		return m
	}
	has := func(m map[string]json.RawMessage, keys ...string) bool {
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				return false
			}
		}
		return m != nil
	}
	if _, err := os.Lstat(filepath.Join(dir, ConfigFile)); err == nil {
		cfg := read(ConfigFile)
		var command string
		switch {
		case has(cfg, "command") && json.Unmarshal(cfg["command"], &command) == nil:
			return command
		case has(cfg, "flags", "training"):
			return KindTrain
		case has(cfg, "flags", "given"):
			return KindSample
		}
		return ""
	}
	if has(read("summary.json"), "sampler", "task") {
		return KindSample
	}
	if has(read("checkpoint.json"), "f_q") {
		return KindTrain
	}
	return ""
}

// Check refuses, before anything is written, an output directory dir that
// a new run of k may not use: one that another process is writing (named
// by its PID); one that holds another command's run, or something else
// than a run (named, with what is there); and one that holds a run of k
// unless force, when that run may be replaced. A directory that does not
// exist, or holds only a lock file or interrupted writes of k's files, is
// fine. OutDir.Replace checks the same once the directory is locked.
func (k RunKind) Check(dir string, force bool) error {
	switch info, err := os.Stat(dir); {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return Usagef("cannot use the output directory %s: %v", dir, pathErr(err))
	case !info.IsDir():
		return Usagef("the output directory %s is a file; choose a directory for --out", dir)
	}
	if h, held := heldBy(filepath.Join(dir, LockFile)); held {
		return fmt.Errorf("%s is in use by another run (%s); wait for it to end, or choose another --out", dir, h)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Usagef("cannot read the output directory %s: %v", dir, pathErr(err))
	}
	_, err = k.sort(dir, entries, force)
	return err
}

// sort sorts the entries of dir into the files of a run of k, which force
// allows to be replaced, or refuses the directory (see Check).
func (k RunKind) sort(dir string, entries []os.DirEntry, force bool) (run []string, err error) {
	var other []string
	for _, e := range entries {
		switch name := e.Name(); {
		case name == LockFile:
		case isRunFile(name, k.Files):
			run = append(run, name)
		default:
			other = append(other, name)
		}
	}
	if len(run) == 0 && len(other) == 0 {
		return nil, nil
	}
	if onlyTemps(run, k.Files) && len(other) == 0 {
		return run, nil // interrupted writes of a run that never got further
	}
	switch kind := KindOf(dir); {
	case kind == "":
		have := append(append([]string(nil), run...), other...)
		slices.Sort(have)
		return nil, Usagef("the output directory %s is not empty and holds no run of this program (it has %s); %s writes only into a new or empty directory, or one of its own runs: choose another --out", dir, listNames(have), k.Command)
	case kind != k.Command:
		return nil, Usagef("%s holds a %s run, not a %s run: %s does not write over it; choose another --out", dir, kind, k.Command, k.Command)
	case !force:
		return nil, Usagef("%s already holds a %s run (%s); %s", dir, k.Command, listNames(run), k.Keep(dir))
	}
	for _, e := range entries {
		if e.IsDir() && slices.Contains(run, e.Name()) {
			return nil, fmt.Errorf("cannot replace the run in %s: %s is a directory; remove it yourself", dir, filepath.Join(dir, e.Name()))
		}
	}
	return run, nil
}

// onlyTemps reports whether every name is a temporary file of an
// interrupted write (see WriteFile) of one of files.
func onlyTemps(names, files []string) bool {
	for _, n := range names {
		if slices.Contains(files, n) {
			return false
		}
	}
	return true
}

// CheckResume refuses to resume dir with k's command while another
// process writes there (named by its PID), and when it holds no run of k:
// the message names what it holds, and the command that continues a run of
// another kind.
func (k RunKind) CheckResume(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return Usagef("cannot resume %s: %v; give --resume the output directory of a %s run", dir, pathErr(err), k.Command)
	}
	if h, held := heldBy(filepath.Join(dir, LockFile)); held {
		return fmt.Errorf("cannot resume %s: it is in use by a run that is still going (%s); wait for it to end", dir, h)
	}
	switch kind := KindOf(dir); {
	case kind == k.Command:
		return nil
	case kind != "":
		return Usagef("cannot resume %s: it holds a %s run, not a %s run; continue it with %s --resume %s", dir, kind, k.Command, kind, dir)
	}
	return Usagef("cannot resume %s: it holds no %s run (no %s naming one); give --resume the output directory of a %s run", dir, k.Command, ConfigFile, k.Command)
}

// RemoveTemps removes the temporary files that interrupted writes of the
// run's files left in the directory (WriteFile's ".NAME.tmp…", left by a
// process that was killed while writing), as a resumed run does first.
func (d *OutDir) RemoveTemps(k RunKind) error {
	entries, err := os.ReadDir(d.Path)
	if err != nil {
		return fmt.Errorf("cannot read the output directory %s: %v", d.Path, pathErr(err))
	}
	for _, e := range entries {
		if name := e.Name(); !slices.Contains(k.Files, name) && isRunFile(name, k.Files) && !e.IsDir() {
			if err := os.Remove(filepath.Join(d.Path, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}
