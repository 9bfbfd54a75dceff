package recall

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/rubicon-go/rubicon/ledger"
)

// Prices are micro-dollars per minute of audio, by "provider/model".
type Prices map[string]ledger.Amount

// DefaultPrices are list prices at the time of writing; override them
// with a prices file when they change.
func DefaultPrices() Prices {
	return Prices{
		"openai/whisper-1":              6000,
		"openai/gpt-4o-transcribe":      6000,
		"openai/gpt-4o-mini-transcribe": 3000,
		"sandbox/whisper-1":             6000,
		"deepgram/nova-3":               4300,
		"deepgram/nova-2":               4300,
		"assemblyai/best":               6170,
		"assemblyai/nano":               2000,
	}
}

// PerMinute returns the price of provider/model.
func (p Prices) PerMinute(provider, model string) (ledger.Amount, error) {
	if v, ok := p[provider+"/"+model]; ok {
		return v, nil
	}
	var known []string
	for k := range p {
		if strings.HasPrefix(k, provider+"/") {
			known = append(known, strings.TrimPrefix(k, provider+"/"))
		}
	}
	return 0, fmt.Errorf("recall: no price for %s model %q (known: %s); add it to the prices file", provider, model, strings.Join(known, ", "))
}

// LoadPrices reads a prices file over the defaults. The file is JSON, an
// object from "provider/model" to dollars per minute written as a decimal
// string, so that no price passes through floating point:
//
//	{"openai/whisper-1": "0.006", "openai/my-model": "0.0045"}
func LoadPrices(path string) (Prices, error) {
	prices := DefaultPrices()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("recall: prices file: %w", err)
	}
	var raw map[string]string
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("recall: prices file %s: %v; write an object such as {\"openai/whisper-1\": \"0.006\"}", path, err)
	}
	for key, v := range raw {
		prov, model, ok := strings.Cut(key, "/")
		if !ok || prov == "" || model == "" {
			return nil, fmt.Errorf("recall: prices file %s: key %q: write provider/model", path, key)
		}
		amount, err := ledger.ParseDecimal(v, 6)
		if err != nil {
			return nil, fmt.Errorf("recall: prices file %s: %s: %v (dollars per minute, such as \"0.006\")", path, key, err)
		}
		prices[key] = amount
	}
	return prices, nil
}
