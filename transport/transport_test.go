package transport_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// TestUnsafeMethodsAreNeverRetriedOnceSent is the blocking test: for every
// fault in which the request was written, DELETE, POST, PATCH and PUT reach
// the server once, and a failure without an answer says outcome unknown.
func TestUnsafeMethodsAreNeverRetriedOnceSent(t *testing.T) {
	faults := []faultserver.Step{
		faultserver.Do(faultserver.ResetAfterRead),
		faultserver.Do(faultserver.CloseAfterRead),
		faultserver.Do(faultserver.Hang),
		faultserver.Status(408), faultserver.Status(429), faultserver.Status(500),
		faultserver.Status(502), faultserver.Status(503), faultserver.Status(504),
		faultserver.RetryAfter(503, time.Second),
	}
	for _, method := range []string{"DELETE", "POST", "PATCH", "PUT"} {
		for _, fault := range faults {
			t.Run(method+"/"+fault.String(), func(t *testing.T) {
				t.Parallel()
				srv := startServer(t, fault)
				var rec recorder
				c := newClient(t, transport.Options{Policy: fastPolicy(t, func(c *retry.Config) { c.Deadline = 300 * time.Millisecond })}, &rec)

				resp, err := do(context.Background(), c, method, srv.URL()+"/orders/7", 512)

				if got := srv.Effects(); got != 1 {
					t.Fatalf("effects = %d, want exactly 1", got)
				}
				if got := srv.Accepted(); got != 1 {
					t.Fatalf("connections = %d, want 1: the request was sent again", got)
				}
				if fault.Fault == faultserver.Answer {
					if err != nil {
						t.Fatalf("answered %d, yet an error: %v", fault.Status, err)
					}
					if resp.StatusCode != fault.Status {
						t.Fatalf("status %d, want the server's %d", resp.StatusCode, fault.Status)
					}
					return
				}
				var e *rubicon.Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v (%T) is not a *rubicon.Error", err, err)
				}
				if e.Outcome != rubicon.Unknown || !rubicon.IsAmbiguous(err) || rubicon.SafeToRetry(err) {
					t.Fatalf("outcome %s, want unknown: %v", e.Outcome, err)
				}
				if e.Phase != rubicon.Sent || e.BytesWritten < 512 || e.Attempts != 1 {
					t.Fatalf("phase %s, %d bytes, %d attempts; want sent, at least 512 bytes, 1 attempt", e.Phase, e.BytesWritten, e.Attempts)
				}
				if e.Method != method || !strings.HasSuffix(e.URL, "/orders/7") {
					t.Fatalf("error names %s %s", e.Method, e.URL)
				}
			})
		}
	}
}

// TestRefusedPOSTIsRetriedAndAppliedOnce: a refused connection provably
// sent nothing, so even a POST is retried, and the effect happens once.
func TestRefusedPOSTIsRetriedAndAppliedOnce(t *testing.T) {
	srv := startServer(t, faultserver.Do(faultserver.Refuse), faultserver.Do(faultserver.Refuse), faultserver.OK())
	rec := &recorder{srv: srv}
	c := newClient(t, transport.Options{}, rec)

	resp, err := do(context.Background(), c, "POST", srv.URL()+"/charges", 1024)
	if err != nil {
		t.Fatalf("POST after two refusals: %v", err)
	}
	if resp.StatusCode != 200 || srv.Effects() != 1 {
		t.Fatalf("status %d, effects %d; want 200 and 1", resp.StatusCode, srv.Effects())
	}
	attempts := rec.all()
	if len(attempts) != 3 {
		t.Fatalf("%d attempts, want 3", len(attempts))
	}
	for _, a := range attempts[:2] {
		if a.Phase != rubicon.NotSent || a.BytesWritten != 0 || !a.Decision.Retry || a.Decision.Reason != retry.RetryNotSent {
			t.Errorf("refused attempt: %+v, want not_sent and retried", a)
		}
	}
}

