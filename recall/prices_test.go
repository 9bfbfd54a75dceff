package recall_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/doccheck"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/provider"
)

func TestPrices(t *testing.T) {
	t.Parallel()
	p := recall.DefaultPrices()
	if v, err := p.PerMinute("openai", "whisper-1"); err != nil || v != 6000 {
		t.Fatalf("whisper-1: %d, %v; want $0.006 a minute", v, err)
	}
	if _, err := p.PerMinute("openai", "no-such-model"); err == nil || !strings.Contains(err.Error(), "whisper-1") {
		t.Fatalf("an unknown model: %v; want an error listing the known ones", err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "prices.json")
	os.WriteFile(good, []byte(`{"openai/whisper-1": "0.004", "groq/whisper-large-v3": "0.00185"}`), 0o644)
	q, err := recall.LoadPrices(good)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := q.PerMinute("openai", "whisper-1"); v != 4000 {
		t.Errorf("overridden whisper-1: %d", v)
	}
	if v, _ := q.PerMinute("groq", "whisper-large-v3"); v != 1850 {
		t.Errorf("added groq model: %d", v)
	}
	if v, _ := q.PerMinute("openai", "gpt-4o-mini-transcribe"); v != 3000 {
		t.Errorf("a default not in the file: %d", v)
	}
	rounded := filepath.Join(dir, "rounded.json")
	os.WriteFile(rounded, []byte(`{"openai/whisper-large-v3": {"per_minute": "0.00185", "minimum_s": 10}, "openai/whisper-1": {"per_minute": "0.006", "increment_s": 15}}`), 0o644)
	r, err := recall.LoadPrices(rounded)
	if err != nil {
		t.Fatal(err)
	}
	if pr, err := r.Pricing("openai", "whisper-large-v3"); err != nil || pr.PerMinute != 1850 || pr.Billing.Cost(2*time.Second, pr.PerMinute) != 309 {
		t.Errorf("a model with a minimum of 10 s: %+v, %v; want 2 s billed as 10 s, 309 micro-dollars", pr, err)
	}
	if pr, _ := r.Pricing("openai", "whisper-1"); pr.Billing.Cost(16*time.Second, pr.PerMinute) != 3000 {
		t.Errorf("a model billed per 15 s: %+v", pr)
	}
	if pr, _ := r.Pricing("openai", "gpt-4o-transcribe"); pr.Billing != recall.BillingOf("openai") {
		t.Errorf("a model the file does not round: %+v", pr)
	}
	options := filepath.Join(dir, "options.json")
	os.WriteFile(options, []byte(`{"groq/whisper-large-v3": {"options": {"vocabulary": "0.0005"}}, "assemblyai/universal-2": {"per_minute": "0.0025", "options": {"speakers": "0.0003", "prompt": "0.0001"}}}`), 0o644)
	o, err := recall.LoadPrices(options)
	if err != nil {
		t.Fatal(err)
	}
	if pr, err := o.For(provider.Options{Name: "groq", Model: "whisper-large-v3", Hints: provider.Hints{Vocabulary: []string{"Rubicon"}}}); err != nil || pr.PerMinute != 1850 ||
		pr.Billing != recall.BillingOf("groq") || len(pr.Options) != 1 || pr.Options[0].PerMinute != 500 || pr.Cost(2*time.Second) != 309+84 {
		t.Errorf("options alone keep the model's price and rounding: %+v, %v; want 10 s billed at $0.00185 and at $0.0005 a minute", pr, err)
	}
	if pr, _ := o.For(provider.Options{Name: "assemblyai", Model: "universal-2", Speakers: 2}); len(pr.Options) != 1 || pr.Options[0] != (recall.OptionPrice{Option: "speakers", PerMinute: 300}) || pr.Settings != "speakers=2" {
		t.Errorf("speakers on AssemblyAI: %+v; want their price alone, the prompt's not asked for", pr)
	}
	if pr, _ := o.For(provider.Options{Name: "assemblyai", Model: "universal-3-pro", Speakers: provider.SpeakersUnknown}); len(pr.Options) != 0 || pr.Settings != "speakers" {
		t.Errorf("speakers on a model the file does not price them for: %+v", pr)
	}
	for name, content := range map[string]string{
		"an unknown option": `{"openai/whisper-1": {"options": {"diarize": "0.001"}}}`,
		"an option price":   `{"openai/whisper-1": {"options": {"speakers": 0.001}}}`,
		"an unknown field":  `{"openai/whisper-1": {"per_minute": "0.006", "minimum": 10}}`,
		"a zero increment":  `{"openai/whisper-1": {"per_minute": "0.006", "increment_s": 0}}`,
		"not json":          `whisper-1 = 0.006`,
		"no slash":          `{"whisper-1": "0.006"}`,
		"a float":           `{"openai/whisper-1": 0.006}`,
		"too precise":       `{"openai/whisper-1": "0.0000001"}`,
		"negative":          `{"openai/whisper-1": "-1"}`,
	} {
		bad := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		os.WriteFile(bad, []byte(content), 0o644)
		if _, err := recall.LoadPrices(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v; want an error naming the file", name, err)
		}
	}
	if _, err := recall.LoadPrices(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing prices file was accepted")
	}
}

// TestDocsPricesExamples: the prices files the documents show load, and
// each price they write is the one the archive then uses.
func TestDocsPricesExamples(t *testing.T) {
	for _, b := range doccheck.Examples(t, "recall-prices") {
		path := filepath.Join(t.TempDir(), "prices.json")
		if err := os.WriteFile(path, []byte(b.Text), 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := recall.LoadPrices(path)
		if err != nil {
			t.Errorf("%s:%d: the prices file does not load: %v", b.File, b.Line, err)
			continue
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(b.Text), &raw); err != nil {
			t.Fatal(err)
		}
		for key, v := range raw {
			var price struct {
				PerMinute string `json:"per_minute"`
			}
			if json.Unmarshal(v, &price.PerMinute) != nil {
				json.Unmarshal(v, &price)
			}
			if price.PerMinute == "" {
				continue // options alone: tried by TestPrices
			}
			want, _ := ledger.ParseDecimal(price.PerMinute, 6)
			prov, model, _ := strings.Cut(key, "/")
			if got, err := p.PerMinute(prov, model); err != nil || got != want {
				t.Errorf("%s:%d: %s costs %v a minute (%v), want %s", b.File, b.Line, key, got, err, price.PerMinute)
			}
		}
	}
}
