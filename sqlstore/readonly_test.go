package sqlstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/sqlstore"
)

// TestReadOnly: a database opened read-only answers reads and refuses
// every write with ErrReadOnly, on both backends; one whose schema is
// older than the program's is refused, naming the upgrade, rather than
// migrated.
func TestReadOnly(t *testing.T) {
	t.Parallel()
	v1 := sqlstore.Migration{Component: "app", Version: 1, Name: "t", SQLite: `CREATE TABLE app_t (x INTEGER)`, Postgres: `CREATE TABLE app_t (x INTEGER)`}
	v2 := sqlstore.Migration{Component: "app", Version: 2, Name: "u", SQLite: `CREATE TABLE app_u (x INTEGER)`, Postgres: `CREATE TABLE app_u (x INTEGER)`}
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.DSN(t)
			db, err := sqlstore.Open(ctx, dsn, sqlstore.Options{Migrations: []sqlstore.Migration{v1}})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(ctx, func(tx *sqlstore.Tx) error {
				_, err := tx.SQL().ExecContext(ctx, `INSERT INTO app_t (x) VALUES (7)`)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			db.Close()

			ro, err := sqlstore.Open(ctx, dsn, sqlstore.Options{Migrations: []sqlstore.Migration{v1}, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			var x int
			if err := ro.View(ctx, func(tx *sqlstore.Tx) error { return tx.SQL().QueryRowContext(ctx, `SELECT x FROM app_t`).Scan(&x) }); err != nil || x != 7 {
				t.Fatalf("read: %d, %v", x, err)
			}
			if err := ro.Update(ctx, func(*sqlstore.Tx) error { return nil }); !errors.Is(err, sqlstore.ErrReadOnly) {
				t.Fatalf("a write to a read-only database: %v", err)
			}
			_, err = sqlstore.Open(ctx, dsn, sqlstore.Options{Migrations: []sqlstore.Migration{v1, v2}, ReadOnly: true})
			if err == nil || !strings.Contains(err.Error(), "needs 2") || !strings.Contains(err.Error(), "write access") {
				t.Fatalf("read-only open of an older schema: %v", err)
			}
		})
	}
}
