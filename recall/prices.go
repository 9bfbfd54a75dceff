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
	// options are what a model's options cost on top of its price, per
	// minute, by option (provider.OptionNames).
	options map[string]map[string]ledger.Amount
}

// DefaultPrices are the providers' registered list prices
// (provider.Registration.Prices) at the time of writing; override them
// with a prices file when they change. No option costs anything extra by
// default: a prices file says what a provider bills on top for one.
func DefaultPrices() Prices {
	p := Prices{billing: map[string]Billing{}, perMinute: map[string]ledger.Amount{}, options: map[string]map[string]ledger.Amount{}}
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

// Pricing returns the price and rounding of provider's model, with its
// default settings.
func (p Prices) Pricing(provider, model string) (Pricing, error) {
	perMinute, err := p.PerMinute(provider, model)
	return Pricing{Provider: provider, Model: model, PerMinute: perMinute, Billing: p.Billing(provider, model), Options: []OptionPrice{}}, err
}

// For returns the pricing of what o asks for: its provider's model, with
// o's settings, and the cost of each option they ask for that the prices
// give one.
func (p Prices) For(o provider.Options) (Pricing, error) {
	pr, err := p.Pricing(o.Name, o.Model)
	pr.Settings = o.Settings()
	for _, name := range o.Asked() {
		if v := p.options[o.Name+"/"+o.Model][name]; v > 0 {
			pr.Options = append(pr.Options, OptionPrice{Option: name, PerMinute: v})
		}
	}
	return pr, err
}

// LoadPrices reads a prices file over the defaults. The file is JSON, an
// object from "provider/model" to dollars per minute written as a decimal
// string, so that no price passes through floating point, or to an object
// that also says how each request is rounded, in whole seconds (a model
// billed per started second with a minimum of 10 s, say), and what each
// option costs on top, per minute (without per_minute, the model keeps
// its built-in price):
//
//	{"openai/whisper-1": "0.006",
//	 "openai/whisper-large-v3": {"per_minute": "0.00185", "increment_s": 1, "minimum_s": 10},
//	 "assemblyai/universal-2": {"options": {"speakers": "0.0003"}}}
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
			PerMinute string            `json:"per_minute"`
			Increment *int64            `json:"increment_s"`
			Minimum   int64             `json:"minimum_s"`
			Options   map[string]string `json:"options"`
		}
		if err := json.Unmarshal(v, &price.PerMinute); err != nil {
			dec := json.NewDecoder(strings.NewReader(string(v)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&price); err != nil {
				return Prices{}, fmt.Errorf("prices file %s: %s: %v (dollars per minute, such as \"0.006\", or {\"per_minute\": \"0.006\", \"increment_s\": 1, \"minimum_s\": 10, \"options\": {\"speakers\": \"0.0003\"}})", path, key, err)
			}
			if err := prices.loadOptions(key, price.Options); err != nil {
				return Prices{}, fmt.Errorf("prices file %s: %s: %v", path, key, err)
			}
			if price.PerMinute == "" && price.Options != nil && price.Increment == nil && price.Minimum == 0 {
				continue // the options alone: the model keeps its price and rounding
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

// loadOptions keeps what the options of key (provider/model) cost, from a
// prices file's "options": dollars per minute by option.
func (p Prices) loadOptions(key string, options map[string]string) error {
	for name, v := range options {
		if !slices.Contains(provider.OptionNames, name) {
			return fmt.Errorf("option %q: give one of %s", name, strings.Join(provider.OptionNames, ", "))
		}
		amount, err := ledger.ParseDecimal(v, 6)
		if err != nil {
			return fmt.Errorf("option %s: %v (dollars per minute on top of the model's, such as \"0.0003\")", name, err)
		}
		if p.options[key] == nil {
			p.options[key] = map[string]ledger.Amount{}
		}
		p.options[key][name] = amount
	}
	return nil
}
