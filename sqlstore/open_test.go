package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
)

func TestUnwritableDatabasePaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "missing", "r.db"), "does not exist"},
		{filepath.Join(file, "r.db"), "not a directory"},
		{dir, "is a directory"},
		{"/proc/rubicon.db", "not writable"},
	} {
		_, err := sqlstore.Open(context.Background(), tt.path, sqlstore.Options{})
		if err == nil || !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%s): %v; want an error naming the path and saying %q", tt.path, err, tt.want)
		}
	}
	if os.Geteuid() != 0 { // permissions do not bind root
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o500)
		_, err := sqlstore.Open(context.Background(), filepath.Join(ro, "r.db"), sqlstore.Options{})
		if err == nil || !strings.Contains(err.Error(), "not writable") {
			t.Errorf("Open in a read-only directory: %v", err)
		}
	}
}

// TestLockedDatabaseWaitsThenFails holds SQLite's write lock from another
// connection: a write waits for the busy timeout, then fails clearly.
func TestLockedDatabaseWaitsThenFails(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "locked.db")
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, path, sqlstore.Options{BusyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	j := journal.New(db.JournalStore(), journal.Options{})

	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	_, _, err = j.Insert(ctx, journal.NewOperation{Key: "k", Kind: "charge"})
	waited := time.Since(start)
	if !errors.Is(err, sqlstore.ErrLocked) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "300ms") {
		t.Fatalf("write to a locked database: %v; want ErrLocked naming the file and the timeout", err)
	}
	if waited < 250*time.Millisecond {
		t.Fatalf("gave up after %s, before the 300ms busy timeout", waited)
	}

	// Once the lock is released, the same write goes through.
	conn.ExecContext(ctx, "ROLLBACK")
	if _, _, err := j.Insert(ctx, journal.NewOperation{Key: "k", Kind: "charge"}); err != nil {
		t.Fatalf("write after the lock was released: %v", err)
	}
}

func TestMigrations(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		dsn := b.DSN(t)
		app := []sqlstore.Migration{
			{Component: "app", Version: 1, Name: "items",
				SQLite:   "CREATE TABLE app_items (id TEXT PRIMARY KEY, op_key TEXT REFERENCES rubicon_operations (key))",
				Postgres: "CREATE TABLE app_items (id TEXT PRIMARY KEY, op_key TEXT REFERENCES rubicon_operations (key))"},
		}
		db, err := sqlstore.Open(ctx, dsn, sqlstore.Options{Migrations: app})
		if err != nil {
			t.Fatal(err)
		}
		if v, err := db.SchemaVersion(ctx, "rubicon"); err != nil || v != 5 {
			t.Fatalf("rubicon schema version %d, %v", v, err)
		}
		if _, err := db.SQL().ExecContext(ctx, "INSERT INTO app_items (id) VALUES ('x')"); err != nil {
			t.Fatalf("the application's table is missing: %v", err)
		}
		db.Close()

		// Opening again applies nothing and loses nothing; a second
		// application migration is applied.
		app = append(app, sqlstore.Migration{Component: "app", Version: 2, Name: "item size",
			SQLite: "ALTER TABLE app_items ADD COLUMN size INTEGER", Postgres: "ALTER TABLE app_items ADD COLUMN size BIGINT"})
		db, err = sqlstore.Open(ctx, dsn, sqlstore.Options{Migrations: app})
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM app_items WHERE size IS NULL").Scan(&n); err != nil || n != 1 {
			t.Fatalf("after the second migration: %d rows, %v", n, err)
		}
		// A database from a newer program is refused.
		current, err := db.SchemaVersion(ctx, "rubicon")
		if err != nil {
			t.Fatal(err)
		}
		future := fmt.Sprintf("version %d", current+1)
		if _, err := db.SQL().ExecContext(ctx, "INSERT INTO rubicon_schema (component, version, name, applied_at) VALUES ('rubicon', $1, 'from the future', 0)", current+1); err != nil {
			t.Fatal(err)
		}
		db.Close()
		_, err = sqlstore.Open(ctx, dsn, sqlstore.Options{Migrations: app})
		if err == nil || !strings.Contains(err.Error(), "newer version") || !strings.Contains(err.Error(), future) {
			t.Fatalf("opening a newer database: %v", err)
		}
	})
}

func TestBadMigrationsAreRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.db")
	for _, ms := range [][]sqlstore.Migration{
		{{Component: "app", Version: 2, Name: "gap", SQLite: "SELECT 1"}},
		{{Version: 1, Name: "no component", SQLite: "SELECT 1"}},
		{{Component: "app", Version: 1, Name: "broken", SQLite: "CREATE TABLE"}},
	} {
		if db, err := sqlstore.Open(context.Background(), path, sqlstore.Options{Migrations: ms}); err == nil {
			db.Close()
			t.Errorf("migrations %+v accepted", ms)
		}
	}
	// The broken migration left nothing behind: a good one applies.
	db, err := sqlstore.Open(context.Background(), path, sqlstore.Options{Migrations: []sqlstore.Migration{{Component: "app", Version: 1, Name: "ok", SQLite: "CREATE TABLE t (x INTEGER)"}}})
	if err != nil {
		t.Fatalf("after a failed migration: %v", err)
	}
	db.Close()
}

func TestOpenRejectsBadOptions(t *testing.T) {
	t.Parallel()
	_, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), sqlstore.Options{Synchronous: "OFF"})
	if err == nil || !strings.Contains(err.Error(), "OFF") {
		t.Fatalf("Synchronous OFF: %v", err)
	}
}

// TestUnreadablePostgresURLs: a postgres:// DSN that the driver cannot
// read is refused with ErrNotPostgresURL, naming the URL without its
// password and saying what to write, even where the URL does not parse.
func TestUnreadablePostgresURLs(t *testing.T) {
	for _, dsn := range []string{"postgres://ann:s3cret@db.example/%zz", "postgres://ann:s3cret@db.example:99999/x"} {
		_, err := sqlstore.Open(context.Background(), dsn, sqlstore.Options{})
		if !errors.Is(err, sqlstore.ErrNotPostgresURL) || strings.Contains(err.Error(), "s3cret") ||
			!strings.Contains(err.Error(), "ann:xxxxx@db.example") || !strings.Contains(err.Error(), "give postgres://USER@HOST:PORT/DATABASE") {
			t.Errorf("Open(%q): %v; want ErrNotPostgresURL, naming the URL without its password and what to give", dsn, err)
		}
	}
}

