package recall

import (
	"context"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
)

// AmbiguousItem is a request whose outcome is unknown, with what is known.
type AmbiguousItem struct {
	Key   string   `json:"key"`
	Paths []string `json:"paths"`
	// SentAt is when the request was committed as sent.
	SentAt   time.Time        `json:"sent_at"`
	Attempt  int              `json:"attempt"`
	Detail   string           `json:"detail"`
	Evidence journal.Evidence `json:"evidence"`
	Held     ledger.Amount    `json:"held_micro_usd"`
}

// Ambiguous lists the ambiguous requests of batch, or of every batch when
// batch is empty.
func (a *Archive) Ambiguous(ctx context.Context, batch string) ([]AmbiguousItem, error) {
	reqs, err := a.store.Ambiguous(ctx, batch)
	if err != nil {
		return nil, err
	}
	out := make([]AmbiguousItem, 0, len(reqs))
	for _, r := range reqs {
		out = append(out, AmbiguousItem{Key: r.Key, Paths: r.Paths, SentAt: r.SentAt, Attempt: r.Attempts,
			Detail: r.LastError, Evidence: r.Evidence, Held: r.Held})
	}
	return out, nil
}
