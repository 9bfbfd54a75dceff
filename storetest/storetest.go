// Package storetest is the conformance suite of rubicon's stores: every
// behaviour that the journal and the ledger need from storage, as tests
// that any store implementation can run, the way River's driver test suite
// serves its drivers. Package sqlstore runs it against SQLite and
// PostgreSQL; a third store runs it the same way:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Harness{
//			Open: func(t testing.TB, clock func() time.Time) storetest.Store {
//				s := mystore.OpenEmpty(t, clock)
//				t.Cleanup(func() { s.Close() })
//				return s
//			},
//			Update: func(ctx context.Context, s storetest.Store, fn func(storetest.Tx) error) error {
//				return s.(*mystore.Store).Update(ctx, func(tx *mystore.Tx) error { return fn(tx) })
//			},
//		})
//	}
//
// The suite covers the state machine and its audit log, leases and
// recovery, the rules that keep a lease (processes that share a worker
// name, workers whose clocks are skewed or jump, judged by the store's
// clock, the sending deadline, late answers, not applied only after the
// lease, renewals that never shorten a lease and that fail and are tried
// again), claims under concurrency, listing by filter (operations by kind,
// subject prefix, state and key; holds by account, operation and state),
// the ledger's holds and their limit under concurrency, joint transactions
// of a hold and a transition, values at the limits the journal and the
// ledger document (exact evidence numbers, Unicode keys at their longest,
// amounts near the largest), and the refusal of input no store should see.
// Optional hooks (see [Harness]) add the cases that need to reach behind
// the journal: an audit log that the store itself keeps append-only, and a
// damaged row that must not hide the others.
//
// Each area of the suite is a file of its own, its cases named functions
// that run as subtests named by area and case, in parallel: the state
// machine (journal_states.go), claims and recovery (journal_claims.go),
// lists (journal_lists.go), the audit log (journal_audit.go), the rules
// that keep a lease (journal_leases.go), the ledger's holds
// (ledger_holds.go), joint transactions (joint.go) and the limits
// (limits.go).
package storetest

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
)

// Store is a store under test: storage for the journal and for the ledger.
// *sqlstore.DB is one.
type Store interface {
	JournalStore() journal.Store
	LedgerStore() ledger.Store
}

// Tx is a transaction that serves both the journal and the ledger, so that
// a hold and a transition commit together.
type Tx interface {
	journal.Tx
	ledger.Tx
}

// Harness tells the suite how to reach a store implementation.
type Harness struct {
	// Open returns a new, empty store for one test, whose clock (the one
	// that judges leases: see journal.Clock) is clock, so that the suite
	// can move time. It registers the store's closing with t.Cleanup.
	// Required.
	Open func(t testing.TB, clock func() time.Time) Store
	// Update runs fn in one read-write transaction of s whose Tx serves
	// both the journal and the ledger, committed if fn returns nil. Nil
	// skips the cases of joint transactions.
	Update func(ctx context.Context, s Store, fn func(Tx) error) error
	// Corrupt damages, behind the journal's back, the stored evidence of
	// operation key in s so that it can no longer be decoded (invalid
	// JSON, or JSON that is not an object). Nil skips the case.
	Corrupt func(t testing.TB, s Store, key string)
	// RewriteAudit tries, behind the journal's back, to change every entry
	// of s's audit log and then to delete them, and returns what the store
	// answered each time: a store keeps its audit log append-only when both
	// are errors. Nil skips the case.
	RewriteAudit func(t testing.TB, s Store) (update, remove error)
	// Serial runs the cases one at a time, for a store whose stores
	// opened by Open are not independent of each other. By default each
	// case runs in parallel with the others of its area.
	Serial bool
}

// Run runs every case of the suite against the store h reaches, each as a
// subtest of t named by its area and its name ("States/EveryTransition").
// Each case opens a store of its own, and the cases of an area run in
// parallel unless h.Serial; those that time leases on the real clock run
// without the others of their area.
func Run(t *testing.T, h Harness) {
	if h.Open == nil {
		t.Fatal("storetest: Harness.Open is nil: the suite needs a way to open an empty store")
	}
	for _, a := range areas() {
		t.Run(a.name, func(t *testing.T) {
			for _, c := range a.cases {
				t.Run(c.name, func(t *testing.T) {
					if !h.Serial && !c.realClock {
						t.Parallel()
					}
					if c.needs != nil {
						if missing := c.needs(h); missing != "" {
							t.Skipf("the harness has no %s", missing)
						}
					}
					c.run(t, h)
				})
			}
		})
	}
}