func TestRefusedUntilTheEndIsSafeToRetryLater(t *testing.T) {
	srv := startServer(t)
	addr := srv.Addr()
	srv.Close() // nothing listens any more
	c := newClient(t, transport.Options{Policy: fastPolicy(t, func(c *retry.Config) { c.MaxAttempts = 3 })}, nil)

	_, err := do(context.Background(), c, "POST", "http://"+addr+"/charges", 10)
	var e *rubicon.Error
	if !errors.As(err, &e) || e.Phase != rubicon.NotSent || e.Outcome != rubicon.NotApplied || e.Attempts != 3 {
		t.Fatalf("POST to a closed port: %v; want not_sent, not_applied after 3 attempts", err)
	}
	if !rubicon.SafeToRetry(err) || rubicon.IsAmbiguous(err) {
		t.Fatalf("a never-sent POST must be safe to retry: %v", err)
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		t.Fatalf("cause %v is not the dial error", err)
	}
}

func TestResetOnAcceptNeverDuplicates(t *testing.T) {
	for range 10 {
		srv := startServer(t, faultserver.Do(faultserver.ResetOnAccept))
		c := newClient(t, transport.Options{}, nil)
		_, err := do(context.Background(), c, "POST", srv.URL()+"/charges", 100)
		if srv.Effects() > 1 {
			t.Fatalf("effects = %d", srv.Effects())
		}
		// Whether the reset beat the write is up to the kernel: either the
		// POST was provably not sent and retried into the 200, or it was
		// sent and is ambiguous.
		if err != nil && !rubicon.IsAmbiguous(err) {
			t.Fatalf("reset on accept: %v is neither a success nor ambiguous", err)
		}
		if err == nil && srv.Accepted() != 2 {
			t.Fatalf("success after %d connections, want 2", srv.Accepted())
		}
	}
}

func TestSafeMethodsAreRetriedAfterTransientFailures(t *testing.T) {
	srv := startServer(t,
		faultserver.Do(faultserver.ResetAfterRead), faultserver.Status(503),
		faultserver.RetryAfterDate(429, time.Now()), faultserver.OK())
	var rec recorder
	c := newClient(t, transport.Options{}, &rec)
	resp, err := do(context.Background(), c, "GET", srv.URL()+"/items", 0)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET: %v %v", resp, err)
	}
	if srv.Effects() != 4 || len(rec.all()) != 4 {
		t.Fatalf("effects %d, attempts %d; want 4 and 4", srv.Effects(), len(rec.all()))
	}
}

func TestGETRetriesStopAtMaxAttemptsAndReturnTheLastAnswer(t *testing.T) {
	srv := startServer(t, faultserver.Status(502), faultserver.Status(503), faultserver.Status(504), faultserver.OK())
	c := newClient(t, transport.Options{Policy: fastPolicy(t, func(c *retry.Config) { c.MaxAttempts = 3 })}, nil)
	resp, err := do(context.Background(), c, "GET", srv.URL(), 0)
	if err != nil {
		t.Fatalf("an answered call returned an error: %v", err)
	}
	if resp.StatusCode != 504 || srv.Effects() != 3 {
		t.Fatalf("status %d after %d effects; want the third answer, 504", resp.StatusCode, srv.Effects())
	}
}

// TestOptedInPOSTSendsOneKeyOnEveryAttempt: an operation that opted in is
// retried after it was sent, with the same Idempotency-Key every time.
func TestOptedInPOSTSendsOneKeyOnEveryAttempt(t *testing.T) {
	srv := startServer(t,
		faultserver.Do(faultserver.ResetAfterRead), faultserver.Status(503), faultserver.Do(faultserver.CloseAfterRead), faultserver.OK(),
		faultserver.Do(faultserver.ResetAfterRead), faultserver.OK())
	c := newClient(t, transport.Options{Operations: []transport.Operation{{Pattern: "POST /v1/orders", Mode: retry.OptedIn}}}, nil)

	resp, err := do(context.Background(), c, "POST", srv.URL()+"/v1/orders", 300)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("opted-in POST: %v", err)
	}
	resp, err = do(context.Background(), c, "POST", srv.URL()+"/v1/orders", 300)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("second opted-in POST: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests reached the server, want 6", len(reqs))
	}
	first := reqs[0].Header.Get("Idempotency-Key")
	if len(first) < 16 {
		t.Fatalf("idempotency key %q is missing or too short to be unique", first)
	}
	for i, r := range reqs[:4] {
		if got := r.Header.Get("Idempotency-Key"); got != first {
			t.Fatalf("attempt %d carried key %q, want %q", i+1, got, first)
		}
		if r.BodyBytes != 300 {
			t.Fatalf("attempt %d carried %d body bytes, want 300: the body was not rewound", i+1, r.BodyBytes)
		}
	}
	if second := reqs[4].Header.Get("Idempotency-Key"); second == first || second != reqs[5].Header.Get("Idempotency-Key") {
		t.Fatalf("second call's keys %q %q: want one new key for both attempts", second, reqs[5].Header.Get("Idempotency-Key"))
	}
}

