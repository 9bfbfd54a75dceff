package retry_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/retry"
)

// The same failure, a connection reset after the request was written, is
// retried for a GET and not for a POST, unless the POST's operation opted
// in.
func ExamplePolicy_Decide() {
	p := retry.MustNew(retry.DefaultConfig())
	start := time.Now()
	for _, c := range []struct {
		method string
		mode   retry.Mode
	}{{"GET", retry.ByMethod}, {"POST", retry.ByMethod}, {"POST", retry.OptedIn}} {
		d := p.Decide(retry.Input{
			Method: c.method, Mode: c.mode, Attempt: 1, Sent: true,
			Start: start, Now: start, Jitter: 0.5,
		})
		fmt.Printf("%s %s: retry=%v (%s)\n", c.method, c.mode, d.Retry, d.Reason)
	}
	// Output:
	// GET by_method: retry=true (safe_method)
	// POST by_method: retry=false (sent_not_idempotent)
	// POST opted_in: retry=true (opted_in)
}

// When the server asks for a wait that does not fit before the deadline,
// the decision stops at once and carries the wait.
func ExamplePolicy_Decide_retryAfter() {
	cfg := retry.DefaultConfig()
	cfg.Deadline = 10 * time.Second
	p := retry.MustNew(cfg)
	start := time.Now()
	d := p.Decide(retry.Input{
		Method: "GET", Attempt: 1, Sent: true, Status: 429,
		Header: http.Header{"Retry-After": {"30"}},
		Start:  start, Now: start.Add(2 * time.Second),
	})
	fmt.Println(d.Retry, d.RetryAfter, d.Reason)
	// Output:
	// false 30s retry_after_too_long
}

func ExampleParseRetryAfter() {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, h := range []http.Header{
		{"Retry-After": {"120"}},
		{"Retry-After": {"Mon, 30 Nov 2026 12:00:45 GMT"}},
		{"Retry-After-Ms": {"250"}},
		{"Retry-After": {"later"}},
	} {
		d, ok := retry.ParseRetryAfter(h, now)
		fmt.Println(d, ok)
	}
	// Output:
	// 2m0s true
	// 45s true
	// 250ms true
	// 0s false
}

// A budget lets a fifth of the calls be retried once the saved-up retries
// are spent.
func ExampleBudget() {
	b, _ := retry.NewBudget(retry.BudgetConfig{Ratio: 0.2, Max: 2})
	now := time.Now()
	granted := 0
	for range 20 {
		b.Call("api.example.com", now)
		if b.Withdraw("api.example.com", now) {
			granted++
		}
	}
	fmt.Println("retries granted for 20 failing calls:", granted)
	// Output:
	// retries granted for 20 failing calls: 5
}

// What an answer proves does not depend on Retry-After: a 429 is a refusal,
// a 503 may have been applied, and a GET has no effect to apply.
func ExampleOutcome() {
	for _, r := range []retry.Result{
		{Method: "POST", Mode: retry.OptedIn, Phase: rubicon.Answered, Status: 429},
		{Method: "POST", Phase: rubicon.Answered, Status: 503},
		{Method: "POST", Phase: rubicon.Answered, Status: 503, NotProcessed: true},
		{Method: "POST", Phase: rubicon.Answered, Status: 303},
		{Method: "GET", Phase: rubicon.Answered, Status: 503},
		{Method: "GET", Mode: retry.NotSentOnly, Phase: rubicon.Answered, Status: 503},
		{Method: "DELETE", Phase: rubicon.Sent},
		{Method: "DELETE", Phase: rubicon.NotSent},
	} {
		fmt.Printf("%s %s %s %d: %s\n", r.Method, r.Mode, r.Phase, r.Status, retry.Outcome(r))
	}
	// Output:
	// POST opted_in answered 429: not_applied
	// POST by_method answered 503: unknown
	// POST by_method answered 503: not_applied
	// POST by_method answered 303: applied
	// GET by_method answered 503: not_applied
	// GET not_sent_only answered 503: unknown
	// DELETE by_method sent 0: unknown
	// DELETE by_method not_sent 0: not_applied
}
