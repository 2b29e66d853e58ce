package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LockFile is the name of the lock file that OpenOutDir keeps in an output
// directory while a run writes there.
const LockFile = ".lock"

// OutDir is an output directory locked by this process (see OpenOutDir).
type OutDir struct {
	// Path is the directory as given to OpenOutDir.
	Path    string
	lock    *lock
	created []string // the directories OpenOutDir created, innermost first
}

// OpenOutDir creates the output directory dir if it does not exist and
// locks it, so that no other run writes there at the same time: a second
// process gets an error naming the directory and the process that holds it.
// The lock is a file, LockFile, in dir. The operating system releases it
// when its process ends, however it ends, so a lock left behind by a dead
// process does not block; where the file system cannot lock files, the
// process ID recorded in the file decides whether its holder is still alive.
//
// Call Close when the run ends, also after an error. The caller should
// check what it can before calling OpenOutDir, so that a usage error leaves
// no directory behind; Close removes the directories that OpenOutDir created
// and that are still empty in any case.
func OpenOutDir(dir string) (*OutDir, error) {
	d := &OutDir{Path: dir}
	switch info, err := os.Stat(dir); {
	case errors.Is(err, os.ErrNotExist):
		for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
			if _, err := os.Lstat(p); err == nil || filepath.Dir(p) == p {
				break
			}
			d.created = append(d.created, p)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			d.removeIfCreated()
			return nil, Usagef("cannot create the output directory %s: %v", dir, pathErr(err))
		}
	case err != nil:
		return nil, Usagef("cannot use the output directory %s: %v", dir, pathErr(err))
	case !info.IsDir():
		return nil, Usagef("the output directory %s is a file; choose a directory for --out", dir)
	}
	l, err := acquire(filepath.Join(dir, LockFile))
	if err != nil {
		d.removeIfCreated()
		var held *heldError
		if errors.As(err, &held) {
			return nil, fmt.Errorf("%s is in use by another run (%s); wait for it to end, or choose another --out", dir, held.holder)
		}
		return nil, fmt.Errorf("cannot lock the output directory %s: %v", dir, pathErr(err))
	}
	d.lock = l
	return d, nil
}

// HeldBy reports whether a process other than this one holds the output
// directory dir (OpenOutDir's lock), and which, as "PID 1234 on host":
// whether a run is writing there now. A lock file that its process left
// behind when killed holds nothing.
func HeldBy(dir string) (string, bool) {
	return heldBy(filepath.Join(dir, LockFile))
}

// Close releases the lock and removes the directory if OpenOutDir created
// it and nothing was written there, with the parents it created. Calling it again, or on a nil OutDir,
// does nothing.
func (d *OutDir) Close() error {
	if d == nil || d.lock == nil {
		return nil
	}
	err := d.lock.release()
	d.lock = nil
	d.removeIfCreated()
	return err
}

// removeIfCreated removes the directories that OpenOutDir created, from
// the innermost out, as long as they are empty.
func (d *OutDir) removeIfCreated() {
	for _, p := range d.created {
		if os.Remove(p) != nil { // fails, as it should, unless p is empty
			return
		}
	}
}

// Replace makes the locked directory ready for a new run of k. It refuses
// what Check refuses; with force, it removes the files of the run of k
// found there first, with the temporary files of interrupted writes (see
// WriteFile). Replace removes only k's files, never a directory, and does
// not follow symbolic links: a link is removed as a link. Other entries
// are left where they are.
func (d *OutDir) Replace(k RunKind, force bool) error {
	entries, err := os.ReadDir(d.Path)
	if err != nil {
		return fmt.Errorf("cannot read the output directory %s: %v", d.Path, pathErr(err))
	}
	run, err := k.sort(d.Path, entries, force)
	if err != nil {
		return err
	}
	for _, name := range run {
		p := filepath.Join(d.Path, name)
		if info, err := os.Lstat(p); err == nil && info.IsDir() {
			return fmt.Errorf("cannot replace the run in %s: %s is a directory; remove it yourself", d.Path, p)
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("cannot replace the run in %s: %v", d.Path, err)
		}
	}
	return nil
}

// isRunFile reports whether name is one of files or a temporary file that
// WriteFile leaves when interrupted while writing one of them.
func isRunFile(name string, files []string) bool {
	if slices.Contains(files, name) {
		return true
	}
	for _, f := range files {
		if strings.HasPrefix(name, "."+f+".tmp") {
			return true
		}
	}
	return false
}

// listNames lists up to three names for a message.
func listNames(names []string) string {
	if len(names) > 3 {
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
	}
	return strings.Join(names, ", ")
}

// pathErr returns the bare cause of a *os.PathError, whose path the
// messages give themselves.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// heldError reports a lock held by another process.
type heldError struct {
	holder string // as "PID 1234 on host"
}

func (e *heldError) Error() string { return "locked by " + e.holder }
