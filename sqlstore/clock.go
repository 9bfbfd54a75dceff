package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The store's clock judges every lease of the journal (journal.Clock), so
// that processes whose own clocks disagree still agree on who holds what:
//
//   - On PostgreSQL it is the server's: clock_timestamp(), read in the
//     transaction that acts on it.
//   - On SQLite, every process that opens the file runs on one host, and
//     reads the host's clock. On Linux that is its boot clock
//     (CLOCK_BOOTTIME), which no step of the wall clock moves, anchored to
//     the wall clock once per boot in the database (rubicon_clock), so that
//     every process of a boot reads the same time, and a step of the wall
//     clock (by NTP, by hand) moves no lease. The store's time may thus
//     drift from the wall clock by the steps it ignored; the next boot
//     anchors it again, never earlier than before. Elsewhere it is the
//     wall clock.
//   - Options.Clock, when set, replaces both, for tests.

// clock is a database's clock.
type clock struct {
	// fixed, if set, is Options.Clock.
	fixed func() time.Time
	// postgres reads the server's clock.
	postgres bool
	// anchor is SQLite's wall time at boot time bootNs; zero: the wall
	// clock.
	anchor time.Time
	bootNs int64
}

// now returns the time by c, in transaction tx.
func (c *clock) now(ctx context.Context, tx *Tx) (time.Time, error) {
	switch {
	case c.fixed != nil:
		return c.fixed(), nil
	case c.postgres:
		var us int64
		if err := tx.q.QueryRowContext(ctx, `SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint`).Scan(&us); err != nil {
			return time.Time{}, fmt.Errorf("reading the database's clock: %w", err)
		}
		return fromMicros(us), nil
	case !c.anchor.IsZero():
		ns, err := bootClock()
		if err != nil {
			return time.Time{}, err
		}
		return c.anchor.Add(time.Duration(ns - c.bootNs)).UTC(), nil
	}
	return time.Now().UTC(), nil
}

// Now implements journal.Clock: the time by the store's clock.
func (tx *Tx) Now(ctx context.Context) (time.Time, error) {
	if tx.clock == nil {
		return time.Now().UTC(), nil
	}
	return tx.clock.now(ctx, tx)
}

// anchorClock reads, or makes, the anchor of this boot's clock in a SQLite
// database: the wall time at a moment of the boot clock. A new boot gets a
// new anchor, never earlier than the last one.
func (db *DB) anchorClock(ctx context.Context) error {
	if db.clock.fixed != nil || db.d == postgres {
		return nil
	}
	boot, err := bootID()
	if errors.Is(err, errNoBootClock) {
		return nil // the wall clock
	}
	if err != nil {
		return err
	}
	if db.readOnly {
		// Nothing is written, nor leased: this boot's anchor, if there is
		// one, else the wall clock.
		db.View(ctx, func(tx *Tx) error {
			var id string
			var wallUs, bootNs int64
			if tx.q.QueryRowContext(ctx, `SELECT boot_id, wall_us, boot_ns FROM rubicon_clock WHERE id = 1`).Scan(&id, &wallUs, &bootNs) == nil && id == boot {
				db.clock.anchor, db.clock.bootNs = fromMicros(wallUs), bootNs
			}
			return nil
		})
		return nil
	}
	return db.Update(ctx, func(tx *Tx) error {
		var id string
		var wallUs, bootNs int64
		err := tx.q.QueryRowContext(ctx, `SELECT boot_id, wall_us, boot_ns FROM rubicon_clock WHERE id = 1`).Scan(&id, &wallUs, &bootNs)
		switch {
		case err == nil && id == boot:
			db.clock.anchor, db.clock.bootNs = fromMicros(wallUs), bootNs
			return nil
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("reading the clock's anchor in %s: %w", db.name, err)
		}
		ns, err := bootClock()
		if err != nil {
			return err
		}
		wall := time.Now()
		if last := fromMicros(wallUs); wall.Before(last) {
			wall = last
		}
		if _, err := tx.q.ExecContext(ctx, `INSERT INTO rubicon_clock (id, boot_id, wall_us, boot_ns) VALUES (1, $1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET boot_id = excluded.boot_id, wall_us = excluded.wall_us, boot_ns = excluded.boot_ns`,
			boot, micros(wall), ns); err != nil {
			return fmt.Errorf("anchoring the clock in %s: %w", db.name, err)
		}
		db.clock.anchor, db.clock.bootNs = wall.UTC(), ns
		return nil
	})
}

// errNoBootClock reports a system without a boot clock that processes
// share.
var errNoBootClock = errors.New("no shared boot clock here")
