package transport_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// startServer starts a fault server for the test.
func startServer(t testing.TB, steps ...faultserver.Step) *faultserver.Server {
	t.Helper()
	srv, err := faultserver.Start(steps...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// fastPolicy retries quickly so that tests do not sleep.
func fastPolicy(t testing.TB, change func(*retry.Config)) *retry.Policy {
	t.Helper()
	cfg := retry.DefaultConfig()
	cfg.BaseDelay = time.Millisecond
	cfg.MaxDelay = 5 * time.Millisecond
	if change != nil {
		change(&cfg)
	}
	p, err := retry.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recorder collects the attempts a transport reports, and tells the fault
// server when a connection was refused.
type recorder struct {
	srv *faultserver.Server

	mu       sync.Mutex
	attempts []transport.Attempt
}

func (r *recorder) observe(a transport.Attempt) {
	r.mu.Lock()
	r.attempts = append(r.attempts, a)
	r.mu.Unlock()
	if r.srv != nil && a.Err != nil && r.srv.Refusing() {
		r.srv.Refused()
	}
}

func (r *recorder) all() []transport.Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]transport.Attempt(nil), r.attempts...)
}

// newClient returns a client over a fresh Transport with opts, whose
// observer feeds rec (if not nil) and tells srv about refusals.
func newClient(t testing.TB, opts transport.Options, rec *recorder) *http.Client {
	t.Helper()
	if opts.Policy == nil {
		opts.Policy = fastPolicy(t, nil)
	}
	if rec != nil {
		opts.Observe = rec.observe
	}
	c, err := transport.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// do sends a request with a replayable body of n bytes (none for n == 0).
func do(ctx context.Context, c *http.Client, method, url string, n int) (*http.Response, error) {
	var body io.Reader
	if n > 0 {
		body = bytes.NewReader(bytes.Repeat([]byte("x"), n))
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}
