package recall

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/ledger"
)

// Prices are micro-dollars per minute of audio, and how each request is
// rounded, by "provider/model".
type Prices struct {
	perMinute map[string]ledger.Amount
	// billing overrides the provider's rounding for a model.
	billing map[string]Billing
}

// DefaultPrices are list prices at the time of writing; override them
// with a prices file when they change.
func DefaultPrices() Prices {
	return Prices{billing: map[string]Billing{}, perMinute: map[string]ledger.Amount{
		"openai/whisper-1":              6000,
		"openai/gpt-4o-transcribe":      6000,
		"openai/gpt-4o-mini-transcribe": 3000,
		"sandbox/whisper-1":             6000,
		"deepgram/nova-3":               4300,
		"deepgram/nova-2":               4300,
		"assemblyai/best":               6170,
		"assemblyai/nano":               2000,
	}}
}

// Billing is how a provider rounds the audio of one request before it
// prices it.
type Billing struct {
	// Increment: each request is billed per started Increment; 0 is one
	// second.
	Increment time.Duration `json:"-"` // increment_seconds in JSON
	// Minimum: a request shorter than Minimum is billed as Minimum.
	Minimum time.Duration `json:"-"` // minimum_seconds in JSON
}

// MarshalJSON writes b with its durations in seconds.
func (b Billing) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Increment float64 `json:"increment_seconds"`
		Minimum   float64 `json:"minimum_seconds"`
	}{seconds(b.Increment), seconds(b.Minimum)})
}

// billings are the providers' rounding, as their price lists state it:
// every one bills per started second of each request, without a minimum.
var billings = map[string]Billing{
	"sandbox":    {Increment: time.Second},
	"openai":     {Increment: time.Second},
	"deepgram":   {Increment: time.Second},
	"assemblyai": {Increment: time.Second},
}

// BillingOf returns how provider rounds what it bills.
func BillingOf(provider string) Billing {
	if b, ok := billings[provider]; ok {
		return b
	}
	return Billing{Increment: time.Second}
}

// Cost is what one request of d costs at perMinute micro-dollars a
// minute, rounded as b says, and the micro-dollars rounded up.
func (b Billing) Cost(d time.Duration, perMinute ledger.Amount) ledger.Amount {
	inc := b.Increment
	if inc <= 0 {
		inc = time.Second
	}
	d = max(d, b.Minimum)
	billed := (d + inc - 1) / inc * inc
	const perMinuteUs = int64(time.Minute / time.Microsecond)
	return ledger.Amount((billed.Microseconds()*int64(perMinute) + perMinuteUs - 1) / perMinuteUs)
}

// PerMinute returns the price of provider/model.
func (p Prices) PerMinute(provider, model string) (ledger.Amount, error) {
	if v, ok := p.perMinute[provider+"/"+model]; ok {
		return v, nil
	}
	var known []string
	for k := range p.perMinute {
		if strings.HasPrefix(k, provider+"/") {
			known = append(known, strings.TrimPrefix(k, provider+"/"))
		}
	}
	return 0, fmt.Errorf("recall: no price for %s model %q (known: %s); add it to the prices file", provider, model, strings.Join(known, ", "))
}

// Billing returns how provider rounds the requests of model: as the
// prices file says, else as the provider does (BillingOf).
func (p Prices) Billing(provider, model string) Billing {
	if b, ok := p.billing[provider+"/"+model]; ok {
		return b
	}
	return BillingOf(provider)
}

// Pricing returns the price and rounding of provider's model.
func (p Prices) Pricing(provider, model string) (Pricing, error) {
	perMinute, err := p.PerMinute(provider, model)
	return Pricing{Provider: provider, Model: model, PerMinute: perMinute, Billing: p.Billing(provider, model)}, err
}

// LoadPrices reads a prices file over the defaults. The file is JSON, an
// object from "provider/model" to dollars per minute written as a decimal
// string, so that no price passes through floating point, or to an object
// that also says how each request is rounded, in whole seconds (a model
// billed per started second with a minimum of 10 s, say):
//
//	{"openai/whisper-1": "0.006",
//	 "openai/whisper-large-v3": {"per_minute": "0.00185", "increment_s": 1, "minimum_s": 10}}
func LoadPrices(path string) (Prices, error) {
	prices := DefaultPrices()
	data, err := os.ReadFile(path)
	if err != nil {
		return Prices{}, fmt.Errorf("recall: prices file: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Prices{}, fmt.Errorf("recall: prices file %s: %v; write an object such as {\"openai/whisper-1\": \"0.006\"}", path, err)
	}
	for key, v := range raw {
		prov, model, ok := strings.Cut(key, "/")
		if !ok || prov == "" || model == "" {
			return Prices{}, fmt.Errorf("recall: prices file %s: key %q: write provider/model", path, key)
		}
		var price struct {
			PerMinute string `json:"per_minute"`
			Increment *int64 `json:"increment_s"`
			Minimum   int64  `json:"minimum_s"`
		}
		if err := json.Unmarshal(v, &price.PerMinute); err != nil {
			dec := json.NewDecoder(strings.NewReader(string(v)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&price); err != nil {
				return Prices{}, fmt.Errorf("recall: prices file %s: %s: %v (dollars per minute, such as \"0.006\", or {\"per_minute\": \"0.006\", \"increment_s\": 1, \"minimum_s\": 10})", path, key, err)
			}
			b := BillingOf(prov)
			if price.Increment != nil {
				b.Increment = time.Duration(*price.Increment) * time.Second
			}
			b.Minimum = time.Duration(price.Minimum) * time.Second
			if b.Increment <= 0 || b.Minimum < 0 {
				return Prices{}, fmt.Errorf("recall: prices file %s: %s: increment_s must be at least 1 and minimum_s at least 0", path, key)
			}
			prices.billing[key] = b
		}
		amount, err := ledger.ParseDecimal(price.PerMinute, 6)
		if err != nil {
			return Prices{}, fmt.Errorf("recall: prices file %s: %s: %v (dollars per minute, such as \"0.006\")", path, key, err)
		}
		prices.perMinute[key] = amount
	}
	return prices, nil
}
