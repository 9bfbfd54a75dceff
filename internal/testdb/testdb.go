// Package testdb gives tests databases of their own on both backends:
// SQLite files in the test's temporary directory, and PostgreSQL schemas on
// the test server ($RUBICON_TEST_POSTGRES, by default the local server's
// database test; "off" skips PostgreSQL), dropped when the test ends.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// Env names the PostgreSQL server the tests use; "off" skips PostgreSQL.
const Env = "RUBICON_TEST_POSTGRES"

// DefaultPostgres is the server the tests use when Env is unset.
const DefaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Backend makes fresh, empty databases of one kind.
type Backend struct {
	Name string
	// DSN returns the DSN of a new, empty database, removed when t ends.
	DSN func(t testing.TB) string
}

// Backends returns SQLite and, unless Env is "off", PostgreSQL.
func Backends() []Backend {
	bs := []Backend{{Name: "sqlite", DSN: func(t testing.TB) string { return filepath.Join(t.TempDir(), "test.db") }}}
	if os.Getenv(Env) != "off" {
		bs = append(bs, Backend{Name: "postgres", DSN: Postgres})
	}
	return bs
}

// Postgres creates a PostgreSQL schema for one test and returns a DSN
// whose search_path points at it. It skips the test when Env is "off".
func Postgres(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	switch base {
	case "off":
		t.Skip("PostgreSQL is off")
	case "":
		base = DefaultPostgres
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	schema := "rubicon_test_" + strings.ToLower(rand.Text()[:12])
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("PostgreSQL at %s is needed (set %s to another DSN, or to off to skip): %v", base, Env, err)
	}
	t.Cleanup(func() {
		if db, err := sql.Open("pgx", base); err == nil {
			db.Exec("DROP SCHEMA " + schema + " CASCADE")
			db.Close()
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}
