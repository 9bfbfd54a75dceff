package transport_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// recordingServer records every request it gets and answers 200.
type recordingServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newRecordingServer(t *testing.T) *recordingServer {
	rs := &recordingServer{}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.reqs = append(rs.reqs, r.Clone(context.Background()))
		rs.mu.Unlock()
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *recordingServer) requests() []*http.Request {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]*http.Request(nil), rs.reqs...)
}

// redirector answers every request with status and a Location under to.
func redirector(t *testing.T, status int, to string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", to+r.URL.Path)
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRedirectToAnotherOriginCarriesNothing: a 307 or 308 of an opted-in
// POST to another port of the same host is not followed (net/http would
// send the body, the key and Authorization there); a 303's GET goes, but
// without credentials or keys.
func TestRedirectToAnotherOriginCarriesNothing(t *testing.T) {
	other := newRecordingServer(t)
	opts := transport.Options{Operations: []transport.Operation{{Pattern: "POST /v1/{rest...}", Mode: retry.OptedIn}}}
	secret := http.Header{"Authorization": {"Bearer sk-secret"}, "X-Api-Key": {"sk-secret"}, "Idempotency-Key": {"order-1"}}
	for _, status := range []int{307, 308} {
		from := redirector(t, status, other.URL)
		c := newClient(t, opts, nil)
		var rep transport.Report
		_, err := post(transport.WithReport(context.Background(), &rep), c, from.URL+"/v1/orders", `{"qty":1}`, secret)
		if n := len(other.requests()); n != 0 {
			t.Fatalf("%d: the other origin got %d requests", status, n)
		}
		if !rubicon.SafeToRetry(err) || rep.Outcome != rubicon.NotApplied {
			t.Fatalf("%d: %v, report %+v; want not applied", status, err, rep)
		}
		if rep.Err == nil || rep.Err.StatusCode != status || !strings.Contains(err.Error(), "another origin") {
			t.Fatalf("%d: error %v does not describe the redirect", status, err)
		}
	}

	from := redirector(t, 303, other.URL)
	c := newClient(t, opts, nil)
	if _, err := post(context.Background(), c, from.URL+"/v1/orders", `{"qty":1}`, secret); err != nil {
		t.Fatalf("303: %v", err)
	}
	got := other.requests()
	if len(got) != 1 || got[0].Method != "GET" {
		t.Fatalf("303: the other origin got %d requests, want one GET", len(got))
	}
	for _, h := range []string{"Authorization", "X-Api-Key", "Idempotency-Key"} {
		if v := got[0].Header.Get(h); v != "" {
			t.Fatalf("303: %s reached another origin: %q", h, v)
		}
	}
}

// TestRedirectWithinTheOriginIsFollowed: the origin's own 307 keeps the
// request, its key and its credentials.
func TestRedirectWithinTheOriginIsFollowed(t *testing.T) {
	var mu sync.Mutex
	var seen []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(context.Background()))
		mu.Unlock()
		if r.URL.Path == "/v1/old" {
			http.Redirect(w, r, "/v1/new", http.StatusTemporaryRedirect)
		}
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, transport.Options{}, nil)
	if _, err := post(context.Background(), c, srv.URL+"/v1/old", "x", http.Header{"Authorization": {"Bearer t"}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[1].Method != "POST" || seen[1].Header.Get("Authorization") != "Bearer t" {
		t.Fatalf("same-origin 307: got %d requests; want the POST followed with its credentials", len(seen))
	}
}