func TestOptInIsPerOperation(t *testing.T) {
	srv := startServer(t, faultserver.Do(faultserver.ResetAfterRead), faultserver.Do(faultserver.ResetAfterRead))
	c := newClient(t, transport.Options{Operations: []transport.Operation{{Pattern: "POST /v1/orders", Mode: retry.OptedIn}}}, nil)
	// Another path and another method stay under the default rule.
	for _, call := range []struct{ method, path string }{{"POST", "/v1/refunds"}, {"DELETE", "/v1/orders"}} {
		_, err := do(context.Background(), c, call.method, srv.URL()+call.path, 10)
		if !rubicon.IsAmbiguous(err) {
			t.Fatalf("%s %s was not left ambiguous: %v", call.method, call.path, err)
		}
	}
	if srv.Effects() != 2 {
		t.Fatalf("effects %d, want 2 (one per call)", srv.Effects())
	}
	for _, r := range srv.Requests() {
		if r.Header.Get("Idempotency-Key") != "" {
			t.Fatalf("a request that did not opt in carried an idempotency key")
		}
	}
}

func TestPerRequestKeyAndHeaderName(t *testing.T) {
	srv := startServer(t, faultserver.Status(502), faultserver.OK())
	c := newClient(t, transport.Options{IdempotencyHeader: "x-request-key"}, nil)
	ctx := transport.WithIdempotencyKey(context.Background(), "order-7-charge")
	resp, err := do(ctx, c, "POST", srv.URL()+"/anything", 5)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST with a per-request key: %v", err)
	}
	for _, r := range srv.Requests() {
		if got := r.Header.Get("X-Request-Key"); got != "order-7-charge" {
			t.Fatalf("key header = %q, want the caller's key", got)
		}
	}
}

func TestNotSentOnlyNeverRetriesASentGET(t *testing.T) {
	srv := startServer(t, faultserver.Do(faultserver.ResetAfterRead))
	c := newClient(t, transport.Options{Operations: []transport.Operation{{Pattern: "GET /v1/paid-report", Mode: retry.NotSentOnly}}}, nil)
	_, err := do(context.Background(), c, "GET", srv.URL()+"/v1/paid-report", 0)
	if !rubicon.IsAmbiguous(err) || srv.Effects() != 1 {
		t.Fatalf("not_sent_only GET: %v after %d effects; want ambiguous after 1", err, srv.Effects())
	}
	ctx := transport.WithMode(context.Background(), retry.NotSentOnly)
	srv.Then(faultserver.Status(503), faultserver.OK())
	resp, err := do(ctx, c, "GET", srv.URL()+"/other", 0)
	if err != nil || resp.StatusCode != 503 {
		t.Fatalf("not_sent_only per request: %v %v, want the 503 returned as is", resp, err)
	}
}

// TestRetryAfterPastTheDeadlineFailsAtOnce: when the server asks for a wait
// that does not fit in what is left, the call ends at once with the server's
// answer, and the report carries the requested wait.
func TestRetryAfterPastTheDeadlineFailsAtOnce(t *testing.T) {
	for _, step := range []faultserver.Step{
		faultserver.RetryAfter(503, 5*time.Second),
		faultserver.RetryAfterDate(429, time.Now().Add(6*time.Second)),
	} {
		srv := startServer(t, step, faultserver.OK())
		var rec recorder
		c := newClient(t, transport.Options{Policy: fastPolicy(t, func(c *retry.Config) { c.Deadline = 2 * time.Second })}, &rec)
		start := time.Now()
		var rep transport.Report
		resp, err := do(transport.WithReport(context.Background(), &rep), c, "GET", srv.URL(), 0)
		elapsed := time.Since(start)
		if err != nil || resp.StatusCode != step.Status {
			t.Fatalf("%s: %v, %v; want the server's answer returned", step, resp, err)
		}
		e := rep.Err
		if e == nil || e.RetryAfter < 4*time.Second || e.StatusCode != step.Status || e.Phase != rubicon.Answered || e.Attempts != 1 || rep.Attempts != 1 {
			t.Fatalf("%s: report %+v, error %+v; want the requested wait, the status, answered, 1 attempt", step, rep, e)
		}
		if a := rec.all(); len(a) != 1 || a[0].Decision.Reason != retry.StopRetryAfterTooLong || a[0].Decision.RetryAfter < 4*time.Second {
			t.Fatalf("%s: observed %+v; want one attempt stopped for the wait", step, a)
		}
		if elapsed >= 2*time.Second || srv.Effects() != 1 {
			t.Fatalf("%s: returned after %s and %d effects; want before the deadline, without waiting", step, elapsed, srv.Effects())
		}
	}
}

