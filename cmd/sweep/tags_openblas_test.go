//go:build openblas

package main

// The binaries the tests run are built with OpenBLAS too (go test -tags
// openblas).
func init() { buildFlags = append(buildFlags, "-tags", "openblas") }
