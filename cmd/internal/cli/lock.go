package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// lock is a held lock file.
type lock struct {
	path string
	f    *os.File // the locked file
	pid  bool     // held by the process ID alone: the file system has no locks
}

// errNoLocks is returned by tryLock where the file system or platform cannot
// lock files.
var errNoLocks = errors.New("file locks not supported")

// tryLock takes an exclusive lock on f without waiting: it returns
// errWouldBlock if another process holds one, errNoLocks where locks are
// not supported. A variable, so tests can take locks away.
var tryLock = platformTryLock

// errWouldBlock is returned by tryLock when another process holds the lock.
var errWouldBlock = errors.New("lock held")

// acquire locks the file at path, creating it if needed, and records this
// process in it as "PID HOST". The lock is the operating system's, released
// when the process ends; where there is none, a recorded process that is
// still alive on this host holds the lock, and a dead one does not.
func acquire(path string) (*lock, error) {
	host, _ := os.Hostname()
	for try := 0; try < 10; try++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		l := &lock{path: path, f: f}
		switch err := tryLock(f); {
		case errors.Is(err, errWouldBlock):
			holder := readHolder(f)
			f.Close()
			return nil, &heldError{holder: holder.String()}
		case errors.Is(err, errNoLocks):
			if h, held := recordedHolder(f, path, host); held {
				f.Close()
				return nil, &heldError{holder: h}
			}
			l.pid = true
		case err != nil:
			f.Close()
			return nil, err
		default:
			// the holder before us may have removed the file after we
			// opened it: then we locked a file that is no longer there
			fi, err1 := f.Stat()
			pi, err2 := os.Stat(path)
			if err1 != nil || err2 != nil || !os.SameFile(fi, pi) {
				f.Close()
				continue
			}
		}
		if err := writeHolder(f, host); err != nil {
			l.release()
			return nil, err
		}
		return l, nil
	}
	return nil, errors.New("the lock file keeps being replaced by other processes")
}

// recordedHolder reports whether the process recorded in the lock file f
// at path, on a file system without locks, holds it: a process other than
// this one that is alive on this host, or any on another host.
func recordedHolder(f *os.File, path, host string) (string, bool) {
	h := readHolder(f)
	if h.pid > 0 && h.pid != os.Getpid() && (h.host != host || processAlive(h.pid)) {
		return h.String() + ", by its lock file alone; remove " + path + " if that is no run", true
	}
	return "", false
}

// heldBy reports whether another run holds the lock file at path, and
// which ("PID 1234 on host"), without taking the lock.
func heldBy(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close() // releases a lock taken here
	switch err := tryLock(f); {
	case errors.Is(err, errWouldBlock):
		return readHolder(f).String(), true
	case errors.Is(err, errNoLocks):
		host, _ := os.Hostname()
		return recordedHolder(f, path, host)
	}
	return "", false
}

// release removes the lock file and unlocks it. A lock held by process ID
// alone is removed only if it still names this process.
func (l *lock) release() error {
	if l.pid && readHolder(l.f).pid != os.Getpid() {
		return l.f.Close()
	}
	err := os.Remove(l.path)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// holder is the process recorded in a lock file.
type holder struct {
	pid  int // 0 if unknown
	host string
}

// String describes the holder, as "PID 1234 on host".
func (h holder) String() string {
	switch {
	case h.pid <= 0:
		return "process unknown"
	case h.host == "":
		return "PID " + strconv.Itoa(h.pid)
	}
	return fmt.Sprintf("PID %d on %s", h.pid, h.host)
}

// readHolder reads the holder recorded in f.
func readHolder(f *os.File) holder {
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 256))
	if err != nil {
		return holder{}
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return holder{}
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil {
		return holder{}
	}
	return holder{pid: pid, host: strings.Join(fields[1:], " ")}
}

// writeHolder records this process in f.
func writeHolder(f *os.File, host string) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(fmt.Sprintf("%d %s\n", os.Getpid(), host)), 0)
	return err
}
