//go:build unix

package catalog

import "golang.org/x/sys/unix"

// rlimits are the soft limits on the address space (ulimit -v) and the
// data segment (ulimit -d) that are set.
func rlimits() []rlimit {
	var ls []rlimit
	for _, r := range []struct {
		resource int
		source   string
	}{{unix.RLIMIT_AS, "ulimit -v"}, {unix.RLIMIT_DATA, "ulimit -d"}} {
		var l unix.Rlimit
		if err := unix.Getrlimit(r.resource, &l); err == nil && l.Cur != unix.RLIM_INFINITY {
			ls = append(ls, rlimit{bytes: float64(l.Cur), source: r.source})
		}
	}
	return ls
}
