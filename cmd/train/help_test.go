package main

import (
	"context"
	"strings"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/catalog"
	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
)

// TestHelpStartsWithADescription: --help starts with a one-line
// description of the command, then its synopsis and flags, with status 0.
func TestHelpStartsWithADescription(t *testing.T) {
	clitest.CheckHelp(t, "train", func(args []string) error { return run(context.Background(), args) })
}

// TestHelpListsTheTasksItTrainsOn: --task's help names the tasks with a
// meta-training set-up and no other, --validate-every's describes each
// one's validation protocol, and no flag's default is given twice
// ("(default: the task's) (default -1)").
func TestHelpListsTheTasksItTrainsOn(t *testing.T) {
	help, _ := clitest.Stdout(t, func() error { return run(context.Background(), []string{"--help"}) })
	line := ""
	for _, l := range strings.Split(help, "\n") {
		if strings.Contains(l, "--task ") {
			line = l
		}
	}
	for _, name := range catalog.TrainingNames() {
		if !strings.Contains(line, name) {
			t.Errorf("--task's help %q lacks %s", line, name)
		}
	}
	for _, name := range []string{"gaussian20", "mnist-nt", "jsb-gru"} {
		if strings.Contains(line, name) {
			t.Errorf("--task's help %q lists %s, which has no training set-up", line, name)
		}
	}
	flat := strings.Join(strings.Fields(help), " ")
	for _, name := range catalog.TrainingNames() {
		if !strings.Contains(flat, name+": ") {
			t.Errorf("the help does not describe %s's validation protocol", name)
		}
	}
	for _, l := range strings.Split(help, "\n") {
		if _, after, ok := strings.Cut(l, "(default:"); ok && strings.Contains(after, "(default ") {
			t.Errorf("a default given twice: %s", l)
		}
	}
}
