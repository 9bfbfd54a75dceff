package recall

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/provider"
)

// Prices are micro-dollars per minute of audio, and how each request is
// rounded, by "provider/model".
type Prices struct {
	perMinute map[string]ledger.Amount
	// billing overrides the provider's rounding for a model.
	billing map[string]Billing
}

// DefaultPrices are the providers' registered list prices
// (provider.Registration.Prices) at the time of writing; override them
// with a prices file when they change.
func DefaultPrices() Prices {
	p := Prices{billing: map[string]Billing{}, perMinute: map[string]ledger.Amount{}}
	for _, r := range provider.Registered() {
		for model, price := range r.Prices {
			p.perMinute[r.Name+"/"+model] = price
		}
	}
	return p
}

// Billing is how a provider rounds the audio of one request before it
// prices it.
type Billing = provider.Billing

// BillingOf returns how provider rounds what it bills, as its
// registration says (per started second for a provider not registered).
func BillingOf(name string) Billing {
	if r, err := provider.Lookup(name); err == nil {
		return r.Billing
	}
	return Billing{Increment: time.Second}
}

// PerMinute returns the price of provider/model.
func (p Prices) PerMinute(name, model string) (ledger.Amount, error) {
	if v, ok := p.perMinute[name+"/"+model]; ok {
		return v, nil
	}
	if r, err := provider.Lookup(name); err == nil && r.AnyModel != nil {
		return *r.AnyModel, nil // a self-hosted server runs any model
	}
	var known []string
	for k := range p.perMinute {
		if strings.HasPrefix(k, name+"/") {
			known = append(known, strings.TrimPrefix(k, name+"/"))
		}
	}
	slices.Sort(known)
	return 0, fmt.Errorf("no price for %s model %q (known: %s); add it to the prices file", name, model, strings.Join(known, ", "))
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
		return Prices{}, fmt.Errorf("prices file: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Prices{}, fmt.Errorf("prices file %s: %v; write an object such as {\"openai/whisper-1\": \"0.006\"}", path, err)
	}
	for key, v := range raw {
		prov, model, ok := strings.Cut(key, "/")
		if !ok || prov == "" || model == "" {
			return Prices{}, fmt.Errorf("prices file %s: key %q: write provider/model", path, key)
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
				return Prices{}, fmt.Errorf("prices file %s: %s: %v (dollars per minute, such as \"0.006\", or {\"per_minute\": \"0.006\", \"increment_s\": 1, \"minimum_s\": 10})", path, key, err)
			}
			b := BillingOf(prov)
			if price.Increment != nil {
				b.Increment = time.Duration(*price.Increment) * time.Second
			}
			b.Minimum = time.Duration(price.Minimum) * time.Second
			if b.Increment <= 0 || b.Minimum < 0 {
				return Prices{}, fmt.Errorf("prices file %s: %s: increment_s must be at least 1 and minimum_s at least 0", path, key)
			}
			prices.billing[key] = b
		}
		amount, err := ledger.ParseDecimal(price.PerMinute, 6)
		if err != nil {
			return Prices{}, fmt.Errorf("prices file %s: %s: %v (dollars per minute, such as \"0.006\")", path, key, err)
		}
		prices.perMinute[key] = amount
	}
	return prices, nil
}
