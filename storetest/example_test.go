package storetest_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/storetest"
)

// A store implementation runs the suite from a test of its own. This is
// how sqlstore's SQLite backend does it; a store of yours opens, and
// reaches behind the journal, its own way.
func ExampleRun() {
	harness := storetest.Harness{
		Open: func(t testing.TB, clock func() time.Time) storetest.Store {
			db, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "conformance.db"), sqlstore.Options{Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
		Update: func(ctx context.Context, s storetest.Store, fn func(storetest.Tx) error) error {
			return s.(*sqlstore.DB).Update(ctx, func(tx *sqlstore.Tx) error { return fn(tx) })
		},
		RewriteAudit: func(t testing.TB, s storetest.Store) (update, remove error) {
			db := s.(*sqlstore.DB).SQL()
			_, update = db.Exec(`UPDATE rubicon_audit SET reason = 'rewritten'`)
			_, remove = db.Exec(`DELETE FROM rubicon_audit`)
			return update, remove
		},
	}
	// In the store's package:
	//
	//	func TestConformance(t *testing.T) { storetest.Run(t, harness) }
	_ = harness
}
