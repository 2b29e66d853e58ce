package main

import (
	"os"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/clitest"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// TestMain runs the tests and names those skipped for want of data.
func TestMain(m *testing.M) { os.Exit(clitest.Main(m, main, datatest.Main)) }
