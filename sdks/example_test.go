package sdks_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/stripe/stripe-go/v85"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// lostAnswer starts a stand-in for an API that reads the first request
// and loses its answer, then answers every later one with body.
func lostAnswer(body string) *faultserver.Server {
	srv, err := faultserver.Start(faultserver.Do(faultserver.ResetAfterRead))
	if err != nil {
		panic(err)
	}
	srv.SetDefault(faultserver.Step{Header: http.Header{"Content-Type": {"application/json"}}, Body: body})
	return srv
}

// rubiconClient is the HTTP client to give an SDK: rubicon's transport,
// with a deadline over each call that rubicon enforces and reports.
func rubiconClient() *http.Client {
	cfg := retry.DefaultConfig()
	cfg.Deadline = 30 * time.Second
	client, err := transport.NewClient(transport.Options{Policy: retry.MustNew(cfg)})
	if err != nil {
		panic(err)
	}
	return client
}

// openai-go keeps its retries: the one it makes after the lost answer is
// refused by the transport before the wire, and the caller gets rubicon's
// error.
func Example_openai() {
	srv := lostAnswer(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[]}`)
	defer srv.Close()

	client := openai.NewClient(
		ooption.WithBaseURL(srv.URL()+"/v1/"), // the real API's is the default
		ooption.WithAPIKey("sk-test"),
		ooption.WithHTTPClient(rubiconClient()),
	)
	var rep transport.Report
	ctx := transport.WithReport(context.Background(), &rep)
	_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say test.")},
	})

	fmt.Println("may have been applied:", rubicon.IsAmbiguous(err))
	fmt.Println("requests the API processed:", srv.Effects())
	fmt.Println("report:", rep.Outcome, "after", rep.Attempts, "attempt;", rep.Requests, "requests reached the transport")
	// Output:
	// may have been applied: true
	// requests the API processed: 1
	// report: unknown after 1 attempt; 3 requests reached the transport
}

// anthropic-sdk-go with its retries off: the error comes back at once.
func Example_anthropic() {
	srv := lostAnswer(`{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`)
	defer srv.Close()

	client := anthropic.NewClient(
		aoption.WithBaseURL(srv.URL()+"/"),
		aoption.WithAPIKey("sk-ant-test"),
		aoption.WithHTTPClient(rubiconClient()),
		aoption.WithMaxRetries(0),
	)
	_, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 16,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say test."))},
	})

	fmt.Println("may have been applied:", rubicon.IsAmbiguous(err))
	fmt.Println("requests the API processed:", srv.Effects())
	// Output:
	// may have been applied: true
	// requests the API processed: 1
}

// stripe-go puts an Idempotency-Key on every POST and retries with it;
// rubicon recognises the retry by its key. A second payment on purpose is
// a second Create, which stripe-go gives a key of its own.
func Example_stripe() {
	srv := lostAnswer(`{"id":"pi_123","object":"payment_intent","amount":2000,"currency":"usd","status":"requires_payment_method","livemode":false}`)
	defer srv.Close()

	sc := stripe.NewClient("sk_test_123", stripe.WithBackends(stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		HTTPClient:    rubiconClient(),
		URL:           stripe.String(srv.URL()), // the real API's is the default
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})))
	params := &stripe.PaymentIntentCreateParams{Amount: stripe.Int64(2000), Currency: stripe.String("usd")}
	_, err := sc.V1PaymentIntents.Create(context.Background(), params)
	fmt.Println("first payment may have been applied:", rubicon.IsAmbiguous(err))

	// Someone checked the dashboard: no such payment. A new one goes out.
	pi, err := sc.V1PaymentIntents.Create(context.Background(), &stripe.PaymentIntentCreateParams{Amount: stripe.Int64(2000), Currency: stripe.String("usd")})
	fmt.Println("second payment:", pi.ID, err)
	fmt.Println("requests the API processed:", srv.Effects())
	// Output:
	// first payment may have been applied: true
	// second payment: pi_123 <nil>
	// requests the API processed: 2
}
