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

// Pricing is what a batch is priced at: a provider's model with its
// settings, its price, what the options the settings ask for cost on top,
// and how the provider rounds each request.
type Pricing struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Settings are the settings priced, in their canonical form
	// (provider.Options.Settings): with the provider and model, the
	// transcript that a run with them makes.
	Settings string `json:"settings,omitempty"`
	// PerMinute in micro-dollars.
	PerMinute ledger.Amount `json:"per_minute_micro_usd"`
	// Options are the options the settings ask for that cost something on
	// top of PerMinute (see Prices.For).
	Options []OptionPrice `json:"options"`
	Billing Billing       `json:"billing"`
	// MaxChunkBytes lowers the provider's size limit per request, as
	// RunOptions.MaxChunkBytes does.
	MaxChunkBytes int64 `json:"-"`
}

// OptionPrice is what an option (provider.OptionNames) costs on top of a
// model's price, in micro-dollars a minute.
type OptionPrice struct {
	Option    string        `json:"option"`
	PerMinute ledger.Amount `json:"per_minute_micro_usd"`
}

// Cost is what one request of d costs: the model's price and each
// option's, each rounded as the provider bills, as a run holds it.
func (p Pricing) Cost(d time.Duration) ledger.Amount {
	cost := p.Billing.Cost(d, p.PerMinute)
	for _, o := range p.Options {
		cost += p.Billing.Cost(d, o.PerMinute)
	}
	return cost
}

// Estimate is what a batch costs with a provider's model.
type Estimate struct {
	Batch string `json:"batch"`
	recording.Transcriber
	Contents int           `json:"contents"`
	Duration time.Duration `json:"-"` // duration_seconds in JSON
	Cost     ledger.Amount `json:"cost_micro_usd"`
	// RemainingContents, Remaining and RemainingCost leave out the
	// contents that the provider's model already transcribed with these
	// settings: retranscribe pays for the others, whoever else
	// transcribed them; a run, for those no one else did (see
	// OtherSettings).
	RemainingContents int           `json:"remaining_contents"`
	Remaining         time.Duration `json:"-"` // remaining_seconds in JSON
	RemainingCost     ledger.Amount `json:"remaining_cost_micro_usd"`
	// Options are what each priced option adds to Cost and RemainingCost.
	Options []OptionCost `json:"options"`
	// OtherSettings counts the remaining contents that another provider,
	// model or settings transcribed (or paid for): a run leaves them,
	// and only retranscribe pays for them.
	OtherSettings int `json:"transcribed_with_other_settings"`
}

// OptionCost is what an option adds to an estimate.
type OptionCost struct {
	OptionPrice
	Cost          ledger.Amount `json:"cost_micro_usd"`
	RemainingCost ledger.Amount `json:"remaining_cost_micro_usd"`
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
// each chunk billed as the provider rounds it, with each option p's
// settings ask for that the prices price on top. A budget of the
// estimate's Cost pays for the whole batch.
func (a *Archive) Estimate(ctx context.Context, batch string, p Pricing) (Estimate, error) {
	who := recording.Transcriber{Provider: p.Provider, Model: p.Model, Settings: p.Settings}
	est := Estimate{Batch: batch, Transcriber: who, Options: make([]OptionCost, len(p.Options))}
	for i, o := range p.Options {
		est.Options[i].OptionPrice = o
	}
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
		options := make([]ledger.Amount, len(p.Options))
		for _, ch := range chunks {
			cost += p.Billing.Cost(ch.Duration, p.PerMinute)
			for i, o := range p.Options {
				c := p.Billing.Cost(ch.Duration, o.PerMinute)
				options[i] += c
				cost += c // as Pricing.Cost adds it
			}
		}
		est.Contents++
		est.Duration += c.Duration
		est.Cost += cost
		for i := range options {
			est.Options[i].Cost += options[i]
		}
		if progress[c.SHA256] == recording.Done {
			continue
		}
		est.RemainingContents++
		est.Remaining += c.Duration
		est.RemainingCost += cost
		for i := range options {
			est.Options[i].RemainingCost += options[i]
		}
		if p.Provider == recording.Sandbox {
			continue // its run is not stopped by another's transcript
		}
		others, err := a.store.Others(ctx, c.SHA256, who)
		if err != nil {
			return est, err
		}
		if len(others) > 0 {
			est.OtherSettings++
		}
	}
	return est, nil
}
