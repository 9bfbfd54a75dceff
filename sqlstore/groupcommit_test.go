package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// TestConcurrentWritersFailAlone: when concurrent write transactions share
// a commit, a failing one is rolled back without the others, and a panic
// reaches its own caller.
func TestConcurrentWritersFailAlone(t *testing.T) {
	t.Parallel()
	e := openDSN(t, filepath.Join(t.TempDir(), "g.db"))
	const n = 200
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = e.db.Update(context.Background(), func(tx *sqlstore.Tx) error {
				key := fmt.Sprintf("k%03d", i)
				if _, _, err := e.j.InsertTx(context.Background(), tx, journal.NewOperation{Key: key, Kind: "charge"}); err != nil {
					return err
				}
				if i%3 == 0 {
					return errors.New("refused on purpose")
				}
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		_, getErr := e.j.Get(e.ctx, fmt.Sprintf("k%03d", i))
		if i%3 == 0 {
			if err == nil || !errors.Is(getErr, journal.ErrNotFound) {
				t.Fatalf("transaction %d failed on purpose: error %v, and the row %v", i, err, getErr)
			}
			continue
		}
		if err != nil || getErr != nil {
			t.Fatalf("transaction %d: %v, row: %v", i, err, getErr)
		}
	}

	defer func() {
		if p := recover(); p != "boom" {
			t.Fatalf("recovered %v, want the transaction's own panic", p)
		}
		// The database still works after a panic.
		if _, _, err := e.j.Insert(e.ctx, journal.NewOperation{Key: "after", Kind: "charge"}); err != nil {
			t.Fatalf("after a panic: %v", err)
		}
	}()
	e.db.Update(e.ctx, func(*sqlstore.Tx) error { panic("boom") })
}
