package retry

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func input(method string, mode Mode, sent bool, status int) Input {
	return Input{Method: method, Mode: mode, Attempt: 1, Sent: sent, Status: status, Start: t0, Now: t0, Jitter: 0.5}
}

// TestDecideFollowsTheRetryTable checks every cell of the architecture's
// retry table.
func TestDecideFollowsTheRetryTable(t *testing.T) {
	p := MustNew(DefaultConfig())
	type failure struct {
		name   string
		sent   bool
		status int
	}
	failures := []failure{
		{"not_sent", false, 0},
		{"sent_no_answer", true, 0},
		{"408", true, 408}, {"429", true, 429}, {"502", true, 502}, {"503", true, 503}, {"504", true, 504},
		{"500", true, 500}, {"400", true, 400}, {"404", true, 404}, {"409", true, 409}, {"501", true, 501},
	}
	transient := map[string]bool{"sent_no_answer": true, "408": true, "429": true, "502": true, "503": true, "504": true}

	for _, method := range []string{"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "POST", "PATCH", "DELETE", "PURGE", "CONNECT"} {
		for _, mode := range []Mode{ByMethod, OptedIn, NotSentOnly} {
			for _, f := range failures {
				var want bool
				switch {
				case f.name == "not_sent":
					want = true
				case mode == NotSentOnly:
					want = false
				case mode == OptedIn:
					want = transient[f.name]
				default:
					want = transient[f.name] && IsSafeMethod(method)
				}
				d := p.Decide(input(method, mode, f.sent, f.status))
				if d.Retry != want {
					t.Errorf("%s %s %s: Retry = %v (%s), want %v", method, mode, f.name, d.Retry, d.Reason, want)
				}
				if d.Reason == "" {
					t.Errorf("%s %s %s: no reason given", method, mode, f.name)
				}
			}
		}
	}
}

func TestDecideNonIdempotentSentStopsWithReason(t *testing.T) {
	p := MustNew(DefaultConfig())
	d := p.Decide(input("POST", ByMethod, true, 0))
	if d.Retry || d.Reason != StopSentNotIdempotent {
		t.Fatalf("POST sent: %+v, want stop with %s", d, StopSentNotIdempotent)
	}
	d = p.Decide(input("POST", ByMethod, false, 0))
	if !d.Retry || d.Reason != RetryNotSent {
		t.Fatalf("POST not sent: %+v, want retry with %s", d, RetryNotSent)
	}
}

func TestDecideNotProcessedStatusesAreRetriedForEveryMethod(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NotProcessedStatuses = []int{429}
	p := MustNew(cfg)
	for _, m := range []string{"POST", "DELETE", "PATCH"} {
		if d := p.Decide(input(m, ByMethod, true, 429)); !d.Retry || d.Reason != RetryNotProcessed {
			t.Errorf("%s 429 with 429 declared not processed: %+v, want retry", m, d)
		}
		if d := p.Decide(input(m, ByMethod, true, 503)); d.Retry {
			t.Errorf("%s 503 (not declared): %+v, want stop", m, d)
		}
		if d := p.Decide(input(m, NotSentOnly, true, 429)); d.Retry {
			t.Errorf("%s 429 in not_sent_only mode: %+v, want stop", m, d)
		}
	}
}

func TestDecideStopsWhenAttemptsAreSpent(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxAttempts = 3
	p := MustNew(cfg)
	in := input("GET", ByMethod, true, 503)
	for attempt := 1; attempt <= 4; attempt++ {
		in.Attempt = attempt
		d := p.Decide(in)
		if want := attempt < 3; d.Retry != want {
			t.Errorf("attempt %d: Retry = %v, want %v", attempt, d.Retry, want)
		}
		if attempt >= 3 && d.Reason != StopAttempts {
			t.Errorf("attempt %d: reason %s, want %s", attempt, d.Reason, StopAttempts)
		}
	}
}

func TestBackoffIsFullJitterDoublingAndCapped(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxAttempts = 100
	cfg.BaseDelay = 10 * time.Millisecond
	cfg.MaxDelay = 300 * time.Millisecond
	p := MustNew(cfg)
	for attempt := 1; attempt < 80; attempt++ {
		window := min(cfg.MaxDelay, cfg.BaseDelay<<min(attempt-1, 20))
		for _, j := range []float64{0, 0.25, 0.999999} {
			in := input("GET", ByMethod, false, 0)
			in.Attempt, in.Jitter = attempt, j
			d := p.Decide(in)
			if !d.Retry {
				t.Fatalf("attempt %d: no retry: %+v", attempt, d)
			}
			want := time.Duration(j * float64(window))
			if d.Wait != want {
				t.Errorf("attempt %d jitter %v: wait %s, want %s", attempt, j, d.Wait, want)
			}
			if d.Wait < 0 || d.Wait >= window {
				t.Errorf("attempt %d: wait %s outside [0, %s)", attempt, d.Wait, window)
			}
		}
	}
}

