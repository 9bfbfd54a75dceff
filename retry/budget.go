package retry

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// BudgetConfig holds the settings of a [Budget].
type BudgetConfig struct {
	// Ratio is the share of calls that may be retried: each call earns Ratio
	// of a retry (0.2 allows one retry per five calls). Between 0 and 1.
	Ratio float64
	// PerSecond is a floor: retries earned per second whatever the traffic,
	// so that a quiet client can still retry. Not negative.
	PerSecond float64
	// Max is the most retries a host can have saved up, and what a host
	// starts with. At least 1.
	Max float64
}

// DefaultBudgetConfig returns the defaults: 20 % of calls plus one retry per
// second, at most 10 saved up per host.
func DefaultBudgetConfig() BudgetConfig {
	return BudgetConfig{Ratio: 0.2, PerSecond: 1, Max: 10}
}

// Budget limits retries to a share of the calls made, per host, in the
// spirit of Finagle's retry budget and gRPC's retry throttling: during a
// sustained outage a client sends about (1 + Ratio) times its normal load
// instead of MaxAttempts times, and it recovers as calls succeed or time
// passes. Times are passed in, so the Budget does no I/O. It is safe for
// concurrent use.
type Budget struct {
	cfg BudgetConfig

	mu sync.Mutex
	// hosts holds only hosts below Max: a full bucket behaves exactly like a
	// missing one, so the map stays as small as the set of hosts that
	// recently retried.
	hosts map[string]*bucket
	// tracked mirrors len(hosts), so that Call, on every request, skips the
	// lock while no host has retried. A deposit that races with a host's
	// first withdrawal may be lost, which only ever means fewer retries.
	tracked atomic.Int64
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewBudget checks cfg and returns a Budget.
func NewBudget(cfg BudgetConfig) (*Budget, error) {
	switch {
	case math.IsNaN(cfg.Ratio) || cfg.Ratio < 0 || cfg.Ratio > 1:
		return nil, fmt.Errorf("the retry budget's Ratio is %v: it must be between 0 and 1", cfg.Ratio)
	case math.IsNaN(cfg.PerSecond) || math.IsInf(cfg.PerSecond, 0) || cfg.PerSecond < 0:
		return nil, fmt.Errorf("the retry budget's PerSecond is %v: it must be a number not below 0", cfg.PerSecond)
	case math.IsNaN(cfg.Max) || math.IsInf(cfg.Max, 0) || cfg.Max < 1:
		return nil, fmt.Errorf("the retry budget's Max is %v: it must be at least 1", cfg.Max)
	}
	return &Budget{cfg: cfg, hosts: make(map[string]*bucket)}, nil
}

// Call records a new call (not a retry) to host at now, earning Ratio of a
// retry.
func (b *Budget) Call(host string, now time.Time) {
	if b.tracked.Load() == 0 {
		return
	}
	b.mu.Lock()
	if k, ok := b.hosts[host]; ok {
		b.refill(k, now)
		k.tokens += b.cfg.Ratio
		if k.tokens >= b.cfg.Max-1e-9 {
			delete(b.hosts, host)
			b.tracked.Add(-1)
		}
	}
	b.mu.Unlock()
}

// Withdraw takes one retry from host's budget at now and reports whether
// there was one to take.
func (b *Budget) Withdraw(host string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.hosts[host]
	if !ok {
		k = &bucket{tokens: b.cfg.Max, at: now}
		b.hosts[host] = k
		b.tracked.Add(1)
	} else {
		b.refill(k, now)
	}
	// The epsilon absorbs rounding: five deposits of 0.2 make one retry.
	if k.tokens < 1-1e-9 {
		return false
	}
	k.tokens--
	return true
}

// Available returns the retries host has saved up at now.
func (b *Budget) Available(host string, now time.Time) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.hosts[host]
	if !ok {
		return b.cfg.Max
	}
	b.refill(k, now)
	return k.tokens
}

func (b *Budget) refill(k *bucket, now time.Time) {
	if elapsed := now.Sub(k.at); elapsed > 0 {
		k.tokens = min(b.cfg.Max, k.tokens+elapsed.Seconds()*b.cfg.PerSecond)
		k.at = now
	}
}
