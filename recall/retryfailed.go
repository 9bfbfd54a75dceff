package recall

import (
	"context"

	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall/recording"
)

// RetryReport says what RetryFailed moved and what it left.
type RetryReport struct {
	Batch string `json:"batch"`
	// Items counts files that failed before payment and go back to the
	// queue; Requests counts chunk requests proven not applied.
	Items    int           `json:"items"`
	Requests int           `json:"requests"`
	Left     []output.Left `json:"left"`
}

// RetryFailed puts back in the queue every failure of batch known to be
// before the paid boundary: files whose probing, reading or proxy failed,
// and requests that were not sent or that the provider refused without
// charging. It never touches an ambiguous request; those it reports, with
// why, among the ones it left.
func (a *Archive) RetryFailed(ctx context.Context, batch string) (RetryReport, error) {
	rep := RetryReport{Batch: batch, Left: []output.Left{}}
	if err := a.checkBatch(ctx, batch); err != nil {
		return rep, err
	}
	items, err := a.retryFiles(ctx, batch)
	if err != nil {
		return rep, err
	}
	rep.Items = items
	// Requests: the journal moves only what provably had no effect.
	r, err := a.store.RetrySafe(ctx, batch, "retry-failed --safe-only")
	if err != nil {
		return rep, err
	}
	rep.Requests = len(r.Moved)
	for _, l := range r.Left {
		if l.State == journal.Ambiguous || l.State == journal.Sending {
			rep.Left = append(rep.Left, output.FromLeft(l))
		}
	}
	return rep, nil
}

// retryFiles queues the batch's failed files again: those whose proxy
// failed as they are, the others after probing and hashing them again, as
// add does. It returns how many it queued.
func (a *Archive) retryFiles(ctx context.Context, batch string) (int, error) {
	failed, err := a.store.Files(ctx, batch, recording.Failed)
	if err != nil {
		return 0, err
	}
	var again []string
	for _, f := range failed {
		if f.Phase != "proxy" {
			again = append(again, f.Display())
		}
	}
	n, err := a.store.Requeue(ctx, batch, "proxy")
	if err != nil || len(again) == 0 {
		return n, err
	}
	add, err := a.Add(ctx, batch, again, AddOptions{})
	return n + add.Added + add.Unchanged, err
}
