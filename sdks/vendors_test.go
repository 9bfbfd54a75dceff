package sdks_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/stripe/stripe-go/v85"
)

// settings are how a test configures an SDK: its own retries left at
// their default or turned off, and its per-attempt timeout, if any.
type settings struct {
	noRetries      bool
	attemptTimeout time.Duration
}

// vendor is one SDK, registered once: the paid call it makes, the answers
// its vendor gives, and how to read its errors.
type vendor struct {
	name string
	// path is the paid endpoint's path, under the server's root.
	path string
	// success and failure name the fixtures of a paid answer and of the
	// vendor's error object for a 5xx (testdata/README.md says where they
	// come from).
	success, failure string
	// hasAttemptTimeout says whether the SDK bounds each attempt itself.
	hasAttemptTimeout bool
	// call makes one paid call against the server at base through client.
	call func(ctx context.Context, base string, client *http.Client, s settings) error
	// status returns the HTTP status of err if it is the vendor's error.
	status func(err error) (int, bool)
}

var vendors = []vendor{
	{
		name: "openai-go", path: "/v1/chat/completions",
		success: "openai-chat-completion.json", failure: "openai-error.json",
		hasAttemptTimeout: true,
		call: func(ctx context.Context, base string, client *http.Client, s settings) error {
			opts := []ooption.RequestOption{ooption.WithBaseURL(base + "/v1/"), ooption.WithAPIKey("sk-test"), ooption.WithHTTPClient(client)}
			if s.noRetries {
				opts = append(opts, ooption.WithMaxRetries(0))
			}
			if s.attemptTimeout > 0 {
				opts = append(opts, ooption.WithRequestTimeout(s.attemptTimeout))
			}
			c := openai.NewClient(opts...)
			_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model:    "gpt-4o-mini",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say test.")},
			})
			return err
		},
		status: func(err error) (int, bool) {
			var e *openai.Error
			if errors.As(err, &e) {
				return e.StatusCode, true
			}
			return 0, false
		},
	},
	{
		name: "anthropic-sdk-go", path: "/v1/messages",
		success: "anthropic-message.json", failure: "anthropic-error.json",
		hasAttemptTimeout: true,
		call: func(ctx context.Context, base string, client *http.Client, s settings) error {
			opts := []aoption.RequestOption{aoption.WithBaseURL(base + "/"), aoption.WithAPIKey("sk-ant-test"), aoption.WithHTTPClient(client)}
			if s.noRetries {
				opts = append(opts, aoption.WithMaxRetries(0))
			}
			if s.attemptTimeout > 0 {
				opts = append(opts, aoption.WithRequestTimeout(s.attemptTimeout))
			}
			c := anthropic.NewClient(opts...)
			_, err := c.Messages.New(ctx, anthropic.MessageNewParams{
				Model:     "claude-sonnet-4-5",
				MaxTokens: 16,
				Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say test."))},
			})
			return err
		},
		status: func(err error) (int, bool) {
			var e *anthropic.Error
			if errors.As(err, &e) {
				return e.StatusCode, true
			}
			return 0, false
		},
	},
	{
		name: "stripe-go", path: "/v1/payment_intents",
		success: "stripe-payment-intent.json", failure: "stripe-error.json",
		call: func(ctx context.Context, base string, client *http.Client, s settings) error {
			cfg := &stripe.BackendConfig{
				HTTPClient:    client,
				URL:           stripe.String(base),
				LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
			}
			if s.noRetries {
				cfg.MaxNetworkRetries = stripe.Int64(0)
			}
			sc := stripe.NewClient("sk_test_123", stripe.WithBackends(stripe.NewBackendsWithConfig(cfg)))
			_, err := sc.V1PaymentIntents.Create(ctx, &stripe.PaymentIntentCreateParams{Amount: stripe.Int64(2000), Currency: stripe.String("usd")})
			return err
		},
		status: func(err error) (int, bool) {
			var e *stripe.Error
			if errors.As(err, &e) {
				return e.HTTPStatusCode, true
			}
			return 0, false
		},
	},
}

// fixture returns the contents of testdata/name.
func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