// TestMemoryDatabaseIsOneDatabase: ":memory:" gives one database that
// reads and writes share, not one per connection.
func TestMemoryDatabaseIsOneDatabase(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{":memory:", "sqlite::memory:", "file::memory:", "file:mem.db?mode=memory"} {
		e := openDSN(t, dsn)
		e.insert(t, "k")
		if _, err := e.l.Open(e.ctx, "acct", "micro-USD", 10); err != nil {
			t.Fatalf("%s: open an account: %v", dsn, err)
		}
		// Reads, concurrent with writes.
		var wg sync.WaitGroup
		errs := make(chan error, 40)
		for i := range 20 {
			wg.Go(func() {
				_, _, err := e.j.Insert(e.ctx, journal.NewOperation{Key: fmt.Sprintf("c%d", i), Kind: "charge"})
				errs <- err
			})
			wg.Go(func() {
				_, err := e.j.Get(e.ctx, "k")
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("%s: %v", dsn, err)
			}
		}
		ops, err := e.j.List(e.ctx, journal.Filter{})
		if err != nil || len(ops) != 21 {
			t.Fatalf("%s: list: %d operations, %v; want 21", dsn, len(ops), err)
		}
		if e.db.Backend() != "sqlite" {
			t.Fatalf("%s: backend %s", dsn, e.db.Backend())
		}
	}
	if entries, _ := os.ReadDir("."); slices.ContainsFunc(entries, func(d os.DirEntry) bool { return strings.Contains(d.Name(), "mem") }) {
		t.Fatalf("an in-memory database left a file behind: %v", entries)
	}
}

// TestFileURIs: a file: URI names its file, percent-escapes decoded, and
// parameters are refused by name rather than taken into the file's name.
func TestFileURIs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tt := range []struct {
		dsn, file string
	}{
		{"file:" + dir + "/uri.db", "uri.db"},
		{"file://" + dir + "/hosted.db", "hosted.db"},
		{"file://localhost" + dir + "/local.db", "local.db"},
		{"sqlite:file:" + dir + "/a%20b.db", "a b.db"},
		{"file:" + dir + "/rw.db?mode=rwc", "rw.db"},
	} {
		db, err := sqlstore.Open(context.Background(), tt.dsn, sqlstore.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tt.dsn, err)
		}
		db.Close()
		if _, err := os.Stat(filepath.Join(dir, tt.file)); err != nil {
			t.Errorf("%s: the database is not %s: %v", tt.dsn, tt.file, err)
		}
	}
	for _, tt := range []struct {
		dsn, want string
	}{
		{"file:" + dir + "/ro.db?mode=ro", "mode=ro"},
		{"file:" + dir + "/p.db?_pragma=journal_mode(DELETE)", "_pragma"},
		{"file:" + dir + "/c.db?cache=shared", "cache"},
		{"file://db.example.com/x.db", "db.example.com"},
		{"file:" + dir + "/f.db#frag", "fragment"},
		{"", "no database path"},
	} {
		_, err := sqlstore.Open(context.Background(), tt.dsn, sqlstore.Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%q): %v; want an error mentioning %q", tt.dsn, err, tt.want)
		}
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, d := range entries {
		if !strings.HasSuffix(d.Name(), "-wal") && !strings.HasSuffix(d.Name(), "-shm") {
			names = append(names, d.Name())
		}
	}
	if want := "a b.db,hosted.db,local.db,rw.db,uri.db"; strings.Join(names, ",") != want {
		t.Fatalf("files made: %v; want %s and nothing named after a parameter", names, want)
	}
}

// TestUpgradeKeepsTheAuditLog: a database made at schema version 1 is
// brought to the current version with its audit log intact, ids included,
// and still append-only.
func TestUpgradeKeepsTheAuditLog(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		dsn := b.DSN(t)
		driver, file, rawDSN := "sqlite", "schema/core_sqlite_1.sql", "file:"+dsn
		if b.Name == "postgres" {
			driver, file, rawDSN = "pgx", "schema/core_postgres_1.sql", dsn
		}
		v1, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := sql.Open(driver, rawDSN)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range []string{
			string(v1),
			`CREATE TABLE rubicon_schema (component TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL, applied_at BIGINT NOT NULL, PRIMARY KEY (component, version))`,
			`INSERT INTO rubicon_schema VALUES ('rubicon', 1, 'journal and ledger', 0)`,
			`INSERT INTO rubicon_operations (key, kind, state, created_at, updated_at) VALUES ('old', 'charge', 'pending', 1, 1)`,
			`INSERT INTO rubicon_audit (op_key, from_state, to_state, at, actor, reason) VALUES ('old', '', 'pending', 1, 'journal', 'recorded')`,
		} {
			if _, err := raw.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("making a version 1 database: %v", err)
			}
		}
		raw.Close()

		e := openDSN(t, dsn)
		if v, err := e.db.SchemaVersion(ctx, "rubicon"); err != nil || v != 5 {
			t.Fatalf("after the upgrade: version %d, %v", v, err)
		}
		before, err := e.j.History(ctx, "old")
		if err != nil || len(before) != 1 || before[0].Reason != "recorded" {
			t.Fatalf("the audit log after the upgrade: %+v, %v", before, err)
		}
		e.claimAll(t, "w1")
		if _, err := e.j.Send(ctx, "old", "w1"); err != nil {
			t.Fatal(err)
		}
		after, _ := e.j.History(ctx, "old")
		if len(after) != 2 || after[1].ID <= before[0].ID || after[0].ID != before[0].ID {
			t.Fatalf("ids after the upgrade: %d then %d", after[0].ID, after[len(after)-1].ID)
		}
		if _, err := e.db.SQL().ExecContext(ctx, `DELETE FROM rubicon_audit`); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("deleting the upgraded audit log: %v", err)
		}
	})
}
