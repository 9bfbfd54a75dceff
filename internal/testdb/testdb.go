// Package testdb gives tests databases of their own on both backends:
// SQLite files in the test's temporary directory, and PostgreSQL schemas on
// the test server ($RUBICON_TEST_POSTGRES, by default the local server's
// database test), dropped when the test ends. A server that cannot be
// reached, or RUBICON_TEST_POSTGRES=off, ends a PostgreSQL test by
// testkit's rule: a skip, or a failure under $RUBICON_TEST_REQUIRE.
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

	"github.com/rubicon-go/rubicon/internal/testkit"
)

// Env names the PostgreSQL server the tests use; "off" treats it as missing.
const Env = "RUBICON_TEST_POSTGRES"

// DefaultPostgres is the server the tests use when Env is unset.
const DefaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Backend makes fresh, empty databases of one kind.
type Backend struct {
	Name string
	// DSN returns the DSN of a new, empty database, removed when t ends.
	DSN func(t testing.TB) string
}

// Backends returns SQLite and PostgreSQL.
func Backends() []Backend {
	return []Backend{
		{Name: "sqlite", DSN: func(t testing.TB) string { return filepath.Join(t.TempDir(), "test.db") }},
		{Name: "postgres", DSN: Postgres},
	}
}

// Postgres creates a PostgreSQL schema for one test and returns a DSN
// whose search_path points at it. A server it cannot reach, or Env "off",
// ends the test by testkit's rule for a missing tool.
func Postgres(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	switch base {
	case "off":
		testkit.Missing(t, testkit.PostgreSQL, Env+" is off")
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
	if err := admin.PingContext(ctx); err != nil {
		testkit.Missing(t, testkit.PostgreSQL, "PostgreSQL at "+base+" cannot be reached ("+err.Error()+")")
	}
	schema := "rubicon_test_" + strings.ToLower(rand.Text()[:12])
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("PostgreSQL at %s answers but a test schema cannot be made there (set %s to another server's DSN): %v", base, Env, err)
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
