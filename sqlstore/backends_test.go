package sqlstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testdb"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// backend makes fresh, empty databases of one kind.
type backend = testdb.Backend

// backends returns SQLite and PostgreSQL.
func backends() []backend { return testdb.Backends() }

// forEach runs fn as a subtest for each backend.
func forEach(t *testing.T, fn func(t *testing.T, b backend)) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, b)
		})
	}
}

// clock is a settable time source for lease tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// env is an open database with a journal and a ledger on a test clock.
type env struct {
	db    *sqlstore.DB
	j     *journal.Journal
	l     *ledger.Ledger
	clock *clock
	ctx   context.Context
}

const lease = 30 * time.Second

func open(t testing.TB, b backend) *env {
	t.Helper()
	return openDSN(t, b.DSN(t))
}

func openDSN(t testing.TB, dsn string) *env {
	t.Helper()
	ctx := context.Background()
	c := newClock()
	// The store's clock judges leases: the test moves it.
	db, err := sqlstore.Open(ctx, dsn, sqlstore.Options{Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &env{
		db:    db,
		j:     journal.New(db.JournalStore(), journal.Options{Lease: lease, Now: c.Now}),
		l:     ledger.New(db.LedgerStore(), c.Now),
		clock: c,
		ctx:   ctx,
	}
}

// insert records a pending operation of kind "charge".
func (e *env) insert(t testing.TB, key string) journal.Operation {
	t.Helper()
	op, created, err := e.j.Insert(e.ctx, journal.NewOperation{Key: key, Kind: "charge", Subject: "batch/" + key})
	if err != nil || !created {
		t.Fatalf("insert %s: created %v, %v", key, created, err)
	}
	return op
}

// claimAll gives worker the lease on every claimable "charge" operation.
func (e *env) claimAll(t testing.TB, worker string) {
	t.Helper()
	if _, err := e.j.Claim(e.ctx, "charge", worker, 100); err != nil {
		t.Fatal(err)
	}
}
