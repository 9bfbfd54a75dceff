package transport_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// post sends a POST of body to url with the given headers through c.
func post(ctx context.Context, c *http.Client, url, body string, header http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// TestResendOfAnAmbiguousCallIsNotSent: once a call's outcome is unknown,
// the same call sent again from above the transport (as an SDK's retry
// loop or the application would) gets the same verdict without reaching
// the wire; a call that differs, or that the caller marks as separate, is
// sent.
func TestResendOfAnAmbiguousCallIsNotSent(t *testing.T) {
	cases := []struct {
		name string
		// second sends the call that follows the ambiguous one.
		second func(ctx context.Context, c *http.Client, url string) (*http.Response, error)
		sent   bool
	}{
		{"same request", func(ctx context.Context, c *http.Client, url string) (*http.Response, error) {
			return post(ctx, c, url+"/v1/charges", `{"amount":100}`, nil)
		}, false},
		{"same request from an SDK's retry", func(ctx context.Context, c *http.Client, url string) (*http.Response, error) {
			return post(ctx, c, url+"/v1/charges", `{"amount":100}`, http.Header{"X-Stainless-Retry-Count": {"1"}})
		}, false},
		{"same body that cannot be read twice", func(ctx context.Context, c *http.Client, url string) (*http.Response, error) {
			req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/charges", io.NopCloser(strings.NewReader(`{"amount":100}`)))
			return c.Do(req)
		}, false},
		{"other body", func(ctx context.Context, c *http.Client, url string) (*http.Response, error) {
			return post(ctx, c, url+"/v1/charges", `{"amount":200}`, nil)
		}, true},
		{"other path", func(ctx context.Context, c *http.Client, url string) (*http.Response, error) {
			return post(ctx, c, url+"/v1/refunds", `{"amount":100}`, nil)
		}, true},
		{"a separate call on purpose", func(ctx context.Context, c *http.Client, url string) (*http.Response, error) {
			return post(transport.NewCall(ctx), c, url+"/v1/charges", `{"amount":100}`, nil)
		}, true},
		{"a read", func(ctx context.Context, c *http.Client, url string) (*http.Response, error) {
			return do(ctx, c, "GET", url+"/v1/charges", 0)
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, faultserver.Do(faultserver.ResetAfterRead))
			c := newClient(t, transport.Options{}, nil)
			_, first := post(context.Background(), c, srv.URL()+"/v1/charges", `{"amount":100}`, nil)
			if !rubicon.IsAmbiguous(first) {
				t.Fatalf("first call: %v, want ambiguous", first)
			}

			_, err := tc.second(context.Background(), c, srv.URL())

			if got := srv.Accepted(); got != map[bool]int{true: 2, false: 1}[tc.sent] {
				t.Fatalf("the server accepted %d connections; sent again: want %v", got, tc.sent)
			}
			if tc.sent {
				if err != nil {
					t.Fatalf("a different call was refused: %v", err)
				}
				return
			}
			var e *rubicon.Error
			if !errors.As(err, &e) || !rubicon.IsAmbiguous(err) || !errors.Is(err, transport.ErrResendRefused) {
				t.Fatalf("re-send: %v; want an ambiguous *rubicon.Error wrapping ErrResendRefused", err)
			}
			if e.Attempts != 1 || e.Phase != rubicon.Sent {
				t.Fatalf("the refusal says %d attempts, phase %s; want the first call's 1, sent", e.Attempts, e.Phase)
			}
		})
	}
}

// TestIdempotencyKeyNamesTheCall: with an idempotency key, the key alone
// says which call a request is.
func TestIdempotencyKeyNamesTheCall(t *testing.T) {
	srv := startServer(t, faultserver.Do(faultserver.CloseAfterRead))
	c := newClient(t, transport.Options{}, nil)
	if _, err := post(context.Background(), c, srv.URL()+"/v1/charges", "a=1", http.Header{"Idempotency-Key": {"k1"}}); !rubicon.IsAmbiguous(err) {
		t.Fatalf("first call: %v, want ambiguous", err)
	}
	// Same key, under another call scope and with another body: still the
	// same call, as Stripe takes it.
	_, err := post(transport.NewCall(context.Background()), c, srv.URL()+"/v1/charges", "a=2", http.Header{"Idempotency-Key": {"k1"}})
	if !errors.Is(err, transport.ErrResendRefused) {
		t.Fatalf("same key: %v, want refused", err)
	}
	if _, err := post(context.Background(), c, srv.URL()+"/v1/charges", "a=1", http.Header{"Idempotency-Key": {"k2"}}); err != nil {
		t.Fatalf("a new key is a new call: %v", err)
	}
	if got := srv.Effects(); got != 2 {
		t.Fatalf("effects = %d, want 2 (the ambiguous call and the new key's)", got)
	}
}

