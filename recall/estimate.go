package recall

import (
	"context"
	"time"

	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/store"
)

// Estimate is what a batch costs.
type Estimate struct {
	Batch    string        `json:"batch"`
	Contents int           `json:"contents"`
	Duration time.Duration `json:"duration_ns"`
	Cost     ledger.Amount `json:"cost_micro_usd"`
	// Remaining and RemainingCost leave out the contents already
	// transcribed.
	Remaining     time.Duration `json:"remaining_ns"`
	RemainingCost ledger.Amount `json:"remaining_cost_micro_usd"`
}

// Estimate prices the batch's distinct contents at pricePerMinute
// (micro-dollars), billed per started second of each content.
func (a *Archive) Estimate(ctx context.Context, batch string, pricePerMinute ledger.Amount) (Estimate, error) {
	est := Estimate{Batch: batch}
	if err := a.checkBatch(ctx, batch); err != nil {
		return est, err
	}
	progress, err := a.store.Progress(ctx, batch)
	if err != nil {
		return est, err
	}
	contents, err := a.store.Contents(ctx, batch)
	for _, c := range contents {
		cost := priceOf(c.Duration, pricePerMinute)
		est.Contents++
		est.Duration += c.Duration
		est.Cost += cost
		if progress[c.SHA256] != store.Done {
			est.Remaining += c.Duration
			est.RemainingCost += cost
		}
	}
	return est, err
}
