//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package cli

import "os"

// platformTryLock reports that this platform has no file locks: the lock
// file's process ID decides.
func platformTryLock(*os.File) error { return errNoLocks }

// processAlive reports whether a process with this ID exists, as far as
// os.FindProcess can tell.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
