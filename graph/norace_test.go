//go:build !race

package graph

// raceEnabled tells tests that the race detector is on (go test -race):
// it changes what the runtime allocates, so allocation counts mean little.
const raceEnabled = false
