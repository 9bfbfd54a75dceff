package journal_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/journal"
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

// TestReportFor maps what the transport says to where the operation goes.
func TestReportFor(t *testing.T) {
	for _, tt := range []struct {
		err   error
		to    journal.State
		phase rubicon.Phase
	}{
		{nil, journal.Applied, ""},
		{&rubicon.Error{Phase: rubicon.NotSent, Outcome: rubicon.NotApplied, Attempts: 3}, journal.FailedSafe, rubicon.NotSent},
		{&rubicon.Error{Phase: rubicon.Sent, Outcome: rubicon.Unknown, Attempts: 1, BytesWritten: 300}, journal.Ambiguous, rubicon.Sent},
		{&rubicon.Error{Phase: rubicon.Answered, Outcome: rubicon.NotApplied, StatusCode: 408}, journal.NotApplied, rubicon.Answered},
		{&rubicon.Error{Phase: rubicon.Answered, Outcome: rubicon.Unknown, StatusCode: 503}, journal.Ambiguous, rubicon.Answered},
		{fmt.Errorf("wrapped: %w", &rubicon.Error{Phase: rubicon.NotSent, Outcome: rubicon.NotApplied}), journal.FailedSafe, rubicon.NotSent},
		{errors.New("some other failure"), journal.Ambiguous, rubicon.Sent},
	} {
		r := journal.ReportFor("w", tt.err)
		if r.To != tt.to || r.Phase != tt.phase || r.Worker != "w" {
			t.Errorf("ReportFor(%v) = %+v, want %s in phase %q", tt.err, r, tt.to, tt.phase)
		}
		if tt.err != nil && r.Detail == "" {
			t.Errorf("ReportFor(%v) lost the detail", tt.err)
		}
	}
	r := journal.ReportFor("w", &rubicon.Error{Phase: rubicon.Sent, Outcome: rubicon.Unknown, Attempts: 2, BytesWritten: 300, StatusCode: 0})
	if r.Evidence["bytes_written"] != int64(300) || r.Evidence["attempts"] != 2 {
		t.Errorf("evidence %v", r.Evidence)
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
