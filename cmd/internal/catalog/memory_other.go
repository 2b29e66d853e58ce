//go:build !unix

package catalog

// rlimits: no resource limits are known on this system.
func rlimits() []rlimit { return nil }
