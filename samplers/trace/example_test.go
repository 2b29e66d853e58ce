package trace_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/metasgmcmc/metasgmcmc/samplers/trace"
)

// A stream of two chains in three dimensions, of which coordinates 0 and
// 2 are traced, with the sample stat lp: written draw by draw, then read
// back.
func Example() {
	dir, _ := os.MkdirTemp("", "trace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "trace.bin")

	w, err := trace.Create(path, trace.Header{Chains: 2, Dim: 3, Coords: []int{0, 2},
		Stats: []trace.Stat{{Name: "lp", Doc: "log density"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for step := 1; step <= 2; step++ {
		// θ coordinate-major, as samplers.State.Theta: coordinate i of
		// chain k at i·2 + k
		theta := []float64{1, -1, 2, -2, 3, -3}
		for i := range theta {
			theta[i] *= float64(step)
		}
		if err := w.Write(step, theta, []float64{-0.5, -1.5}); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := w.Close(); err != nil { // also after an error: keeps the draws so far
		fmt.Println(err)
		return
	}

	r, err := trace.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	fmt.Println(r.Draws(), "draws of coordinates", r.Header().Coords)
	var d trace.Draw
	for r.Next(&d) != io.EOF {
		fmt.Println("step", d.Step, "θ (chain-major)", d.Theta, "lp", d.Stats)
	}
	// Output:
	// 2 draws of coordinates [0 2]
	// step 1 θ (chain-major) [1 3 -1 -3] lp [-0.5 -1.5]
	// step 2 θ (chain-major) [2 6 -2 -6] lp [-0.5 -1.5]
}