// TestOptedInCallIsNotRefused: an opted-in operation is idempotent on the
// server, so sending it again after its outcome was unknown is allowed.
func TestOptedInCallIsNotRefused(t *testing.T) {
	srv := startServer(t, faultserver.Do(faultserver.ResetAfterRead), faultserver.Do(faultserver.ResetAfterRead))
	c := newClient(t, transport.Options{
		Policy:     fastPolicy(t, func(c *retry.Config) { c.MaxAttempts = 1 }),
		Operations: []transport.Operation{{Pattern: "POST /v1/orders", Mode: retry.OptedIn}},
	}, nil)
	hdr := http.Header{"Idempotency-Key": {"order-7"}}
	if _, err := post(context.Background(), c, srv.URL()+"/v1/orders", "{}", hdr); !rubicon.IsAmbiguous(err) {
		t.Fatalf("first call: %v", err)
	}
	if _, err := post(context.Background(), c, srv.URL()+"/v1/orders", "{}", hdr); errors.Is(err, transport.ErrResendRefused) {
		t.Fatalf("an opted-in call was refused: %v", err)
	}
	if srv.Accepted() != 2 {
		t.Fatalf("connections = %d, want 2", srv.Accepted())
	}
}

// TestResendWindowEnds: the memory of an ambiguous call lasts the window.
func TestResendWindowEnds(t *testing.T) {
	srv := startServer(t, faultserver.Do(faultserver.ResetAfterRead))
	c := newClient(t, transport.Options{ResendWindow: 50 * time.Millisecond}, nil)
	if _, err := post(context.Background(), c, srv.URL()+"/v1/charges", "x", nil); !rubicon.IsAmbiguous(err) {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := post(context.Background(), c, srv.URL()+"/v1/charges", "x", nil); err != nil {
		t.Fatalf("after the window: %v", err)
	}

	off := startServer(t, faultserver.Do(faultserver.ResetAfterRead))
	c = newClient(t, transport.Options{ResendWindow: -1}, nil)
	post(context.Background(), c, off.URL()+"/v1/charges", "x", nil)
	if _, err := post(context.Background(), c, off.URL()+"/v1/charges", "x", nil); err != nil {
		t.Fatalf("with the memory off: %v", err)
	}
}

// TestAmbiguousAnswerTellsSDKsNotToRetry: a 500 or 503 to a POST leaves
// its outcome unknown; the response carries the headers by which vendors
// tell their SDKs not to send it again, and a re-send is refused anyway.
func TestAmbiguousAnswerTellsSDKsNotToRetry(t *testing.T) {
	for _, status := range []int{500, 503} {
		srv := startServer(t, faultserver.Step{Status: status, Header: http.Header{"X-Should-Retry": {"true"}}})
		c := newClient(t, transport.Options{}, nil)
		var rep transport.Report
		resp, err := post(transport.WithReport(context.Background(), &rep), c, srv.URL()+"/v1/charges", "x", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range []string{"X-Should-Retry", "Stripe-Should-Retry"} {
			if got := resp.Header.Get(h); got != "false" {
				t.Fatalf("%d: %s = %q, want false", status, h, got)
			}
		}
		if !rubicon.IsAmbiguous(rep.Err) {
			t.Fatalf("%d: report %+v, want ambiguous", status, rep)
		}
		if _, err := post(context.Background(), c, srv.URL()+"/v1/charges", "x", nil); !errors.Is(err, transport.ErrResendRefused) {
			t.Fatalf("%d: re-send: %v, want refused", status, err)
		}
	}
	// A refusal proves nothing was applied: nothing to hold the SDK back.
	srv := startServer(t, faultserver.Status(429))
	c := newClient(t, transport.Options{}, nil)
	resp, err := post(context.Background(), c, srv.URL()+"/v1/charges", "x", nil)
	if err != nil || resp.Header.Get("X-Should-Retry") != "" {
		t.Fatalf("429: %v, X-Should-Retry %q; want the answer as sent", err, resp.Header.Get("X-Should-Retry"))
	}
}

// TestReportCoversEveryRequestOfTheCall: a report describes the logical
// call, over every request sent under its context.
func TestReportCoversEveryRequestOfTheCall(t *testing.T) {
	t.Run("refused then applied", func(t *testing.T) {
		srv := startServer(t, faultserver.Status(429), faultserver.OK())
		c := newClient(t, transport.Options{}, nil)
		var rep transport.Report
		ctx := transport.WithReport(context.Background(), &rep)
		post(ctx, c, srv.URL()+"/v1/charges", "x", nil)
		post(ctx, c, srv.URL()+"/v1/charges", "x", nil)
		if rep.Outcome != rubicon.Applied || rep.Attempts != 2 || rep.Requests != 2 || rep.Err != nil {
			t.Fatalf("report %+v; want applied after 2 attempts in 2 requests", rep)
		}
	})
	t.Run("ambiguous then re-sent", func(t *testing.T) {
		srv := startServer(t, faultserver.Do(faultserver.ResetAfterRead))
		c := newClient(t, transport.Options{}, nil)
		var rep transport.Report
		ctx := transport.WithReport(context.Background(), &rep)
		post(ctx, c, srv.URL()+"/v1/charges", "x", nil)
		post(ctx, c, srv.URL()+"/v1/charges", "x", nil)
		if rep.Outcome != rubicon.Unknown || rep.Attempts != 1 || rep.Requests != 2 || !rubicon.IsAmbiguous(rep.Err) {
			t.Fatalf("report %+v; want unknown, 1 attempt, 2 requests", rep)
		}
	})
	t.Run("ambiguous then a read", func(t *testing.T) {
		srv := startServer(t, faultserver.Status(502), faultserver.OK())
		c := newClient(t, transport.Options{}, nil)
		var rep transport.Report
		ctx := transport.WithReport(context.Background(), &rep)
		post(ctx, c, srv.URL()+"/v1/charges", "x", nil)
		do(ctx, c, "GET", srv.URL()+"/v1/charges/1", 0)
		if rep.Outcome != rubicon.Unknown || rep.Attempts != 2 || !rubicon.IsAmbiguous(rep.Err) || rep.Err.StatusCode != 502 {
			t.Fatalf("report %+v; want still unknown, the 502's error, 2 attempts", rep)
		}
	})
}

// TestKeyedPOSTKeepsItsConnection: a POST that carries an Idempotency-Key
// without being opted in reuses its kept-alive connection, and still is
// never sent twice when that connection breaks after it was written
// (net/http would resend it by itself, seeing the key).
func TestKeyedPOSTKeepsItsConnection(t *testing.T) {
	keepAlive := faultserver.OK()
	keepAlive.KeepAlive = true
	srv := startServer(t)
	srv.SetDefault(keepAlive)
	c := newClient(t, transport.Options{}, nil)
	for i := range 20 {
		hdr := http.Header{"Idempotency-Key": {"k" + string(rune('a'+i))}}
		if _, err := post(context.Background(), c, srv.URL()+"/v1/charges", strings.Repeat("x", 1024), hdr); err != nil {
			t.Fatal(err)
		}
	}
	if got := srv.Accepted(); got != 1 {
		t.Fatalf("20 keyed POSTs took %d connections, want 1", got)
	}
	for _, r := range srv.Requests() {
		if r.Header.Get("Idempotency-Key") == "" {
			t.Fatalf("a request arrived without its Idempotency-Key: %v", r.Header)
		}
	}

	broken := startServer(t, keepAlive, faultserver.Do(faultserver.CloseAfterRead))
	c = newClient(t, transport.Options{}, nil)
	if _, err := do(context.Background(), c, "GET", broken.URL()+"/warm", 0); err != nil {
		t.Fatal(err)
	}
	_, err := post(context.Background(), c, broken.URL()+"/v1/charges", "x", http.Header{"Idempotency-Key": {"once"}})
	if !rubicon.IsAmbiguous(err) {
		t.Fatalf("keyed POST on a connection that broke after it: %v, want ambiguous", err)
	}
	if got := postsTo(broken, "/v1/charges"); got != 1 {
		t.Fatalf("the server got the POST %d times, want 1", got)
	}
}

// TestClientTimeoutKeepsTheTypedError: http.Client replaces the error of a
// call its Timeout ends by its own; the transport ends the call first, so
// that the caller can still tell that the request may have been applied.
func TestClientTimeoutKeepsTheTypedError(t *testing.T) {
	// A timeout as clients set them, of seconds: the transport ends the
	// call a tenth of it early, which the race detector and a loaded
	// machine must not be able to eat (at 500 ms, 50 ms was, 2 in 20).
	const timeout = 2 * time.Second
	t.Parallel()
	var wg sync.WaitGroup
	for range 20 { // at once, not t.Parallel's two at a time: each waits 2 s
		srv := startServer(t, faultserver.Do(faultserver.Hang))
		c := newClient(t, transport.Options{}, nil)
		c.Timeout = timeout
		wg.Go(func() {
			start := time.Now()
			_, err := post(context.Background(), c, srv.URL()+"/v1/charges", "x", nil)
			if !rubicon.IsAmbiguous(err) {
				t.Errorf("with http.Client.Timeout: %v (%T), want ambiguous", err, err)
			}
			if d := time.Since(start); d > timeout {
				t.Errorf("the call took %s, past the client's timeout of %s", d, timeout)
			}
		})
	}
	wg.Wait()
}

// TestBodyWithoutGetBodyIsStillSent: recognising re-sends must not lose a
// body that can be read once only.
func TestBodyWithoutGetBodyIsStillSent(t *testing.T) {
	srv := startServer(t, faultserver.Do(faultserver.ResetAfterRead))
	c := newClient(t, transport.Options{}, nil)
	post(context.Background(), c, srv.URL()+"/v1/charges", "abc", nil) // remembered
	body := bytes.Repeat([]byte("z"), 100<<10)
	req, _ := http.NewRequest("POST", srv.URL()+"/v1/charges", io.NopCloser(bytes.NewReader(body)))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1]; last.BodyBytes != int64(len(body)) {
		t.Fatalf("the server read %d body bytes, want %d", last.BodyBytes, len(body))
	}
}
