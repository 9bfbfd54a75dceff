package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
)

func TestUnwritableDatabasePaths(t *testing.T) {
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
	forEach(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		dsn := b.dsn(t)
		app := []sqlstore.Migration{
			{Component: "app", Version: 1, Name: "items",
				SQLite:   "CREATE TABLE app_items (id TEXT PRIMARY KEY, op_key TEXT REFERENCES rubicon_operations (key))",
				Postgres: "CREATE TABLE app_items (id TEXT PRIMARY KEY, op_key TEXT REFERENCES rubicon_operations (key))"},
		}
		db, err := sqlstore.Open(ctx, dsn, sqlstore.Options{Migrations: app})
		if err != nil {
			t.Fatal(err)
		}
		if v, err := db.SchemaVersion(ctx, "rubicon"); err != nil || v != 1 {
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
		if _, err := db.SQL().ExecContext(ctx, "INSERT INTO rubicon_schema (component, version, name, applied_at) VALUES ('rubicon', 2, 'from the future', 0)"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		_, err = sqlstore.Open(ctx, dsn, sqlstore.Options{Migrations: app})
		if err == nil || !strings.Contains(err.Error(), "newer version") || !strings.Contains(err.Error(), "version 2") {
			t.Fatalf("opening a newer database: %v", err)
		}
	})
}

func TestBadMigrationsAreRefused(t *testing.T) {
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
	_, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), sqlstore.Options{Synchronous: "OFF"})
	if err == nil || !strings.Contains(err.Error(), "OFF") {
		t.Fatalf("Synchronous OFF: %v", err)
	}
}
