package main

import (
	"fmt"

	"github.com/metasgmcmc/metasgmcmc/train"
)

// epochLine describes the epoch just completed for a log line, as "epoch
// 3/40, cross-chain energy 12.34".
func epochLine(tr *train.Trainer, cfg train.Config) string {
	s := fmt.Sprintf("epoch %d/%d", tr.Epochs(), cfg.Epochs)
	if rows := tr.Rows(); len(rows) > 0 {
		r := rows[len(rows)-1]
		s += fmt.Sprintf(", %s energy %.4g", r.Loss, r.Energy)
	}
	return s
}
