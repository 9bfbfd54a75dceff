package sqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// postgresEnv names the PostgreSQL server the tests use; "off" skips the
// PostgreSQL cases.
const postgresEnv = "RUBICON_TEST_POSTGRES"

const defaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

func postgresDSN() string {
	if v := os.Getenv(postgresEnv); v != "" {
		return v
	}
	return defaultPostgres
}

// backend makes fresh, empty databases of one kind.
type backend struct {
	name string
	// dsn returns the DSN of a new empty database, removed when t ends.
	dsn func(t testing.TB) string
}

func backends() []backend {
	bs := []backend{{name: "sqlite", dsn: func(t testing.TB) string {
		return filepath.Join(t.TempDir(), "rubicon.db")
	}}}
	if postgresOn() {
		bs = append(bs, backend{name: "postgres", dsn: freshSchema})
	}
	return bs
}

// postgresOn reports whether the PostgreSQL cases run.
func postgresOn() bool { return os.Getenv(postgresEnv) != "off" }

// freshSchema creates a PostgreSQL schema of its own for one test and
// returns a DSN whose search_path points at it.
func freshSchema(t testing.TB) string {
	t.Helper()
	base := postgresDSN()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	schema := "rubicon_test_" + strings.ToLower(rand.Text()[:12])
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("PostgreSQL at %s is needed (set %s to another DSN, or to off to skip): %v", base, postgresEnv, err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer admin.Close()
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

// forEach runs fn as a subtest for each backend.
func forEach(t *testing.T, fn func(t *testing.T, b backend)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { fn(t, b) })
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
	return openDSN(t, b.dsn(t))
}

func openDSN(t testing.TB, dsn string) *env {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, dsn, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := newClock()
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
