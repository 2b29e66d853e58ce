package main

import (
	"context"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
)

// TestHelpStartsWithADescription: --help starts with a one-line
// description of the command, then its synopsis and flags, with status 0.
func TestHelpStartsWithADescription(t *testing.T) {
	clitest.CheckHelp(t, "convert", func(args []string) error { return run(context.Background(), args) })
}
