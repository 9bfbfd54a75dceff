// Package store is recall-archive's storage: its own tables (batches, the
// files in them, contents, chunks, transcripts and their search index,
// and what runs and adds are doing now) and, in the same database, the
// journal of its paid requests and the ledger of its batches' budgets,
// which it reaches only through their public API. A Store holds one
// journal and one ledger.
//
// Every method is one transaction. Those that move a paid request on
// change recall's rows, the journal and the ledger together: [Store.PlanChunks]
// records chunks with the operations that pay for them, [Store.Send]
// commits the sending transition with the budget hold it needs,
// [Store.Record] the outcome with the transcript and the hold's
// settlement, and [Store.Resolve] a person's decision the same way.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// Options configure [Open].
type Options struct {
	// Lease is how long a run's claim on a request it has not sent yet
	// lasts without being renewed: after a run was killed, the next one
	// takes the request over once it ran out. Default 30 s.
	Lease time.Duration
	// SendLease is how long a request that was sent stays with the run
	// that sent it: the request must be over by then (its deadline), and
	// only then may the next run declare it ambiguous, or anyone resolve
	// it as not applied. Default Lease.
	SendLease time.Duration
	// Now returns the current time; default time.Now.
	Now func() time.Time
	// Clock, if set, replaces the database's clock, which judges leases
	// (sqlstore.Options.Clock): for tests that move time. Every process
	// that shares the database must then use the same.
	Clock func() time.Time
	// ReadOnly opens the archive for reading only (sqlstore's
	// Options.ReadOnly): every method that changes it fails.
	ReadOnly bool
}

// Store is an open archive database. It is safe for concurrent use.
type Store struct {
	db  *sqlstore.DB
	j   *journal.Journal
	l   *ledger.Ledger
	now func() time.Time
	id  string
	// readOnly: the database was opened read-only; nothing is written.
	readOnly bool
}

// Open opens the archive database that dsn names (a file path for SQLite,
// or a postgres:// DSN), creating or upgrading its schema.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	db, err := sqlstore.Open(ctx, dsn, sqlstore.Options{Migrations: migrations(), ReadOnly: opts.ReadOnly, Clock: opts.Clock})
	if err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Store{
		db:  db,
		j:   journal.New(db.JournalStore(), journal.Options{Lease: opts.Lease, SendLease: opts.SendLease, Now: opts.Now}),
		l:   ledger.New(db.LedgerStore(), opts.Now),
		now: opts.Now, readOnly: opts.ReadOnly,
	}
	if err := s.backfillTranscribers(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: naming the provider of the archive's earlier transcripts: %w", err)
	}
	if err := s.carryPlay(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: keeping the sandbox's earlier play money out of the batches' budgets: %w", err)
	}
	if err := s.name(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: naming the archive: %w", err)
	}
	return s, nil
}

// name reads the archive's name, giving it one if it has none (read
// only, an archive made before names has none: it is not run).
func (s *Store) name(ctx context.Context) error {
	if s.readOnly {
		s.db.View(ctx, func(tx *sqlstore.Tx) error {
			return tx.SQL().QueryRowContext(ctx, `SELECT id FROM recall_archive`).Scan(&s.id)
		})
		return nil
	}
	return s.update(ctx, named("naming the archive"), func(tx *sqlstore.Tx) error {
		q := tx.SQL()
		if _, err := q.ExecContext(ctx, `INSERT INTO recall_archive (one, id) VALUES (1, $1) ON CONFLICT DO NOTHING`, strings.ToLower(rand.Text())); err != nil {
			return err
		}
		return q.QueryRowContext(ctx, `SELECT id FROM recall_archive`).Scan(&s.id)
	})
}

// ID returns the archive's name: random, made when it was created, the
// same through every DSN that reaches it.
func (s *Store) ID() string { return s.id }

// backfillTranscribers names the provider and model of the chunks planned
// before chunks recorded them (schema version 5) that no transcript
// named: from their journal operations, where a run recorded them, else
// Unknown. Their transcripts and search index follow.
func (s *Store) backfillTranscribers(ctx context.Context) error {
	if s.readOnly {
		return nil
	}
	type unnamed struct{ sha, key string }
	rows, err := list(ctx, s, func(rows *sql.Rows) (u unnamed, err error) {
		err = rows.Scan(&u.sha, &u.key)
		return u, err
	}, `SELECT sha256, op_key FROM recall_chunks WHERE provider = '' ORDER BY sha256, idx`)
	if err != nil || len(rows) == 0 {
		return err
	}
	keys := map[string][]string{}
	for _, u := range rows {
		keys[u.sha] = append(keys[u.sha], u.key)
	}
	for sha, ks := range keys {
		who := recording.Transcriber{Provider: Unknown, Model: Unknown}
		ops, err := s.j.List(ctx, journal.Filter{Keys: ks})
		if err != nil {
			return err
		}
		for _, op := range ops {
			p, _ := op.Evidence["provider"].(string)
			m, _ := op.Evidence["model"].(string)
			if p != "" && m != "" {
				who = recording.Transcriber{Provider: p, Model: m}
				break
			}
		}
		err = s.db.Update(ctx, func(tx *sqlstore.Tx) error {
			for _, table := range []string{"recall_chunks", "recall_search"} {
				if _, err := tx.SQL().ExecContext(ctx, `UPDATE `+table+` SET provider = $2, model = $3 WHERE sha256 = $1 AND provider = ''`,
					sha, who.Provider, who.Model); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// SendLease returns the lease a request is sent under: the longest it may
// take.
func (s *Store) SendLease() time.Duration { return s.j.SendLease() }

// list runs a query of recall's tables and returns a value per row, read
// by scan.
func list[T any](ctx context.Context, s *Store, scan func(*sql.Rows) (T, error), query string, args ...any) ([]T, error) {
	var out []T
	err := s.db.View(ctx, func(tx *sqlstore.Tx) error {
		out = out[:0]
		rows, err := tx.SQL().QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return rows.Err()
	})
	return out, err
}

// texts runs a query of recall's tables that selects one text column, and
// returns its values.
func (s *Store) texts(ctx context.Context, query string, args ...any) ([]string, error) {
	return list(ctx, s, func(rows *sql.Rows) (v string, err error) {
		err = rows.Scan(&v)
		return v, err
	}, query, args...)
}

// account is the ledger account that holds a batch's budget.
func account(batch string) string { return "recall/batch/" + batch }

// playAccount is the ledger account of a batch's play money, the
// sandbox's: without a limit, and never part of the budget.
func playAccount(batch string) string { return "recall/play/" + batch }

func micros(d time.Duration) int64 { return d.Microseconds() }

func fromMicros(us int64) time.Duration { return time.Duration(us) * time.Microsecond }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
