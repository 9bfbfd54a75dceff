package recall

import (
	"context"
	"time"

	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/ledger"
)

// AmbiguousItem is a request whose outcome is unknown, with what is known:
// the operation as both products print it, the batches and files whose
// recording it transcribes, when it was sent and what it holds.
type AmbiguousItem struct {
	output.Operation
	Batches []string `json:"batches"`
	Paths   []string `json:"paths"`
	// SentAt is when the request was committed as sent.
	SentAt time.Time     `json:"sent_at,omitzero"`
	Held   ledger.Amount `json:"held_micro_usd"`
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
		out = append(out, AmbiguousItem{Operation: output.FromOperation(r.Operation), Batches: append([]string{}, r.Batches...),
			Paths: append([]string{}, r.Paths...), SentAt: r.SentAt, Held: r.Held})
	}
	return out, nil
}
