package retry

import (
	"fmt"
	"testing"

	"github.com/rubicon-go/rubicon"
)

const (
	applied    = rubicon.Applied
	notApplied = rubicon.NotApplied
	unknown    = rubicon.Unknown
)

// writeOutcomes is the architecture's table "what an answer proves" for a
// request with an effect, one row per status class and every status it
// names.
var writeOutcomes = []struct {
	statuses []int
	want     rubicon.Outcome
}{
	{[]int{100, 102, 103}, unknown}, // not a final answer
	{[]int{101}, applied},
	{[]int{200, 201, 202, 203, 204, 205, 206, 299}, applied},
	{[]int{303}, applied},
	{[]int{307, 308}, notApplied},
	{[]int{300, 301, 302, 304, 305, 306, 399}, unknown},
	{[]int{408, 429}, notApplied},
	{[]int{400, 401, 402, 403, 404, 405, 409, 410, 412, 413, 422, 425, 451, 499}, notApplied},
	{[]int{500, 501, 502, 503, 504, 505, 511, 599}, unknown},
	{[]int{0, 600, 999}, unknown}, // not an HTTP status
}

// TestOutcomeFollowsTheTable checks every status class against Outcome, for
// writes in every mode, for reads, and for a GET that costs money.
func TestOutcomeFollowsTheTable(t *testing.T) {
	type request struct {
		method string
		mode   Mode
		read   bool
	}
	var requests []request
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE", "PURGE"} {
		for _, mode := range []Mode{ByMethod, OptedIn, NotSentOnly} {
			requests = append(requests, request{m, mode, false})
		}
	}
	for _, m := range []string{"GET", "HEAD", "OPTIONS", "TRACE", ""} {
		requests = append(requests, request{m, ByMethod, true}, request{m, OptedIn, true}, request{m, NotSentOnly, false})
	}
	for _, req := range requests {
		name := fmt.Sprintf("%q %s", req.method, req.mode)
		for _, row := range writeOutcomes {
			for _, s := range row.statuses {
				want := row.want
				if req.read && want != applied {
					want = notApplied // a read has no effect to apply
				}
				got := Outcome(Result{Method: req.method, Mode: req.mode, Phase: rubicon.Answered, Status: s})
				if got != want {
					t.Errorf("%s answered %d: %s, want %s", name, s, got, want)
				}
			}
		}
		if got := Outcome(Result{Method: req.method, Mode: req.mode, Phase: rubicon.NotSent}); got != notApplied {
			t.Errorf("%s not sent: %s, want not_applied", name, got)
		}
		wantSent := unknown
		if req.read {
			wantSent = notApplied
		}
		if got := Outcome(Result{Method: req.method, Mode: req.mode, Phase: rubicon.Sent}); got != wantSent {
			t.Errorf("%s sent, no answer: %s, want %s", name, got, wantSent)
		}
	}
}

// TestOutcomeOfDeclaredStatuses: a status the API declares "not processed"
// is not applied; a success stays applied whatever is declared.
func TestOutcomeOfDeclaredStatuses(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NotProcessedStatuses = []int{429, 503}
	p := MustNew(cfg)
	for _, tt := range []struct {
		status int
		want   rubicon.Outcome
	}{{503, notApplied}, {429, notApplied}, {502, unknown}, {500, unknown}, {201, applied}} {
		got := p.Outcome(Result{Method: "POST", Phase: rubicon.Answered, Status: tt.status})
		if got != tt.want {
			t.Errorf("POST answered %d with 429 and 503 declared: %s, want %s", tt.status, got, tt.want)
		}
	}
	if got := Outcome(Result{Method: "POST", Phase: rubicon.Answered, Status: 500, NotProcessed: true}); got != notApplied {
		t.Errorf("a 500 declared not processed: %s", got)
	}
	if got := p.Outcome(Result{Method: "POST", Phase: rubicon.Sent}); got != unknown {
		t.Errorf("no answer, with statuses declared: %s", got)
	}
	if got := MustNew(DefaultConfig()).Outcome(Result{Method: "POST", Phase: rubicon.Answered, Status: 503}); got != unknown {
		t.Errorf("503 under the default policy: %s", got)
	}
}
