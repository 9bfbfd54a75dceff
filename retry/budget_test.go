package retry

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNewBudgetRejectsInvalidFields(t *testing.T) {
	for _, tt := range []struct {
		field string
		cfg   BudgetConfig
	}{
		{"Ratio", BudgetConfig{Ratio: -0.1, Max: 10}},
		{"Ratio", BudgetConfig{Ratio: 1.5, Max: 10}},
		{"PerSecond", BudgetConfig{Ratio: 0.2, PerSecond: -1, Max: 10}},
		{"Max", BudgetConfig{Ratio: 0.2, Max: 0.5}},
	} {
		if _, err := NewBudget(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("NewBudget(%+v) error = %v, want one naming %s", tt.cfg, err, tt.field)
		}
	}
}

// TestBudgetStopsRetriesInAnOutageAndRecovers simulates a client making one
// call per 10 ms to a host that fails every call, then recovers.
func TestBudgetStopsRetriesInAnOutageAndRecovers(t *testing.T) {
	b, err := NewBudget(BudgetConfig{Ratio: 0.2, PerSecond: 1, Max: 10})
	if err != nil {
		t.Fatal(err)
	}
	const host = "api.example.com"
	now := t0
	calls, retries := 0, 0
	// A 60-second outage; each call would like 3 retries.
	for i := 0; i < 6000; i++ {
		now = now.Add(10 * time.Millisecond)
		b.Call(host, now)
		calls++
		for r := 0; r < 3; r++ {
			if !b.Withdraw(host, now) {
				break
			}
			retries++
		}
	}
	// Allowed: the initial 10, 20 % of calls, and 1 per second.
	limit := 10 + 0.2*float64(calls) + 60 + 1
	if float64(retries) > limit {
		t.Fatalf("%d retries for %d calls during the outage: more than the budget's %v", retries, calls, limit)
	}
	if load := float64(calls+retries) / float64(calls); load > 1.25 {
		t.Fatalf("outage load factor %.2f, want at most 1.25 (without a budget it would be 4)", load)
	}
	if b.Withdraw(host, now) {
		t.Fatalf("budget still has a retry at the end of the outage")
	}

	// Recovery: successful calls refill the budget.
	for i := 0; i < 5; i++ {
		b.Call(host, now)
	}
	if !b.Withdraw(host, now) {
		t.Fatalf("no retry after five successful calls at a 20 %% ratio")
	}
	// Recovery through time alone, for a quiet client.
	now = now.Add(20 * time.Second)
	if got := b.Available(host, now); got != 10 {
		t.Fatalf("after 20 quiet seconds at 1/s the budget holds %v, want the maximum 10", got)
	}
}

func TestBudgetIsPerHost(t *testing.T) {
	b, _ := NewBudget(BudgetConfig{Ratio: 0, PerSecond: 0, Max: 2})
	for i := 0; i < 2; i++ {
		if !b.Withdraw("a", t0) {
			t.Fatalf("withdrawal %d from a refused", i)
		}
	}
	if b.Withdraw("a", t0) {
		t.Fatalf("a overspent")
	}
	if !b.Withdraw("b", t0) {
		t.Fatalf("b's budget was spent by a")
	}
}

func TestBudgetForgetsFullHosts(t *testing.T) {
	b, _ := NewBudget(BudgetConfig{Ratio: 0.5, PerSecond: 0, Max: 2})
	b.Withdraw("a", t0)
	if len(b.hosts) != 1 {
		t.Fatalf("an indebted host is not tracked")
	}
	b.Call("a", t0)
	b.Call("a", t0)
	if len(b.hosts) != 0 {
		t.Fatalf("a full host is still tracked: %d entries", len(b.hosts))
	}
}

func TestBudgetNeverOverspendsUnderConcurrency(t *testing.T) {
	b, _ := NewBudget(BudgetConfig{Ratio: 0, PerSecond: 0, Max: 50})
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for g := 0; g < 16; g++ {
		wg.Go(func() {
			for i := 0; i < 100; i++ {
				if b.Withdraw("h", t0) {
					mu.Lock()
					granted++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if granted != 50 {
		t.Fatalf("granted %d retries from a budget of 50", granted)
	}
}
