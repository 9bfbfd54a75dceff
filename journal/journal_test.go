package journal_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

func TestStateMachine(t *testing.T) {
	legal := map[[2]journal.State]bool{
		{journal.Pending, journal.Sending}:      true,
		{journal.Pending, journal.FailedSafe}:   true,
		{journal.FailedSafe, journal.Pending}:   true,
		{journal.Sending, journal.Applied}:      true,
		{journal.Sending, journal.NotApplied}:   true,
		{journal.Sending, journal.FailedSafe}:   true,
		{journal.Sending, journal.Ambiguous}:    true,
		{journal.Ambiguous, journal.Applied}:    true,
		{journal.Ambiguous, journal.NotApplied}: true,
		{journal.NotApplied, journal.Pending}:   true,
	}
	for _, from := range journal.States {
		if !from.Valid() {
			t.Errorf("%s is not valid", from)
		}
		for _, to := range journal.States {
			if got := journal.CanTransition(from, to); got != legal[[2]journal.State{from, to}] {
				t.Errorf("CanTransition(%s, %s) = %v", from, to, got)
			}
		}
	}
	if journal.State("done").Valid() {
		t.Error(`"done" is valid`)
	}
}

// TestReportCall maps what the transport says to where the operation goes.
func TestReportCall(t *testing.T) {
	for _, tt := range []struct {
		err   error
		to    journal.State
		phase rubicon.Phase
	}{
		{&rubicon.Error{Phase: rubicon.NotSent, Outcome: rubicon.NotApplied, Attempts: 3}, journal.FailedSafe, rubicon.NotSent},
		{&rubicon.Error{Phase: rubicon.Sent, Outcome: rubicon.Unknown, Attempts: 1, BytesWritten: 300}, journal.Ambiguous, rubicon.Sent},
		{&rubicon.Error{Phase: rubicon.Answered, Outcome: rubicon.NotApplied, StatusCode: 408}, journal.NotApplied, rubicon.Answered},
		{&rubicon.Error{Phase: rubicon.Answered, Outcome: rubicon.Unknown, StatusCode: 503}, journal.Ambiguous, rubicon.Answered},
		{fmt.Errorf("wrapped: %w", &rubicon.Error{Phase: rubicon.NotSent, Outcome: rubicon.NotApplied}), journal.FailedSafe, rubicon.NotSent},
		{errors.New("some other failure"), journal.Ambiguous, rubicon.Sent},
	} {
		r := journal.ReportCall("w", nil, tt.err)
		if r.To != tt.to || r.Phase != tt.phase || r.Worker != "w" {
			t.Errorf("ReportCall(%v) = %+v, want %s in phase %q", tt.err, r, tt.to, tt.phase)
		}
		if r.Detail == "" {
			t.Errorf("ReportCall(%v) lost the detail", tt.err)
		}
	}
	r := journal.ReportCall("w", nil, &rubicon.Error{Phase: rubicon.Sent, Outcome: rubicon.Unknown, Attempts: 2, BytesWritten: 300, StatusCode: 0})
	if r.Evidence["bytes_written"] != int64(300) || r.Evidence["attempts"] != 2 {
		t.Errorf("evidence %v", r.Evidence)
	}
	if r := journal.ReportCall("w", nil, nil); r.To != journal.Ambiguous || r.Detail == "" {
		t.Errorf("neither a response nor an error: %+v, want ambiguous", r)
	}
}

// TestReportCallJudgesTheResponse: a response returned without an error is
// judged by its status, through rubicon's transport over real sockets; a
// 5xx is never applied.
func TestReportCallJudgesTheResponse(t *testing.T) {
	client, err := transport.NewClient(transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		method string
		step   faultserver.Step
		to     journal.State
	}{
		{"POST", faultserver.Status(201), journal.Applied},
		{"POST", faultserver.Status(303), journal.Applied},
		{"POST", faultserver.Status(503), journal.Ambiguous},
		{"POST", faultserver.Status(500), journal.Ambiguous},
		{"POST", faultserver.Status(502), journal.Ambiguous},
		{"POST", faultserver.RetryAfter(429, 120*time.Second), journal.NotApplied},
		{"POST", faultserver.Status(429), journal.NotApplied},
		{"POST", faultserver.Status(409), journal.NotApplied},
		{"POST", faultserver.Status(307), journal.NotApplied},
		{"PUT", faultserver.Status(301), journal.Ambiguous},
		// A journaled GET has an effect (it costs money, say).
		{"GET", faultserver.Status(503), journal.Ambiguous},
	} {
		srv, err := faultserver.Start(tt.step)
		if err != nil {
			t.Fatal(err)
		}
		srv.SetDefault(tt.step)
		ctx := transport.WithMode(context.Background(), retry.NotSentOnly)
		req, _ := http.NewRequestWithContext(ctx, tt.method, srv.URL()+"/v1/charges", strings.NewReader("{}"))
		c := *client
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.method, tt.step, err)
		}
		resp.Body.Close()
		srv.Close()
		r := journal.ReportCall("w", resp, nil)
		if r.To != tt.to || r.Phase != rubicon.Answered || r.Evidence["status"] != tt.step.Status {
			t.Errorf("%s answered %s: %+v, want %s", tt.method, tt.step, r, tt.to)
		}
	}
}

func TestErrorsMatchTheirSentinels(t *testing.T) {
	for _, tt := range []struct {
		err    error
		target error
	}{
		{&journal.NotFoundError{Key: "k"}, journal.ErrNotFound},
		{&journal.TransitionError{Key: "k", From: journal.Applied, To: journal.Pending, Why: "final"}, journal.ErrIllegalTransition},
		{&journal.LeaseError{Key: "k", Worker: "w"}, journal.ErrLeaseLost},
	} {
		if !errors.Is(fmt.Errorf("wrapped: %w", tt.err), tt.target) {
			t.Errorf("%T does not match %v", tt.err, tt.target)
		}
		if msg := tt.err.Error(); msg == "" || !strings.Contains(msg, `"k"`) {
			t.Errorf("%T message %q does not name the key", tt.err, msg)
		}
	}
}