// TestLongRetryAfterDoesNotChangeWhatTheAnswerProves: a 429 to an opted-in
// POST is a refusal whether or not it asks for a wait the policy will not
// take; the response comes back either way.
func TestLongRetryAfterDoesNotChangeWhatTheAnswerProves(t *testing.T) {
	for _, step := range []faultserver.Step{faultserver.RetryAfter(429, 120*time.Second), faultserver.Status(429)} {
		srv := startServer(t, step, step, step, step)
		c := newClient(t, transport.Options{Operations: []transport.Operation{{Pattern: "POST /v1/orders", Mode: retry.OptedIn}}}, nil)
		var rep transport.Report
		resp, err := do(transport.WithReport(context.Background(), &rep), c, "POST", srv.URL()+"/v1/orders", 10)
		if err != nil || resp.StatusCode != 429 {
			t.Fatalf("%s: %v, %v; want the 429 returned", step, resp, err)
		}
		if rep.Outcome != rubicon.NotApplied || rep.Err == nil || !rubicon.SafeToRetry(rep.Err) || rubicon.IsAmbiguous(rep.Err) {
			t.Fatalf("%s: report %+v; want not applied, safe to retry", step, rep)
		}
		if step.Header != nil && (rep.Err.RetryAfter != 120*time.Second || srv.Effects() != 1) {
			t.Fatalf("%s: %+v after %d requests; want the 120 s wait, without retrying", step, rep.Err, srv.Effects())
		}
	}
}

// TestReportFollowsTheRule: what the transport reports of a returned answer
// is what retry.Outcome says of it, for every status class.
func TestReportFollowsTheRule(t *testing.T) {
	for _, status := range []int{200, 201, 204, 303, 304, 307, 400, 404, 408, 409, 429, 500, 501, 502, 503, 504} {
		for _, method := range []string{"POST", "GET"} {
			srv := startServer(t, faultserver.Status(status))
			srv.SetDefault(faultserver.Status(status))
			c := newClient(t, transport.Options{NoBudget: true}, nil)
			c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			var rep transport.Report
			resp, err := do(transport.WithReport(context.Background(), &rep), c, method, srv.URL()+"/x", 0)
			if err != nil || resp.StatusCode != status {
				t.Fatalf("%s answered %d: %v, %v; want the response", method, status, resp, err)
			}
			want := retry.Outcome(retry.Result{Method: method, Phase: rubicon.Answered, Status: status})
			if rep.Outcome != want || (rep.Err == nil) != (want == rubicon.Applied) {
				t.Errorf("%s answered %d: report %+v, want outcome %s", method, status, rep, want)
			}
			if rep.Err != nil && (rep.Err.StatusCode != status || rep.Err.Attempts != rep.Attempts || rep.Err.Reason == "") {
				t.Errorf("%s answered %d: error %+v does not describe the answer", method, status, rep.Err)
			}
		}
	}
}

