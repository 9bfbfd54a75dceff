package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// TestSQLiteClockIsTheBootClock: SQLite's store clock is the host's boot
// clock, anchored to the wall clock once per boot in the database, so that
// every process of a boot reads the same time and a step of the wall
// clock moves no lease. Anchored an hour earlier than the wall clock (as
// if the wall clock had been stepped an hour ahead since), the store's
// time stays an hour behind the wall clock, for every process that opens
// the database.
func TestSQLiteClockIsTheBootClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	now := func(db *sqlstore.DB) time.Time {
		var at time.Time
		if err := db.Update(ctx, func(tx *sqlstore.Tx) (err error) {
			at, err = tx.Now(ctx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return at
	}
	db, err := sqlstore.Open(ctx, path, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(now(db)); d < -time.Second || d > time.Second {
		t.Fatalf("a new database's clock is %s from the wall clock", d)
	}
	if _, err := db.SQL().ExecContext(ctx, `UPDATE rubicon_clock SET wall_us = wall_us - $1`, time.Hour.Microseconds()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for range 2 { // as two processes of this boot
		db, err := sqlstore.Open(ctx, path, sqlstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(now(db)); d < time.Hour-time.Second || d > time.Hour+time.Second {
			t.Fatalf("the store's clock is %s behind the wall clock, want an hour: it follows the boot clock from its anchor", d)
		}
		// A lease is taken by it.
		j := journal.New(db.JournalStore(), journal.Options{Lease: time.Minute})
		j.Insert(ctx, journal.NewOperation{Key: "k" + time.Now().String(), Kind: "charge"})
		ops, err := j.Claim(ctx, "charge", "w", 1)
		if err != nil || len(ops) != 1 || time.Until(ops[0].LeaseExpires) > -time.Hour+2*time.Minute {
			t.Fatalf("a lease taken by the store's clock: %+v, %v", ops, err)
		}
		db.Close()
	}
	var _ journal.Clock = (*sqlstore.Tx)(nil)
}
