package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// ErrLogReplaced reports a SQLite archive whose write-ahead log was
// deleted or replaced while it was open: nothing more can be recorded
// durably until it is opened again (sqlstore.ErrLogReplaced).
var ErrLogReplaced = sqlstore.ErrLogReplaced

// conflictTries bounds how often a transaction that met another writer's
// is run again.
const conflictTries = 6

// ConflictError reports a change that kept conflicting with other runs
// writing the same rows at the same time, after it was tried again: the
// change was not made, and running the command again tries it again.
// What that means for a paid request is the caller's to say (a run keeps
// the answers it could not record on disk, and records them later).
type ConflictError struct {
	// What names the change, such as "planning the chunks of content 5e0e…".
	What  string
	Tries int
	Err   error
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("store: %s conflicted with other runs writing the same records at the same time (%d tries; %s), and was not made: run the command again",
		e.What, e.Tries, conflictKind(e.Err))
}

func (e *ConflictError) Unwrap() error { return e.Err }

// sqlStater is a PostgreSQL error (pgconn.PgError), read without importing
// the driver.
type sqlStater interface{ SQLState() string }

// conflictKind says, in words, how a change met another one; "" if it did
// not.
func conflictKind(err error) string {
	var se sqlStater
	if errors.As(err, &se) {
		switch se.SQLState() {
		case "23505":
			return "another run inserted the same record first"
		case "40001":
			return "a serialization failure"
		case "40P01":
			return "a deadlock"
		case "55P03":
			return "a row lock was not available"
		}
	}
	if errors.Is(err, sqlstore.ErrLocked) {
		return "the database stayed locked by another process"
	}
	return ""
}

// update runs fn in a write transaction, and runs it again, after a short
// random pause, when it failed only because another writer changed the
// same records at the same moment: a unique key inserted first, a
// serialization failure or a deadlock on PostgreSQL, a lock held too long
// on SQLite. what names the change for the error that reports giving up.
func (s *Store) update(ctx context.Context, what func() string, fn func(*sqlstore.Tx) error) error {
	return s.again(ctx, what, func() error { return s.db.Update(ctx, fn) })
}

// again runs do until it succeeds, fails otherwise than by a conflict, or
// conflicted conflictTries times.
func (s *Store) again(ctx context.Context, what func() string, do func() error) error {
	var err error
	for try := 1; ; try++ {
		if err = do(); err == nil || conflictKind(err) == "" {
			return err
		}
		if try == conflictTries {
			return &ConflictError{What: what(), Tries: try, Err: err}
		}
		pause := time.Duration(rand.Int64N(int64(10*time.Millisecond) << try))
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(pause):
		}
	}
}

// shortSHA abbreviates a content's hash for messages.
func shortSHA(sha string) string { return sha[:min(12, len(sha))] }

// named returns a constant description for update.
func named(s string) func() string { return func() string { return s } }

// Passing reports whether err is a failure of the database that may pass
// if the change is tried again: a connection lost, a server restarting,
// a lock held too long, changes that kept conflicting. Errors of the
// journal's rules (a transition refused, a lease not held, an unknown
// key, bad input), a write-ahead log replaced and a canceled context do
// not pass.
func Passing(err error) bool {
	if err == nil {
		return false
	}
	for _, lasting := range []error{journal.ErrIllegalTransition, journal.ErrLeaseLost, journal.ErrNotFound, journal.ErrInvalid,
		journal.ErrKeyConflict, journal.ErrCorrupt, ledger.ErrInsufficientFunds, sqlstore.ErrLogReplaced, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, lasting) {
			return false
		}
	}
	return true
}
