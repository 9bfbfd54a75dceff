package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	retryablehttp "github.com/hashicorp/go-retryablehttp"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// attemptTimeout bounds each attempt of both clients, so that a hanging
// server costs the same to each.
const attemptTimeout = 200 * time.Millisecond

type outcome struct {
	effects int
	result  string
}

// TestBehaviourTable plays the same fault, followed by a healthy server,
// against go-retryablehttp's default retry rules and against rubicon, and
// counts the requests that reached the handler. Every effect beyond the
// first is a duplicate side effect: a second charge, a second order.
func TestBehaviourTable(t *testing.T) {
	scenarios := []struct {
		method string
		fault  faultserver.Step
	}{
		{"POST", faultserver.Do(faultserver.Refuse)},
		{"POST", faultserver.Do(faultserver.ResetOnAccept)},
		{"POST", faultserver.Do(faultserver.ResetAfterRead)},
		{"POST", faultserver.Do(faultserver.CloseAfterRead)},
		{"POST", faultserver.Do(faultserver.Hang)},
		{"POST", faultserver.Status(500)},
		{"POST", faultserver.Status(502)},
		{"POST", faultserver.Status(503)},
		{"POST", faultserver.Status(429)},
		{"DELETE", faultserver.Do(faultserver.ResetAfterRead)},
		{"PATCH", faultserver.Status(503)},
		{"GET", faultserver.Do(faultserver.ResetAfterRead)},
		{"GET", faultserver.Status(503)},
	}
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "| method\t| fault, then 200\t| go-retryablehttp effects\t| rubicon effects\t| rubicon result\t|")
	fmt.Fprintln(tw, "|---\t|---\t|---\t|---\t|---\t|")
	dupRetryable, dupRubicon := 0, 0
	for _, sc := range scenarios {
		theirs := play(t, sc.method, sc.fault, sendRetryable)
		ours := play(t, sc.method, sc.fault, sendRubicon)
		fmt.Fprintf(tw, "| %s\t| %s\t| %d%s\t| %d%s\t| %s\t|\n", sc.method, sc.fault,
			theirs.effects, dupNote(sc.method, theirs.effects), ours.effects, dupNote(sc.method, ours.effects), ours.result)
		if !retry.IsSafeMethod(sc.method) {
			dupRetryable += max(0, theirs.effects-1)
			dupRubicon += max(0, ours.effects-1)
		}
	}
	tw.Flush()
	t.Logf("\n%s\nduplicate side effects: go-retryablehttp %d, rubicon %d", table.String(), dupRetryable, dupRubicon)
	if dupRubicon != 0 {
		t.Errorf("rubicon duplicated %d side effects", dupRubicon)
	}
	if dupRetryable == 0 {
		t.Errorf("go-retryablehttp duplicated nothing: the comparison no longer shows what it claims")
	}
}

func dupNote(method string, effects int) string {
	if effects > 1 && !retry.IsSafeMethod(method) {
		return " (duplicate)"
	}
	return ""
}

type sendFunc func(ctx context.Context, srv *faultserver.Server, method string) (int, error)

func play(t *testing.T, method string, fault faultserver.Step, send sendFunc) outcome {
	t.Helper()
	srv, err := faultserver.Start(fault)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if fault.Fault == faultserver.Refuse {
		// Neither client reports refusals to the server; reopen the port
		// shortly after the first dial fails.
		go func() {
			time.Sleep(20 * time.Millisecond)
			srv.Refused()
		}()
	}
	status, err := send(context.Background(), srv, method)
	o := outcome{effects: srv.Effects()}
	switch {
	case err == nil:
		o.result = fmt.Sprintf("answered %d", status)
	case rubicon.IsAmbiguous(err):
		o.result = "ambiguous, not retried"
	case rubicon.SafeToRetry(err):
		o.result = "not applied"
	default:
		o.result = "error"
	}
	return o
}

func sendRetryable(ctx context.Context, srv *faultserver.Server, method string) (int, error) {
	c := retryablehttp.NewClient() // the default CheckRetry and retry count
	c.Logger = nil
	c.RetryWaitMin, c.RetryWaitMax = 30*time.Millisecond, 60*time.Millisecond // only to keep the test short
	c.HTTPClient.Timeout = attemptTimeout
	defer c.HTTPClient.CloseIdleConnections()
	req, err := retryablehttp.NewRequestWithContext(ctx, method, srv.URL()+"/v1/orders", strings.NewReader(`{"sku":"A1"}`))
	if err != nil {
		return 0, err
	}
	return statusOf(c.Do(req))
}

func sendRubicon(ctx context.Context, srv *faultserver.Server, method string) (int, error) {
	cfg := retry.DefaultConfig()
	cfg.BaseDelay, cfg.MaxDelay = 30*time.Millisecond, 60*time.Millisecond
	cfg.AttemptTimeout = attemptTimeout
	c, err := transport.NewClient(transport.Options{Policy: retry.MustNew(cfg)})
	if err != nil {
		return 0, err
	}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, method, srv.URL()+"/v1/orders", strings.NewReader(`{"sku":"A1"}`))
	if err != nil {
		return 0, err
	}
	return statusOf(c.Do(req))
}

// statusOf reads and closes a response, returning its status.
func statusOf(resp *http.Response, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}
