package cli_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/cli"
	"github.com/spf13/pflag"
)

func ExampleParse() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	flagFile := filepath.Join(dir, "run.flags")
	os.WriteFile(flagFile, []byte(`# experiment settings
--steps=1000
--lr 0.01
out = samples.csv  # relative to where the command runs
--verbose
`), 0o644)

	fs := pflag.NewFlagSet("train", pflag.ContinueOnError)
	steps := fs.Int("steps", 100, "number of steps")
	lr := fs.Float64("lr", 0.1, "learning rate")
	out := fs.String("out", "out.csv", "output file")
	verbose := fs.Bool("verbose", false, "verbose output")

	// --steps on the command line wins over the flag file, though it comes first.
	if err := cli.Parse(fs, []string{"--steps=50", "--flagfile", flagFile}); err != nil {
		cli.Exit("train", err)
	}
	fmt.Println(*steps, *lr, *out, *verbose)
	fmt.Println(cli.Resolved(fs)["steps"], cli.Resolved(fs)["lr"])
	// Output:
	// 50 0.01 samples.csv true
	// 50 0.01
}
