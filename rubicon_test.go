package rubicon_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon"
)

func TestHelpersSeeThroughWrapping(t *testing.T) {
	ambiguous := &rubicon.Error{Method: "POST", Phase: rubicon.Sent, Outcome: rubicon.Unknown, Attempts: 1}
	safe := &rubicon.Error{Method: "POST", Phase: rubicon.NotSent, Outcome: rubicon.NotApplied, Attempts: 2}
	wrap := func(err error) error { return fmt.Errorf("charge order 7: %w", fmt.Errorf("client: %w", err)) }

	tests := []struct {
		name          string
		err           error
		ambiguous, ok bool
	}{
		{"ambiguous", ambiguous, true, false},
		{"ambiguous wrapped", wrap(ambiguous), true, false},
		{"ambiguous joined", errors.Join(errors.New("other"), ambiguous), true, false},
		{"safe", safe, false, true},
		{"safe wrapped", wrap(safe), false, true},
		{"applied", &rubicon.Error{Outcome: rubicon.Applied}, false, false},
		{"foreign error", errors.New("boom"), false, false},
		{"nil", nil, false, false},
	}
	for _, tt := range tests {
		if got := rubicon.IsAmbiguous(tt.err); got != tt.ambiguous {
			t.Errorf("%s: IsAmbiguous = %v, want %v", tt.name, got, tt.ambiguous)
		}
		if got := rubicon.SafeToRetry(tt.err); got != tt.ok {
			t.Errorf("%s: SafeToRetry = %v, want %v", tt.name, got, tt.ok)
		}
	}
}

func TestErrorMessageAndUnwrap(t *testing.T) {
	err := &rubicon.Error{
		Method: "POST", URL: "https://api.example.com/v1/charges", Phase: rubicon.Sent, Outcome: rubicon.Unknown,
		Attempts: 1, BytesWritten: 412, Reason: "not retried once sent", Err: context.DeadlineExceeded,
	}
	msg := err.Error()
	for _, want := range []string{"POST https://api.example.com/v1/charges", "outcome unknown", "1 attempt ", "sent 412 bytes", "not retried once sent", "deadline exceeded"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is does not reach the cause")
	}
	answered := &rubicon.Error{Method: "GET", URL: "http://h/", Phase: rubicon.Answered, Outcome: rubicon.NotApplied,
		Attempts: 3, StatusCode: 429, RetryAfter: 90 * time.Second}
	if msg := answered.Error(); !strings.Contains(msg, "3 attempts") || !strings.Contains(msg, "429") || !strings.Contains(msg, "1m30s") {
		t.Errorf("answered message %q lacks attempts, status or wait", msg)
	}
}

func TestRedactURLHidesCredentialsAndQueryValues(t *testing.T) {
	u, _ := url.Parse("https://user:hunter2@api.example.com/v1/x?api_key=sk-secret&page=2&flag#frag")
	got := rubicon.RedactURL(u)
	for _, leak := range []string{"user", "hunter2", "sk-secret", "frag", "=2"} {
		if strings.Contains(got, leak) {
			t.Errorf("RedactURL = %q still contains %q", got, leak)
		}
	}
	if want := "https://api.example.com/v1/x?api_key=redacted&page=redacted&flag"; got != want {
		t.Errorf("RedactURL = %q, want %q", got, want)
	}
	if u.User == nil || u.RawQuery == "" {
		t.Errorf("RedactURL modified its argument")
	}
	if rubicon.RedactURL(nil) != "" {
		t.Errorf("RedactURL(nil) is not empty")
	}
}
