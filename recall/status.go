package recall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/recording"
)

// ErrNoBatch reports a batch name that was never added to.
var ErrNoBatch = errors.New("no such batch")

// checkBatch returns an error wrapping ErrNoBatch unless batch was added
// to.
func (a *Archive) checkBatch(ctx context.Context, batch string) error {
	ok, err := a.store.HasBatch(ctx, batch)
	if err == nil && !ok {
		err = fmt.Errorf("%w %q: add files to it first", ErrNoBatch, batch)
	}
	return err
}

// Status describes a batch.
type Status struct {
	Batch string `json:"batch"`
	// Items counts the batch's files by state.
	Items map[string]int `json:"items"`
	// Contents counts the distinct contents among the added files.
	Contents int `json:"contents"`
	// Duration and Bytes total the distinct contents; in JSON, the
	// duration is duration_seconds.
	Duration time.Duration `json:"-"`
	Bytes    int64         `json:"bytes"`
	// Transcription counts the distinct contents by how far they got:
	// done, ambiguous, failed, refused_by_budget, sending, waiting.
	Transcription map[string]int `json:"transcription"`
	// Languages counts the recordings by the languages their transcripts
	// are in, detected or asked for (store.Languages); the sandbox's
	// placeholders are left out.
	Languages map[string]int `json:"languages"`
	// Money is where the batch's budget stands.
	Money Money `json:"money"`
	// Problems lists the files that failed or were rejected.
	Problems []Problem `json:"problems"`
}

// MarshalJSON writes st with its duration in seconds.
func (st Status) MarshalJSON() ([]byte, error) {
	type fields Status
	return json.Marshal(struct {
		fields
		Duration float64 `json:"duration_seconds"`
	}{fields(st), seconds(st.Duration)})
}

// Status reports on batch.
func (a *Archive) Status(ctx context.Context, batch string) (Status, error) {
	st := Status{Batch: batch, Items: map[string]int{recording.Added: 0, recording.Failed: 0, recording.Rejected: 0}, Problems: []Problem{}}
	if err := a.checkBatch(ctx, batch); err != nil {
		return st, err
	}
	counts, err := a.store.FileCounts(ctx, batch)
	if err != nil {
		return st, err
	}
	for state, n := range counts {
		st.Items[state] = n
	}
	contents, err := a.store.Contents(ctx, batch)
	if err != nil {
		return st, err
	}
	for _, c := range contents {
		st.Contents++
		st.Duration += c.Duration
		st.Bytes += c.Size
	}
	if st.Problems, err = a.problems(ctx, batch); err != nil {
		return st, err
	}
	progress, err := a.store.Progress(ctx, batch)
	if err != nil {
		return st, err
	}
	st.Transcription = map[string]int{string(recording.Done): 0, string(recording.Ambiguous): 0, string(recording.FailedSafely): 0, string(recording.RefusedByBudget): 0, string(recording.Waiting): 0, string(recording.Sending): 0}
	for _, p := range progress {
		st.Transcription[string(p)]++
	}
	if st.Languages, err = a.store.Languages(ctx, batch); err != nil {
		return st, err
	}
	st.Money, err = a.Money(ctx, batch)
	return st, err
}

// earlier lists the batch's files that failed, but for those of shown.
func (a *Archive) earlier(ctx context.Context, batch string, shown []Problem) ([]Problem, error) {
	files, err := a.store.Files(ctx, batch, recording.Failed)
	seen := map[string]bool{}
	for _, p := range shown {
		seen[p.Path] = true
	}
	out := []Problem{}
	for _, f := range files {
		if !seen[f.Display()] {
			out = append(out, Problem{Path: f.Display(), State: f.State, Phase: f.Phase, Error: f.Error})
		}
	}
	return out, err
}

// problems lists the batch's files that failed or were rejected, by path.
func (a *Archive) problems(ctx context.Context, batch string) ([]Problem, error) {
	files, err := a.store.Files(ctx, batch, recording.Failed, recording.Rejected)
	out := make([]Problem, 0, len(files))
	for _, f := range files {
		out = append(out, Problem{Path: f.Display(), State: f.State, Phase: f.Phase, Error: f.Error})
	}
	return out, err
}

// Money is where a batch's budget stands, in micro-dollars.
type Money struct {
	// Budget is the batch's cap, 0 when it has none.
	Budget ledger.Amount `json:"budget_micro_usd"`
	// Held is reserved by requests not yet settled, HeldAmbiguous the part
	// of it held by ambiguous requests, which may have been charged.
	Held          ledger.Amount `json:"held_micro_usd"`
	HeldAmbiguous ledger.Amount `json:"held_ambiguous_micro_usd"`
	// Spent is what applied requests cost.
	Spent ledger.Amount `json:"spent_micro_usd"`
	// Play is the sandbox's play money, held and charged: it counts in none
	// of the above, nor against the budget.
	Play PlayMoney `json:"sandbox_play_money"`
	// Providers are the money paid and held per provider, the sandbox's
	// (Play) among them.
	Providers []ProviderMoney `json:"providers"`
}

// PlayMoney is what the sandbox held and charged: nothing was paid.
type PlayMoney struct {
	Held ledger.Amount `json:"held_micro_usd"`
	// HeldAmbiguous is the part of Held that ambiguous requests hold.
	HeldAmbiguous ledger.Amount `json:"held_ambiguous_micro_usd"`
	Spent         ledger.Amount `json:"spent_micro_usd"`
}

// ProviderMoney is the money one provider was paid and is held for.
type ProviderMoney struct {
	Provider string        `json:"provider"`
	Play     bool          `json:"play_money"`
	Held     ledger.Amount `json:"held_micro_usd"`
	Spent    ledger.Amount `json:"spent_micro_usd"`
}

// Money returns the batch's budget, held and spent amounts, real money
// alone, with the sandbox's play money apart.
func (a *Archive) Money(ctx context.Context, batch string) (Money, error) {
	m, err := a.store.Money(ctx, batch)
	out := Money{Budget: m.Budget, Held: m.Held, HeldAmbiguous: m.HeldAmbiguous, Spent: m.Spent,
		Play: PlayMoney(m.Play), Providers: []ProviderMoney{}}
	for _, p := range m.Providers {
		out.Providers = append(out.Providers, ProviderMoney(p))
	}
	return out, err
}

// Operations returns the journal operations of the batch's chunks, by key.
func (a *Archive) Operations(ctx context.Context, batch string) ([]journal.Operation, error) {
	return a.store.Operations(ctx, batch)
}