func TestContextCancellationInterruptsTheWait(t *testing.T) {
	srv := startServer(t, faultserver.RetryAfter(503, 20*time.Second), faultserver.OK())
	c := newClient(t, transport.Options{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := do(ctx, c, "GET", srv.URL(), 0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	var e *rubicon.Error
	if !errors.As(err, &e) || e.RetryAfter != 20*time.Second || e.StatusCode != 503 {
		t.Fatalf("error %v does not describe the last answer", err)
	}
	if time.Since(start) > 10*time.Second || srv.Effects() != 1 {
		t.Fatalf("the 20 s wait was not interrupted")
	}
}

func TestBodyThatCannotBeReplayedIsNotRetried(t *testing.T) {
	srv := startServer(t, faultserver.Do(faultserver.Refuse), faultserver.OK())
	rec := &recorder{srv: srv}
	c := newClient(t, transport.Options{}, rec)
	req, _ := http.NewRequest("POST", srv.URL()+"/upload", io.NopCloser(strings.NewReader("stream")))
	if req.GetBody != nil {
		t.Fatal("test setup: the body is replayable")
	}
	_, err := c.Do(req)
	var e *rubicon.Error
	if !errors.As(err, &e) || e.Outcome != rubicon.NotApplied || !strings.Contains(e.Reason, "GetBody") {
		t.Fatalf("refused streaming POST: %v; want not_applied naming GetBody", err)
	}
	if len(rec.all()) != 1 || srv.Effects() != 0 {
		t.Fatalf("%d attempts and %d effects; want 1 and 0", len(rec.all()), srv.Effects())
	}
}

func TestAttemptTimeoutLetsAGETRetryAHang(t *testing.T) {
	srv := startServer(t, faultserver.Do(faultserver.Hang), faultserver.OK())
	c := newClient(t, transport.Options{Policy: fastPolicy(t, func(c *retry.Config) { c.AttemptTimeout = 300 * time.Millisecond })}, nil)
	resp, err := do(context.Background(), c, "GET", srv.URL(), 0)
	if err != nil || resp.StatusCode != 200 || srv.Effects() != 2 {
		t.Fatalf("GET after a hang: %v, %d effects", err, srv.Effects())
	}
}

func TestSuccessfulResponseIsReturnedUnchanged(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Provider-Request-Id", "req_123")
		w.WriteHeader(201)
		io.WriteString(w, "created "+r.URL.Query().Get("n"))
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, policy := range []*retry.Policy{nil, fastPolicy(t, func(c *retry.Config) { c.Deadline = time.Minute; c.AttemptTimeout = time.Minute })} {
		c := newClient(t, transport.Options{Policy: policy}, nil)
		req, _ := http.NewRequest("POST", srv.URL+"/x?n=7", strings.NewReader("{}"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(body) != "created 7" || resp.StatusCode != 201 || resp.Header.Get("X-Provider-Request-Id") != "req_123" {
			t.Fatalf("response changed: %d %q %v %v", resp.StatusCode, body, resp.Header, err)
		}
		if resp.Request != req {
			t.Fatalf("resp.Request is not the caller's request")
		}
	}
}

func TestForeignBaseIsTreatedAsSent(t *testing.T) {
	srv := startServer(t)
	addr := srv.Addr()
	srv.Close()
	base := roundTripperFunc(func(r *http.Request) (*http.Response, error) { return http.DefaultTransport.RoundTrip(r) })
	tr, err := transport.New(base, transport.Options{Policy: fastPolicy(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&http.Client{Transport: tr}).Post("http://"+addr+"/x", "text/plain", strings.NewReader("a"))
	var e *rubicon.Error
	if !errors.As(err, &e) || e.Phase != rubicon.Sent || e.Outcome != rubicon.Unknown || e.Attempts != 1 {
		t.Fatalf("without proofs a failed POST must count as sent: %v", err)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestCountsThroughTLS checks the proof when the counting connection sits
// under TLS, for HTTP/1.1 and HTTP/2.
func TestCountsThroughTLS(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			panic(http.ErrAbortHandler) // read the request, then break the connection or stream
		}))
		srv.EnableHTTP2 = h2
		srv.Config.ErrorLog = nil
		srv.StartTLS()
		defer srv.Close()
		base := srv.Client().Transport.(*http.Transport)
		var rec recorder
		tr, err := transport.New(base, transport.Options{Policy: fastPolicy(t, nil), Observe: rec.observe})
		if err != nil {
			t.Fatal(err)
		}
		_, err = (&http.Client{Transport: tr}).Post(srv.URL+"/pay", "text/plain", strings.NewReader("amount=5"))
		var e *rubicon.Error
		if !errors.As(err, &e) || e.Phase != rubicon.Sent || e.BytesWritten == 0 || !rubicon.IsAmbiguous(err) {
			t.Fatalf("h2=%v: aborted POST over TLS: %v; want sent with bytes counted, ambiguous", h2, err)
		}
		if len(rec.all()) != 1 {
			t.Fatalf("h2=%v: %d attempts, want 1", h2, len(rec.all()))
		}
		tr.CloseIdleConnections()
	}
	_ = tls.VersionTLS13
}

func TestCallerTraceStillWorks(t *testing.T) {
	srv := startServer(t, faultserver.Do(faultserver.ResetAfterRead))
	c := newClient(t, transport.Options{}, nil)
	gotConn := 0
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { gotConn++ }})
	_, err := do(ctx, c, "POST", srv.URL(), 10)
	if gotConn != 1 {
		t.Fatalf("the caller's trace saw %d connections, want 1", gotConn)
	}
	var e *rubicon.Error
	if !errors.As(err, &e) || e.Phase != rubicon.Sent || e.BytesWritten == 0 {
		t.Fatalf("with a caller trace the proof is lost: %v", err)
	}
}

func TestInvalidOperationsAreRejected(t *testing.T) {
	for _, tt := range []struct {
		op   transport.Operation
		want string
	}{
		{transport.Operation{Pattern: "/v1/orders", Mode: retry.OptedIn}, "method"},
		{transport.Operation{Pattern: "POST /", Mode: retry.OptedIn}, "whole client"},
		{transport.Operation{Pattern: "POST /{rest...}", Mode: retry.OptedIn}, "whole client"},
		{transport.Operation{Pattern: "POST /v1/{id", Mode: retry.OptedIn}, "POST /v1/{id"},
		{transport.Operation{Pattern: "POST /v1/x", Mode: retry.Mode(9)}, "mode"},
		// Subtrees only when written explicitly.
		{transport.Operation{Pattern: "POST /v1/", Mode: retry.OptedIn}, `"POST /v1/{rest...}"`},
		{transport.Operation{Pattern: "POST /v1/", Mode: retry.NotSentOnly}, `"POST /v1/{$}"`},
		{transport.Operation{Pattern: "POST /{a}/{b...}", Mode: retry.OptedIn}, "whole client"},
		{transport.Operation{Pattern: "POST /{a}/{b}", Mode: retry.OptedIn}, "whole client"},
		// Patterns that could never match.
		{transport.Operation{Pattern: "post /v1/x", Mode: retry.OptedIn}, `write "POST"`},
		{transport.Operation{Pattern: "Delete /v1/x", Mode: retry.NotSentOnly}, `write "DELETE"`},
		{transport.Operation{Pattern: "POST api.example.com:443/v1/x", Mode: retry.OptedIn}, "without its port"},
		{transport.Operation{Pattern: "POST", Mode: retry.OptedIn}, "method"},
		{transport.Operation{Pattern: "POST v1", Mode: retry.OptedIn}, "path"},
	} {
		_, err := transport.New(nil, transport.Options{Operations: []transport.Operation{tt.op}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("operation %+v: error %v, want one mentioning %q", tt.op, err, tt.want)
		}
	}
	_, err := transport.New(nil, transport.Options{Operations: []transport.Operation{
		{Pattern: "POST /v1/x", Mode: retry.OptedIn}, {Pattern: "POST /v1/x", Mode: retry.NotSentOnly}}})
	if err == nil {
		t.Errorf("two modes for one pattern were accepted")
	}
}

func TestCertificateErrorsAreNotRetried(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	var rec recorder
	c := newClient(t, transport.Options{}, &rec) // does not trust the test server's certificate
	_, err := do(context.Background(), c, "POST", srv.URL, 10)
	var e *rubicon.Error
	if !errors.As(err, &e) || e.Phase != rubicon.NotSent || e.Outcome != rubicon.NotApplied || e.Attempts != 1 {
		t.Fatalf("untrusted certificate: %v; want one attempt, not sent", err)
	}
	if !strings.Contains(e.Reason, "trying again") {
		t.Fatalf("reason %q does not say the error is permanent", e.Reason)
	}
}

func TestDeadlineDuringAnAttemptStopsWithoutWaiting(t *testing.T) {
	srv := startServer(t, faultserver.Do(faultserver.Hang), faultserver.OK())
	var rec recorder
	c := newClient(t, transport.Options{}, &rec)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := do(ctx, c, "GET", srv.URL(), 0)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline in the error, got %v", err)
	}
	attempts := rec.all()
	if len(attempts) != 1 || attempts[0].Decision.Retry || attempts[0].Decision.Reason != retry.StopDeadline {
		t.Fatalf("attempts %+v; want one, stopped for the deadline", attempts)
	}
}

// TestAttemptsCountNetHTTPResends: when a reused connection breaks after
// the request was written, net/http sends an opted-in request again by
// itself; the server gets it twice, and the attempts say so.
func TestAttemptsCountNetHTTPResends(t *testing.T) {
	keepAlive := faultserver.OK()
	keepAlive.KeepAlive = true
	opts := func(maxAttempts int) transport.Options {
		return transport.Options{
			Policy:     fastPolicy(t, func(c *retry.Config) { c.MaxAttempts = maxAttempts }),
			Operations: []transport.Operation{{Pattern: "POST /v1/orders", Mode: retry.OptedIn}},
		}
	}

	// Resent by net/http, then answered.
	srv := startServer(t, keepAlive, faultserver.Do(faultserver.CloseAfterRead), faultserver.OK())
	var rec recorder
	c := newClient(t, opts(4), &rec)
	if _, err := do(context.Background(), c, "GET", srv.URL()+"/warm", 0); err != nil {
		t.Fatal(err)
	}
	var rep transport.Report
	resp, err := do(transport.WithReport(context.Background(), &rep), c, "POST", srv.URL()+"/v1/orders", 64)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST on a reused connection: %v, %v", resp, err)
	}
	posts := postsTo(srv, "/v1/orders")
	if posts != 2 {
		t.Fatalf("test setup: the server got the POST %d times, want 2 (one resent by net/http)", posts)
	}
	last := rec.all()[len(rec.all())-1]
	if last.Number != posts || last.Resends != 1 || rep.Attempts != posts || rep.Outcome != rubicon.Applied {
		t.Fatalf("observed attempt %d with %d resends, report %+v; want %d attempts, 1 resend, applied", last.Number, last.Resends, rep, posts)
	}

	// Resent by net/http, then no answer: the error counts both.
	srv = startServer(t, keepAlive, faultserver.Do(faultserver.CloseAfterRead), faultserver.Do(faultserver.ResetAfterRead))
	c = newClient(t, opts(2), nil)
	if _, err := do(context.Background(), c, "GET", srv.URL()+"/warm", 0); err != nil {
		t.Fatal(err)
	}
	_, err = do(context.Background(), c, "POST", srv.URL()+"/v1/orders", 64)
	var e *rubicon.Error
	if !errors.As(err, &e) || e.Attempts != postsTo(srv, "/v1/orders") || e.Attempts != 2 || e.Outcome != rubicon.Unknown {
		t.Fatalf("POST resent by net/http, then reset: %v; want 2 attempts, as the server saw, outcome unknown", err)
	}
}

func postsTo(srv *faultserver.Server, path string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Method == "POST" && r.Path == path {
			n++
		}
	}
	return n
}

// TestPatternsMatchWhatTheySay: an explicit wildcard opts in a subtree; a
// pattern without one opts in its own path alone.
func TestPatternsMatchWhatTheySay(t *testing.T) {
	ops := []transport.Operation{
		{Pattern: "POST /v1/orders", Mode: retry.OptedIn},
		{Pattern: "POST /v2/{rest...}", Mode: retry.OptedIn},
		{Pattern: "POST /v3/{$}", Mode: retry.OptedIn},
		{Pattern: "POST /{$}", Mode: retry.OptedIn},
		{Pattern: "GET /{a}/{b...}", Mode: retry.NotSentOnly},
	}
	for path, want := range map[string]bool{
		"/v1/orders": true, "/v1/orders/7": false, "/v1/ordersx": false,
		"/v2/a": true, "/v2/a/b/c": true, "/v2": false,
		"/v3/": true, "/v3/x": false,
		"/": true, "/other": false,
	} {
		srv := startServer(t, faultserver.Do(faultserver.ResetAfterRead))
		c := newClient(t, transport.Options{Operations: ops}, nil)
		resp, err := do(context.Background(), c, "POST", srv.URL()+path, 10)
		retried := err == nil && resp.StatusCode == 200
		if retried != want || (want && srv.Effects() != 2) {
			t.Errorf("POST %s after a reset: retried %v (%d requests), want opted in %v", path, retried, srv.Effects(), want)
		}
	}
}
