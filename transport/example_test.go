package transport_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// A POST whose connection breaks after the server read it is not sent
// again: the caller learns that the charge may have been applied.
func ExampleNewClient() {
	srv, _ := faultserver.Start(faultserver.Do(faultserver.ResetAfterRead))
	defer srv.Close()

	client, err := transport.NewClient(transport.Options{})
	if err != nil {
		panic(err)
	}
	_, err = client.Post(srv.URL()+"/v1/charges", "application/json", strings.NewReader(`{"amount":500}`))

	var e *rubicon.Error
	if errors.As(err, &e) {
		fmt.Println("phase:", e.Phase)
		fmt.Println("outcome:", e.Outcome)
		fmt.Println("attempts:", e.Attempts)
	}
	fmt.Println("ambiguous:", rubicon.IsAmbiguous(err))
	fmt.Println("charges received by the server:", srv.Effects())
	// Output:
	// phase: sent
	// outcome: unknown
	// attempts: 1
	// ambiguous: true
	// charges received by the server: 1
}

// An operation that the server makes idempotent opts in, by method and
// path, and is retried with one Idempotency-Key on every attempt.
func ExampleOperation() {
	srv, _ := faultserver.Start(faultserver.Do(faultserver.ResetAfterRead), faultserver.Status(503), faultserver.OK())
	defer srv.Close()

	policy := retry.MustNew(retry.DefaultConfig())
	client, err := transport.NewClient(transport.Options{
		Policy:     policy,
		Operations: []transport.Operation{{Pattern: "POST /v1/orders", Mode: retry.OptedIn}},
	})
	if err != nil {
		panic(err)
	}
	resp, err := client.Post(srv.URL()+"/v1/orders", "application/json", strings.NewReader(`{"sku":"A1"}`))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()

	keys := map[string]bool{}
	for _, r := range srv.Requests() {
		keys[r.Header.Get("Idempotency-Key")] = true
	}
	fmt.Println("status:", resp.StatusCode)
	fmt.Println("attempts:", len(srv.Requests()))
	fmt.Println("distinct idempotency keys:", len(keys))
	// Output:
	// status: 200
	// attempts: 3
	// distinct idempotency keys: 1
}

// A request that never reached the wire is retried whatever its method;
// here every attempt is refused, and the error says the charge was not
// applied.
func ExampleTransport_RoundTrip() {
	srv, _ := faultserver.Start()
	addr := srv.Addr()
	srv.Close() // nothing listens there any more

	tr, err := transport.New(http.DefaultTransport, transport.Options{
		Policy: retry.MustNew(retry.Config{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond}),
	})
	if err != nil {
		panic(err)
	}
	req, _ := http.NewRequestWithContext(context.Background(), "POST", "http://"+addr+"/v1/charges?key=sk_live", strings.NewReader("amount=500"))
	_, err = tr.RoundTrip(req)

	var e *rubicon.Error
	errors.As(err, &e)
	fmt.Println(e.Phase, e.Outcome, e.Attempts, rubicon.SafeToRetry(err))
	fmt.Println(strings.Contains(e.URL, "sk_live"))
	// Output:
	// not_sent not_applied 3 true
	// false
}

// A single call can opt in with a key of its own choosing, such as the key
// of the journal entry that records it.
func ExampleWithIdempotencyKey() {
	srv, _ := faultserver.Start(faultserver.Status(502), faultserver.OK())
	defer srv.Close()

	client, _ := transport.NewClient(transport.Options{})
	ctx := transport.WithIdempotencyKey(context.Background(), "refund-order-7")
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL()+"/v1/refunds", strings.NewReader(`{"order":7}`))
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	for _, r := range srv.Requests() {
		fmt.Println(r.Header.Get("Idempotency-Key"))
	}
	// Output:
	// refund-order-7
	// refund-order-7
}

// A server that asks for a longer wait than the policy takes gets its
// answer returned as it sent it; the report says what the answer proves,
// and how long the server asked to wait.
func ExampleWithReport() {
	srv, _ := faultserver.Start(faultserver.RetryAfter(http.StatusTooManyRequests, 2*time.Minute))
	defer srv.Close()

	client, _ := transport.NewClient(transport.Options{
		Operations: []transport.Operation{{Pattern: "POST /v1/orders", Mode: retry.OptedIn}},
	})
	var rep transport.Report
	ctx := transport.WithReport(context.Background(), &rep)
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL()+"/v1/orders", strings.NewReader(`{"sku":"A1"}`))
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("status:", resp.StatusCode)
	fmt.Println("outcome:", rep.Outcome, "safe to retry:", rubicon.SafeToRetry(rep.Err))
	fmt.Println("the server asked to wait:", rep.Err.RetryAfter)
	// Output:
	// status: 429
	// outcome: not_applied safe to retry: true
	// the server asked to wait: 2m0s
}

// Whoever sends a call again once its outcome is unknown (a retry loop
// above the transport, the application) gets the same verdict, and
// nothing reaches the wire. A second call on purpose goes under a call
// of its own.
func ExampleNewCall() {
	srv, _ := faultserver.Start(faultserver.Do(faultserver.ResetAfterRead))
	defer srv.Close()
	client, err := transport.NewClient(transport.Options{})
	if err != nil {
		panic(err)
	}
	charge := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL()+"/v1/charges", strings.NewReader(`{"amount":500}`))
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}

	first := charge(context.Background())
	again := charge(context.Background())
	fmt.Println("first may have been applied:", rubicon.IsAmbiguous(first))
	fmt.Println("sent again:", !errors.Is(again, transport.ErrResendRefused), "- may have been applied:", rubicon.IsAmbiguous(again))

	// Someone checked: the first charge was never made. A new one, on purpose:
	second := charge(transport.NewCall(context.Background()))
	fmt.Println("separate call:", second)
	fmt.Println("charges received by the server:", srv.Effects())
	// Output:
	// first may have been applied: true
	// sent again: false - may have been applied: true
	// separate call: <nil>
	// charges received by the server: 2
}
