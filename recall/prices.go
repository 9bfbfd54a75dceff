package recall

import (
	"fmt"
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
		"assemblyai/best":               2500,
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