// An area is the cases of one part of what the journal and the ledger
// need from a store, in a file of its own.
type area struct {
	name  string
	cases []testCase
}

// areas lists the suite's areas, each with its cases.
func areas() []area {
	return []area{
		{"States", stateCases()},
		{"Claims", claimCases()},
		{"Lists", listCases()},
		{"Audit", auditCases()},
		{"LeaseRules", leaseCases()},
		{"Ledger", ledgerCases()},
		{"Joint", jointCases()},
		{"Limits", limitCases()},
		{"Guards", guardCases()},
	}
}

// testCase is one case of the suite.
type testCase struct {
	name string
	// needs names the optional hook the case needs and the harness lacks.
	needs func(Harness) string
	// realClock marks a case that times leases on the real clock, which
	// other cases running at once could delay past them.
	realClock bool
	run       func(t *testing.T, h Harness)
}

func needsUpdate(h Harness) string {
	if h.Update == nil {
		return "Update"
	}
	return ""
}

// lease is the journal's lease in the suite.
const lease = 30 * time.Second

// clock is a settable time source for lease tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)} }

// Now returns the clock's time.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// env is an open store with a journal and a ledger on a test clock.
type env struct {
	h     Harness
	s     Store
	j     *journal.Journal
	l     *ledger.Ledger
	clock *clock
	ctx   context.Context
}

func open(t testing.TB, h Harness) *env {
	t.Helper()
	c := newClock()
	s := h.Open(t, c.Now)
	return &env{
		h:     h,
		s:     s,
		j:     journal.New(s.JournalStore(), journal.Options{Lease: lease, Now: c.Now}),
		l:     ledger.New(s.LedgerStore(), c.Now),
		clock: c,
		ctx:   context.Background(),
	}
}

// update runs fn in a joint transaction.
func (e *env) update(fn func(Tx) error) error { return e.h.Update(e.ctx, e.s, fn) }

// insert records a pending operation of kind "charge".
func (e *env) insert(t testing.TB, key string) journal.Operation {
	t.Helper()
	op, created, err := e.j.Insert(e.ctx, journal.NewOperation{Key: key, Kind: "charge", Subject: "batch/" + key})
	if err != nil || !created {
		t.Fatalf("insert %s: created %v, %v", key, created, err)
	}
	return op
}

// claim claims key for worker; key must be among the claimable operations.
func (e *env) claim(t testing.TB, key, worker string) {
	t.Helper()
	ops, err := e.j.Claim(e.ctx, "charge", worker, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		if op.Key == key {
			return
		}
	}
	t.Fatalf("claim by %s did not return %s (got %d operations)", worker, key, len(ops))
}

// into records an operation with key and drives it into state through the
// state machine, with worker w1.
func (e *env) into(t testing.TB, key string, state journal.State) {
	t.Helper()
	const w = "w1"
	e.insert(t, key)
	if state == journal.Pending {
		return
	}
	e.claim(t, key, w)
	var err error
	switch state {
	case journal.FailedSafe:
		_, err = e.j.Record(e.ctx, key, journal.Report{Worker: w, To: journal.FailedSafe, Phase: "not_sent", Detail: "proxy failed"})
	case journal.Sending:
		_, err = e.j.Send(e.ctx, key, w)
	default:
		if _, err = e.j.Send(e.ctx, key, w); err == nil {
			_, err = e.j.Record(e.ctx, key, journal.Report{Worker: w, To: state, Detail: "test"})
		}
	}
	if err != nil {
		t.Fatalf("drive %s into %s: %v", key, state, err)
	}
	op, err := e.j.Get(e.ctx, key)
	if err != nil || op.State != state {
		t.Fatalf("drive %s into %s: now %s, %v", key, state, op.State, err)
	}
}

func uniqueKey(prefix string) string { return fmt.Sprintf("%s-%s", prefix, rand.Text()[:8]) }
