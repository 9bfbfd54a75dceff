package recall

import (
	"context"
	"time"

	"github.com/rubicon-go/rubicon/ledger"
)

// BatchSummary is one batch as the list of batches shows it.
type BatchSummary struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	// Files counts the batch's files, Items the same by state (added,
	// failed, rejected).
	Files int            `json:"files"`
	Items map[string]int `json:"items"`
	// Transcription counts the distinct recordings by how far they got,
	// as [Status] does.
	Transcription map[string]int `json:"transcription"`
	// Spent is the real money paid, Play the sandbox's play money.
	Spent ledger.Amount `json:"spent_micro_usd"`
	Play  ledger.Amount `json:"sandbox_play_money_spent_micro_usd"`
}

// Batches lists the archive's batches, by name.
func (a *Archive) Batches(ctx context.Context) ([]BatchSummary, error) {
	bs, err := a.store.Batches(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]BatchSummary, 0, len(bs))
	for _, b := range bs {
		st, err := a.Status(ctx, b.Name)
		if err != nil {
			return nil, err
		}
		s := BatchSummary{Name: b.Name, Created: b.Created.UTC(), Items: st.Items, Transcription: st.Transcription,
			Spent: st.Money.Spent, Play: st.Money.Play.Spent}
		for _, n := range st.Items {
			s.Files += n
		}
		out = append(out, s)
	}
	return out, nil
}

// BatchNames lists the names of the archive's batches, for the shell to
// complete.
func (a *Archive) BatchNames(ctx context.Context) ([]string, error) {
	bs, err := a.store.Batches(ctx)
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.Name
	}
	return names, err
}