func TestDecideHonoursRetryAfter(t *testing.T) {
	p := MustNew(DefaultConfig())
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{"date", http.Header{"Retry-After": {t0.Add(7 * time.Second).Format(http.TimeFormat)}}, 7 * time.Second},
		{"milliseconds", http.Header{"Retry-After-Ms": {"250"}}, 250 * time.Millisecond},
		{"date in the past", http.Header{"Retry-After": {t0.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
	}
	for _, tt := range tests {
		in := input("GET", ByMethod, true, 503)
		in.Header = tt.header
		d := p.Decide(in)
		if !d.Retry || d.RetryAfter != tt.want {
			t.Errorf("%s: %+v, want retry after %s", tt.name, d, tt.want)
		}
		if tt.want > 0 && d.Wait != tt.want {
			t.Errorf("%s: wait %s, want the requested %s", tt.name, d.Wait, tt.want)
		}
	}
}

func TestDecideRetryAfterBeyondDeadlineStopsAtOnceWithTheRequestedWait(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Deadline = 2 * time.Second
	p := MustNew(cfg)
	in := input("GET", ByMethod, true, 429)
	in.Header = http.Header{"Retry-After": {"5"}}
	d := p.Decide(in)
	if d.Retry || d.Reason != StopRetryAfterTooLong || d.RetryAfter != 5*time.Second {
		t.Fatalf("Retry-After 5s with 2s left: %+v, want stop carrying 5s", d)
	}

	// The context's deadline counts too, when it is the sooner one.
	cfg.Deadline = 0
	p = MustNew(cfg)
	in.Deadline = t0.Add(time.Second)
	if d := p.Decide(in); d.Retry || d.RetryAfter != 5*time.Second {
		t.Fatalf("Retry-After 5s with a context deadline 1s away: %+v, want stop carrying 5s", d)
	}
}

func TestDecideRetryAfterAboveMaxStops(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxRetryAfter = 10 * time.Second
	p := MustNew(cfg)
	in := input("GET", ByMethod, true, 503)
	in.Header = http.Header{"Retry-After": {"11"}}
	if d := p.Decide(in); d.Retry || d.Reason != StopRetryAfterTooLong || d.RetryAfter != 11*time.Second {
		t.Fatalf("Retry-After 11s with a 10s maximum: %+v", d)
	}
}

func TestCallDeadlineTakesTheSooner(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Deadline = 10 * time.Second
	p := MustNew(cfg)
	if d, ok := p.CallDeadline(t0, time.Time{}); !ok || !d.Equal(t0.Add(10*time.Second)) {
		t.Errorf("policy only: %v %v", d, ok)
	}
	if d, ok := p.CallDeadline(t0, t0.Add(3*time.Second)); !ok || !d.Equal(t0.Add(3*time.Second)) {
		t.Errorf("context sooner: %v %v", d, ok)
	}
	if d, ok := p.CallDeadline(t0, t0.Add(30*time.Second)); !ok || !d.Equal(t0.Add(10*time.Second)) {
		t.Errorf("policy sooner: %v %v", d, ok)
	}
	if _, ok := MustNew(DefaultConfig()).CallDeadline(t0, time.Time{}); ok {
		t.Errorf("no deadline anywhere, yet one reported")
	}
}

// TestDecideNeverWaitsPastTheDeadline is a property test: for random
// policies and random failures, a decision to retry always leaves the wait
// inside the deadline.
func TestDecideNeverWaitsPastTheDeadline(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	methods := []string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"}
	statuses := []int{0, 0, 0, 408, 429, 500, 502, 503, 504}
	for i := 0; i < 20000; i++ {
		cfg := DefaultConfig()
		cfg.MaxAttempts = 1 + rng.IntN(10)
		cfg.BaseDelay = time.Duration(1+rng.IntN(1000)) * time.Millisecond
		cfg.MaxDelay = cfg.BaseDelay * time.Duration(1+rng.IntN(50))
		cfg.MaxRetryAfter = time.Duration(rng.IntN(120)) * time.Second
		cfg.Deadline = time.Duration(rng.IntN(30000)) * time.Millisecond
		p := MustNew(cfg)

		elapsed := time.Duration(rng.IntN(30000)) * time.Millisecond
		in := Input{
			Method:  methods[rng.IntN(len(methods))],
			Mode:    Mode(rng.IntN(3)),
			Attempt: 1 + rng.IntN(10),
			Sent:    rng.IntN(2) == 0,
			Status:  statuses[rng.IntN(len(statuses))],
			Start:   t0,
			Now:     t0.Add(elapsed),
			Jitter:  rng.Float64(),
		}
		if rng.IntN(2) == 0 {
			in.Deadline = t0.Add(time.Duration(rng.IntN(30000)) * time.Millisecond)
		}
		switch rng.IntN(3) {
		case 0:
			in.Header = http.Header{"Retry-After": {strconv.Itoa(rng.IntN(60))}}
		case 1:
			in.Header = http.Header{"Retry-After-Ms": {"1500"}}
		}
		d := p.Decide(in)
		if !d.Retry {
			continue
		}
		if deadline, ok := p.CallDeadline(in.Start, in.Deadline); ok && !in.Now.Add(d.Wait).Before(deadline) {
			t.Fatalf("seed %d case %d: retry after %s at %s would pass the deadline %s (input %+v)",
				seed, i, d.Wait, elapsed, deadline.Sub(t0), in)
		}
		if d.Wait < 0 {
			t.Fatalf("seed %d case %d: negative wait %s", seed, i, d.Wait)
		}
		if in.Attempt >= cfg.MaxAttempts {
			t.Fatalf("seed %d case %d: retry after attempt %d of %d", seed, i, in.Attempt, cfg.MaxAttempts)
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	p := MustNew(DefaultConfig())
	in := input("GET", ByMethod, true, 503)
	in.Header = http.Header{"Retry-After": {"1"}}
	b.ReportAllocs()
	for b.Loop() {
		_ = p.Decide(in)
	}
}
