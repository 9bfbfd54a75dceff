package transport_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// deadlineSlack is what the runtime may add after a deadline fires before
// the call returns: timers, goroutine scheduling, the race detector.
const deadlineSlack = 150 * time.Millisecond

// TestTotalDurationNeverExceedsTheDeadline is a property test over random
// fault scripts and random policies: a call never outlives its deadline,
// no wait is started that would end past it, and an unsafe method that was
// not opted in never reaches the server twice.
func TestTotalDurationNeverExceedsTheDeadline(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RUBICON_PROPERTY_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	cases := 40
	if testing.Short() {
		cases = 10
	}
	var mu sync.Mutex
	var worst time.Duration
	var wg sync.WaitGroup
	for i := range cases {
		script := randomScript(rng)
		cfg := retry.DefaultConfig()
		cfg.Deadline = time.Duration(30+rng.IntN(220)) * time.Millisecond
		cfg.BaseDelay = time.Duration(1+rng.IntN(20)) * time.Millisecond
		cfg.MaxDelay = cfg.BaseDelay * time.Duration(1+rng.IntN(8))
		cfg.MaxAttempts = 1 + rng.IntN(8)
		cfg.MaxRetryAfter = time.Duration(rng.IntN(2000)) * time.Millisecond
		if rng.IntN(2) == 0 {
			cfg.AttemptTimeout = time.Duration(10+rng.IntN(200)) * time.Millisecond
		}
		method := []string{"GET", "POST", "DELETE", "PATCH", "PUT", "HEAD"}[rng.IntN(6)]
		optIn := rng.IntN(3) == 0
		h2c := rng.IntN(4) == 0
		if h2c && rng.IntN(2) == 0 {
			script = append([]faultserver.Step{faultserver.Do(faultserver.RefuseStream)}, script...)
		}
		wg.Go(func() {
			srv, err := faultserver.Start(script...)
			if err != nil {
				t.Error(err)
				return
			}
			defer srv.Close()
			policy := retry.MustNew(cfg)
			rec := &recorder{srv: srv}
			base := http.DefaultTransport.(*http.Transport).Clone()
			if h2c {
				base.Protocols = new(http.Protocols)
				base.Protocols.SetUnencryptedHTTP2(true)
			}
			tr, err := transport.New(base, transport.Options{Policy: policy, Observe: rec.observe, NoBudget: true})
			if err != nil {
				t.Error(err)
				return
			}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			ctx := context.Background()
			if optIn {
				ctx = transport.WithMode(ctx, retry.OptedIn)
			}
			start := time.Now()
			_, err = do(ctx, c, method, srv.URL()+"/op", 64)
			elapsed := time.Since(start)

			mu.Lock()
			worst = max(worst, elapsed-cfg.Deadline)
			mu.Unlock()
			if elapsed > cfg.Deadline+deadlineSlack {
				t.Errorf("case %d (seed %d): %s (h2c %v) with deadline %s took %s; script %v", i, seed, method, h2c, cfg.Deadline, elapsed, script)
			}
			for _, a := range rec.all() {
				if a.Decision.Retry && a.Decision.Wait >= cfg.Deadline {
					t.Errorf("case %d (seed %d): chose to wait %s with a %s deadline", i, seed, a.Decision.Wait, cfg.Deadline)
				}
			}
			if !optIn && !retry.IsSafeMethod(method) && srv.Effects() > 1 {
				t.Errorf("case %d (seed %d): %s (h2c %v) reached the server %d times; script %v", i, seed, method, h2c, srv.Effects(), script)
			}
			if err != nil && rubicon.SafeToRetry(err) && !retry.IsSafeMethod(method) && mayHaveApplied(srv) {
				t.Errorf("case %d (seed %d): %s (h2c %v) said safe to retry after reaching the handler: %v", i, seed, method, h2c, err)
			}
		})
		if i%4 == 3 {
			wg.Wait() // keep a few cases at a time on two cores
		}
	}
	wg.Wait()
	t.Logf("worst overshoot past the deadline: %s", worst)
}

// mayHaveApplied reports whether, by the server's own record, a request
// reached its handler and was not refused: any request but one answered
// with a 4xx, which says the request was not processed.
func mayHaveApplied(srv *faultserver.Server) bool {
	for _, r := range srv.Requests() {
		if r.Status < 400 || r.Status >= 500 {
			return true
		}
	}
	return false
}

func randomScript(rng *rand.Rand) []faultserver.Step {
	n := 1 + rng.IntN(6)
	script := make([]faultserver.Step, n)
	for i := range script {
		switch rng.IntN(10) {
		case 0:
			script[i] = faultserver.Do(faultserver.Refuse)
		case 1:
			script[i] = faultserver.Do(faultserver.ResetOnAccept)
		case 2:
			script[i] = faultserver.Do(faultserver.ResetAfterRead)
		case 3:
			script[i] = faultserver.Do(faultserver.CloseAfterRead)
		case 4:
			script[i] = faultserver.Do(faultserver.Hang)
		case 5:
			script[i] = faultserver.RetryAfter([]int{429, 503}[rng.IntN(2)], time.Duration(rng.IntN(2))*time.Second)
		case 6:
			s := faultserver.Status([]int{408, 502, 504}[rng.IntN(3)])
			s.Header = http.Header{"Retry-After-Ms": {strconv.Itoa(rng.IntN(300))}}
			script[i] = s
		case 7:
			s := faultserver.OK()
			s.Delay = time.Duration(rng.IntN(300)) * time.Millisecond
			script[i] = s
		default:
			script[i] = faultserver.Status(503)
		}
	}
	return script
}

// TestBudgetStopsRetriesDuringAnOutageAndRecovers runs a client against a
// server that fails every request for a while, then recovers.
func TestBudgetStopsRetriesDuringAnOutageAndRecovers(t *testing.T) {
	srv := startServer(t)
	srv.SetDefault(faultserver.Status(503))
	budget, err := retry.NewBudget(retry.BudgetConfig{Ratio: 0.2, PerSecond: 0, Max: 2})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, transport.Options{Budget: budget}, nil)

	const calls = 20
	for range calls {
		if _, err := do(context.Background(), c, "GET", srv.URL(), 0); err != nil {
			t.Fatal(err)
		}
	}
	retries := srv.Accepted() - calls
	// Without a budget: 3 retries per call, 60 in all. With it: the 2 saved
	// up, and one per five calls.
	if limit := 2 + calls/5; retries > limit {
		t.Fatalf("%d retries during the outage, want at most %d", retries, limit)
	}
	// Deep in the outage, the load is the calls plus a fifth.
	before := srv.Accepted()
	for range 10 {
		do(context.Background(), c, "GET", srv.URL(), 0)
	}
	if got := srv.Accepted() - before; got > 12 {
		t.Fatalf("10 calls deep in the outage made %d attempts, want at most 12", got)
	}

	// Recovery: successful calls earn retries back.
	srv.SetDefault(faultserver.OK())
	for range 10 {
		if resp, err := do(context.Background(), c, "GET", srv.URL(), 0); err != nil || resp.StatusCode != 200 {
			t.Fatalf("after the outage: %v", err)
		}
	}
	srv.Then(faultserver.Status(503))
	before = srv.Accepted()
	resp, err := do(context.Background(), c, "GET", srv.URL(), 0)
	if err != nil || resp.StatusCode != 200 || srv.Accepted()-before != 2 {
		t.Fatalf("after recovery a 503 was not retried: %v, %d attempts", err, srv.Accepted()-before)
	}
}
