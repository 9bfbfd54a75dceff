package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/storetest"
)

// TestConformance runs the stores' conformance suite against SQLite and
// PostgreSQL.
func TestConformance(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, b backend) {
		storetest.Run(t, harness(b))
	})
}

// harness reaches the backend b for the conformance suite.
func harness(b backend) storetest.Harness {
	return storetest.Harness{
		Open: func(t testing.TB, clock func() time.Time) storetest.Store {
			db, err := sqlstore.Open(context.Background(), b.DSN(t), sqlstore.Options{Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
		Update: func(ctx context.Context, s storetest.Store, fn func(storetest.Tx) error) error {
			return s.(*sqlstore.DB).Update(ctx, func(tx *sqlstore.Tx) error { return fn(tx) })
		},
		Corrupt: func(t testing.TB, s storetest.Store, key string) {
			db := s.(*sqlstore.DB)
			// Not an object on PostgreSQL, whose JSONB takes only JSON; not
			// JSON at all on SQLite.
			damaged := `[1, 2]`
			if db.Backend() == "sqlite" {
				damaged = `{"id": 1`
			}
			if _, err := db.SQL().ExecContext(context.Background(), `UPDATE rubicon_operations SET evidence = $1 WHERE key = $2`, damaged, key); err != nil {
				t.Fatal(err)
			}
		},
		RewriteAudit: func(t testing.TB, s storetest.Store) (update, remove error) {
			db := s.(*sqlstore.DB).SQL()
			_, update = db.ExecContext(context.Background(), `UPDATE rubicon_audit SET reason = 'rewritten'`)
			_, remove = db.ExecContext(context.Background(), `DELETE FROM rubicon_audit`)
			return update, remove
		},
	}
}
