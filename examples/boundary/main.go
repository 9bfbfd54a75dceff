// Command boundary plays common failures of a paid or mutating API against
// rubicon's transport on loopback and prints, for each, how many attempts
// were made, how many requests reached the server, and what the caller
// learns. Run it with:
//
//	go run ./examples/boundary
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

type scenario struct {
	name   string
	method string
	optIn  bool
	script []faultserver.Step
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "boundary:", err)
		os.Exit(1)
	}
}

func run(out io.Writer) error {
	scenarios := []scenario{
		{"refused twice, then 200", "POST", false, []faultserver.Step{faultserver.Do(faultserver.Refuse), faultserver.Do(faultserver.Refuse)}},
		{"read, then connection reset", "POST", false, []faultserver.Step{faultserver.Do(faultserver.ResetAfterRead)}},
		{"read, then no answer past the deadline", "POST", false, []faultserver.Step{faultserver.Do(faultserver.Hang)}},
		{"503 Service Unavailable", "POST", false, []faultserver.Step{faultserver.Status(503)}},
		{"reset, 503, then 200", "GET", false, []faultserver.Step{faultserver.Do(faultserver.ResetAfterRead), faultserver.Status(503)}},
		{"reset, then 200 (opted in)", "POST", true, []faultserver.Step{faultserver.Do(faultserver.ResetAfterRead)}},
		{"429 Retry-After 60s, 1s deadline", "GET", false, []faultserver.Step{faultserver.RetryAfter(429, time.Minute)}},
	}
	cfg := retry.DefaultConfig()
	cfg.Deadline = time.Second
	cfg.BaseDelay = 10 * time.Millisecond
	policy, err := retry.New(cfg)
	if err != nil {
		return err
	}

	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "METHOD\tSERVER DOES\tATTEMPTS\tEFFECTS\tRESULT")
	var sample error
	for _, sc := range scenarios {
		res, err := play(sc, policy)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", sc.method, sc.name, res.attempts, res.effects, res.result)
		if sample == nil && rubicon.IsAmbiguous(res.err) {
			sample = res.err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "EFFECTS counts requests that reached the server's handler: a POST is never")
	fmt.Fprintln(out, "applied twice unless its operation opted in with an idempotency key.")
	if sample != nil {
		fmt.Fprintf(out, "\nAn ambiguous call's error reads:\n  %v\n", sample)
	}
	return nil
}

type result struct {
	attempts, effects int
	result            string
	err               error
}

func play(sc scenario, policy *retry.Policy) (result, error) {
	srv, err := faultserver.Start(sc.script...)
	if err != nil {
		return result{}, err
	}
	defer srv.Close()

	client, err := transport.NewClient(transport.Options{
		Policy: policy,
		Observe: func(a transport.Attempt) {
			if a.Err != nil && srv.Refusing() {
				srv.Refused()
			}
		},
	})
	if err != nil {
		return result{}, err
	}
	defer client.CloseIdleConnections()

	// The report says what the call proves, answered or not.
	var rep transport.Report
	ctx := transport.WithReport(context.Background(), &rep)
	if sc.optIn {
		ctx = transport.WithMode(ctx, retry.OptedIn)
	}
	req, err := http.NewRequestWithContext(ctx, sc.method, srv.URL()+"/v1/orders", strings.NewReader(`{"sku":"A1"}`))
	if err != nil {
		return result{}, err
	}
	resp, err := client.Do(req)
	r := result{attempts: rep.Attempts, effects: srv.Effects(), err: err}
	var what string
	if err == nil {
		resp.Body.Close()
		what = fmt.Sprintf("answered %d, ", resp.StatusCode)
	}
	switch e := rep.Err; {
	case e == nil:
		r.result = what + "applied"
	case e.RetryAfter > 0:
		r.result = fmt.Sprintf("%s%s: stopped at once, the server asked to wait %s", what, e.Outcome, e.RetryAfter)
	case e.Outcome == rubicon.Unknown:
		r.result = what + "ambiguous: may have been applied, not retried"
	default:
		r.result = what + string(e.Outcome)
	}
	return r, nil
}
