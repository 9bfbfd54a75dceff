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

// sandbox is recall-archive's built-in sandbox: OpenAI-compatible, and it
// can be asked about a request by its tag.
type sandbox struct {
	openAI
}

// lookup asks GET /v1/sandbox/charges?tag=KEY, which answers every charge
// with the tag at once.
func (s *sandbox) lookup(ctx context.Context, reads *http.Client, key string, _ journal.Evidence) (Found, error) {
	unproven := func(reason string) error {
		return &UnprovenError{Provider: "sandbox", Reason: reason, Check: "the sandbox's charges at " + s.baseURL + "/v1/sandbox/charges"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(s.baseURL, "/")+"/v1/sandbox/charges?tag="+url.QueryEscape(key), nil)
	if err != nil {
		return Found{}, err
	}
	resp, err := reads.Do(req)
	if err != nil {
		return Found{}, unproven(err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Found{}, unproven(fmt.Sprintf("the look-up was answered %d", resp.StatusCode))
	}
	var out struct {
		Charges *[]struct {
			RequestID  string          `json:"request_id"`
			Amount     ledger.Amount   `json:"amount_micro_usd"`
			Transcript json.RawMessage `json:"transcript"`
		} `json:"charges"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Charges == nil {
		return Found{}, unproven("the answer is not a list of charges")
	}
	if len(*out.Charges) == 0 {
		return Found{}, nil
	}
	c := (*out.Charges)[0]
	f := Found{Charged: true, RequestID: c.RequestID, Cost: c.Amount}
	if t, err := ParseVerboseJSON(c.Transcript); err == nil {
		t.RequestID = c.RequestID
		f.Transcript = &t
	}
	return f, nil
}
