package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
)

// Found is what a provider's records say about one request.
type Found struct {
	Charged   bool
	RequestID string
	Cost      ledger.Amount
	// Transcript is the answer the provider kept, if it keeps them.
	Transcript *Transcript
}

// Lookup is a provider that can be asked whether a request went through,
// given its journal key and the evidence recorded while it was sent.
type Lookup interface {
	Lookup(ctx context.Context, key string, evidence journal.Evidence) (Found, error)
}

// Sandbox is recall-archive's built-in sandbox: OpenAI-compatible, and it
// can be asked about a request by its tag.
type Sandbox struct {
	OpenAI
}

// Name implements Provider.
func (s *Sandbox) Name() string { return "sandbox" }

// Lookup implements Lookup with GET /v1/sandbox/charges?tag=KEY.
func (s *Sandbox) Lookup(ctx context.Context, key string, _ journal.Evidence) (Found, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(s.BaseURL, "/")+"/v1/sandbox/charges?tag="+url.QueryEscape(key), nil)
	if err != nil {
		return Found{}, err
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return Found{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Found{}, fmt.Errorf("sandbox look-up answered %d", resp.StatusCode)
	}
	var out struct {
		Charges []struct {
			RequestID  string          `json:"request_id"`
			Amount     ledger.Amount   `json:"amount_micro_usd"`
			Transcript json.RawMessage `json:"transcript"`
		} `json:"charges"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return Found{}, fmt.Errorf("sandbox look-up: %w", err)
	}
	if len(out.Charges) == 0 {
		return Found{}, nil
	}
	c := out.Charges[0]
	f := Found{Charged: true, RequestID: c.RequestID, Cost: c.Amount}
	if t, err := ParseVerboseJSON(c.Transcript); err == nil {
		t.RequestID = c.RequestID
		f.Transcript = &t
	}
	return f, nil
}

// ParseVerboseJSON reads an OpenAI-style verbose_json transcription.
func ParseVerboseJSON(data []byte) (Transcript, error) {
	var v verboseJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return Transcript{}, err
	}
	t := Transcript{Text: strings.TrimSpace(v.Text), Language: v.Language, Duration: seconds(v.Duration), Segments: make([]Segment, 0, len(v.Segments))}
	for _, s := range v.Segments {
		t.Segments = append(t.Segments, Segment{Start: seconds(s.Start), End: seconds(s.End), Text: strings.TrimSpace(s.Text)})
	}
	if len(t.Segments) == 0 && t.Text != "" {
		t.Segments = append(t.Segments, Segment{End: t.Duration, Text: t.Text})
	}
	return t, nil
}
