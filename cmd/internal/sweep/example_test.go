package sweep_test

import (
	"fmt"
	"strings"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/sweep"
)

// A sweep of two samplers over three seeds: six runs, numbered with the
// seeds outermost, each with its output directory under the runs directory
// and its command line; the runs of a table row differ in their seed.
func Example() {
	s, err := sweep.ParseText("experiments/toy/table.sweep", `
out toy/{sampler}-{seed}
seeds 15-17
axis sampler sghmc=SGHMC --flagfile experiments/gaussian/sghmc.flags
axis sampler nn="NNSGHMC ours" --flagfile experiments/gaussian/nnsghmc.flags
args --steps 3000
table table.md --metric kl --steps 1000,3000
`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Name, s.Len(), "runs")
	for _, r := range s.Runs("runs") {
		fmt.Printf("%d %s [%s] sample %s\n", r.Index, r.Dir, r.Row, strings.Join(r.Args, " "))
	}
	// Output:
	// toy-table 6 runs
	// 0 runs/toy/sghmc-15 [SGHMC] sample --steps 3000 --seed 15 --flagfile experiments/gaussian/sghmc.flags
	// 1 runs/toy/nn-15 [NNSGHMC ours] sample --steps 3000 --seed 15 --flagfile experiments/gaussian/nnsghmc.flags
	// 2 runs/toy/sghmc-16 [SGHMC] sample --steps 3000 --seed 16 --flagfile experiments/gaussian/sghmc.flags
	// 3 runs/toy/nn-16 [NNSGHMC ours] sample --steps 3000 --seed 16 --flagfile experiments/gaussian/nnsghmc.flags
	// 4 runs/toy/sghmc-17 [SGHMC] sample --steps 3000 --seed 17 --flagfile experiments/gaussian/sghmc.flags
	// 5 runs/toy/nn-17 [NNSGHMC ours] sample --steps 3000 --seed 17 --flagfile experiments/gaussian/nnsghmc.flags
}
