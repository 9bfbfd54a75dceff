package recall

import (
	"context"
	"encoding/json"
	"time"

	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/media"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/recording"
)

// Pricing is what a batch is priced at: a provider's model, its price and
// how the provider rounds each request.
type Pricing struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// PerMinute in micro-dollars.
	PerMinute ledger.Amount `json:"per_minute_micro_usd"`
	Billing   Billing       `json:"billing"`
	// MaxChunkBytes lowers the provider's size limit per request, as
	// RunOptions.MaxChunkBytes does.
	MaxChunkBytes int64 `json:"-"`
}

// Estimate is what a batch costs with a provider's model.
type Estimate struct {
	Batch string `json:"batch"`
	recording.Transcriber
	Contents int           `json:"contents"`
	Duration time.Duration `json:"-"` // duration_seconds in JSON
	Cost     ledger.Amount `json:"cost_micro_usd"`
	// RemainingContents, Remaining and RemainingCost leave out the
	// contents that the provider's model already transcribed: a run with
	// it transcribes and pays for the others, whoever else transcribed
	// them.
	RemainingContents int           `json:"remaining_contents"`
	Remaining         time.Duration `json:"-"` // remaining_seconds in JSON
	RemainingCost     ledger.Amount `json:"remaining_cost_micro_usd"`
}

// MarshalJSON writes est with its durations in seconds.
func (est Estimate) MarshalJSON() ([]byte, error) {
	type fields Estimate
	return json.Marshal(struct {
		fields
		Duration  float64 `json:"duration_seconds"`
		Remaining float64 `json:"remaining_seconds"`
	}{fields(est), seconds(est.Duration), seconds(est.Remaining)})
}

// Estimate prices the batch's distinct contents as a run with p pays for
// them: each content cut into the chunks the run sends (those it planned,
// or those its audio proxy will give, from the audio's probed length) and
// each chunk billed as the provider rounds it. A budget of the estimate's
// Cost pays for the whole batch.
func (a *Archive) Estimate(ctx context.Context, batch string, p Pricing) (Estimate, error) {
	who := recording.Transcriber{Provider: p.Provider, Model: p.Model}
	est := Estimate{Batch: batch, Transcriber: who}
	if err := a.checkBatch(ctx, batch); err != nil {
		return est, err
	}
	limits, err := provider.LimitsOf(p.Provider, p.Model)
	if err != nil {
		return est, err
	}
	progress, err := a.store.ProgressOf(ctx, batch, who)
	if err != nil {
		return est, err
	}
	contents, err := a.store.Contents(ctx, batch)
	if err != nil {
		return est, err
	}
	for _, c := range contents {
		chunks, err := a.store.Chunks(ctx, c.SHA256, who)
		if err != nil {
			return est, err
		}
		if len(chunks) == 0 && c.Duration > 0 {
			if chunks, err = cut(c.SHA256, media.ProxyFrames(c.Duration), limits, p.MaxChunkBytes); err != nil {
				return est, err
			}
		}
		var cost ledger.Amount
		for _, ch := range chunks {
			cost += p.Billing.Cost(ch.Duration, p.PerMinute)
		}
		est.Contents++
		est.Duration += c.Duration
		est.Cost += cost
		if progress[c.SHA256] != recording.Done {
			est.RemainingContents++
			est.Remaining += c.Duration
			est.RemainingCost += cost
		}
	}
	return est, nil
}
