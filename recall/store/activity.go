package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/rubicon-go/rubicon/sqlstore"
)

// Activity is what a run or an add is doing now with one subject of a
// batch, as it last recorded it: a recording a run works on, or an add's
// counts.
type Activity struct {
	// Worker names the run or add that records it.
	Worker string
	Batch  string
	// Subject is the content's SHA-256, or "" for an add's counts.
	Subject string
	// Path is the recording's first file in the batch, or the first path
	// an add was given.
	Path  string
	Stage string
	// Chunk (from 1) and Chunks say which chunk a stage is about.
	Chunk, Chunks int
	// Done and Total measure the stage: the audio converted and the
	// recording's, in microseconds, or the files hashed of those found.
	Done, Total int64
	// Bytes counts what an add has hashed.
	Bytes  int64
	Detail string
	// Since is when the subject's row was first recorded, Updated when it
	// was last recorded or touched, by the store's clock.
	Since, Updated time.Time
}

// ActivityChange is one write of a worker's activity: its rows to record
// (inserted, or replaced but for Since), the subjects whose rows go, and
// whether to touch its other rows, so that readers know it is alive.
type ActivityChange struct {
	Put   []Activity
	Gone  []ActivityKey
	Touch bool
}

// ActivityKey names one row of a worker's activity.
type ActivityKey struct{ Batch, Subject string }

// RecordActivity writes change to worker's activity, in one transaction,
// at the store's time.
func (s *Store) RecordActivity(ctx context.Context, worker string, change ActivityChange) error {
	if worker == "" {
		return errors.New("store: activity needs a worker's name")
	}
	return s.update(ctx, named("recording what "+worker+" is doing"), func(tx *sqlstore.Tx) error {
		now, err := tx.Now(ctx)
		if err != nil {
			return err
		}
		q, us := tx.SQL(), now.UnixMicro()
		if change.Touch {
			if _, err := q.ExecContext(ctx, `UPDATE recall_activity SET updated_at = $2 WHERE worker = $1`, worker, us); err != nil {
				return err
			}
		}
		for _, k := range change.Gone {
			if _, err := q.ExecContext(ctx, `DELETE FROM recall_activity WHERE worker = $1 AND batch = $2 AND subject = $3`, worker, k.Batch, k.Subject); err != nil {
				return err
			}
		}
		for _, a := range change.Put {
			if _, err := q.ExecContext(ctx, `INSERT INTO recall_activity
				(worker, batch, subject, path, stage, chunk, chunks, done, total, bytes, detail, since, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)
				ON CONFLICT (worker, batch, subject) DO UPDATE SET path = excluded.path, stage = excluded.stage,
					chunk = excluded.chunk, chunks = excluded.chunks, done = excluded.done, total = excluded.total,
					bytes = excluded.bytes, detail = excluded.detail, updated_at = excluded.updated_at`,
				worker, a.Batch, a.Subject, a.Path, a.Stage, a.Chunk, a.Chunks, a.Done, a.Total, a.Bytes, a.Detail, us); err != nil {
				return err
			}
		}
		return nil
	})
}

// EndActivity deletes every row of worker's activity: it is over.
func (s *Store) EndActivity(ctx context.Context, worker string) error {
	return s.update(ctx, named("ending what "+worker+" was doing"), func(tx *sqlstore.Tx) error {
		_, err := tx.SQL().ExecContext(ctx, `DELETE FROM recall_activity WHERE worker = $1`, worker)
		return err
	})
}

// DeleteStaleActivity deletes the rows of every worker not updated for
// maxAge, those of killed runs and adds, and returns how many went.
func (s *Store) DeleteStaleActivity(ctx context.Context, maxAge time.Duration) (int, error) {
	var n int64
	err := s.update(ctx, named("deleting what stopped runs were doing"), func(tx *sqlstore.Tx) error {
		now, err := tx.Now(ctx)
		if err != nil {
			return err
		}
		res, err := tx.SQL().ExecContext(ctx, `DELETE FROM recall_activity WHERE updated_at < $1`, now.Add(-maxAge).UnixMicro())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// Activity returns what runs and adds are doing now with batch (every
// batch when empty): the rows updated within maxAge, by the store's
// clock, by batch, path and subject.
func (s *Store) Activity(ctx context.Context, batch string, maxAge time.Duration) ([]Activity, error) {
	// The cutoff is read first: a query cannot read the store's clock.
	var now time.Time
	if err := s.db.View(ctx, func(tx *sqlstore.Tx) (err error) {
		now, err = tx.Now(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	return list(ctx, s, scanActivity, `SELECT worker, batch, subject, path, stage, chunk, chunks, done, total, bytes, detail, since, updated_at
		FROM recall_activity WHERE updated_at >= $1 AND (batch = $2 OR $2 = '') ORDER BY batch, path, subject, worker`,
		now.Add(-maxAge).UnixMicro(), batch)
}

func scanActivity(rows *sql.Rows) (Activity, error) {
	var a Activity
	var since, updated int64
	err := rows.Scan(&a.Worker, &a.Batch, &a.Subject, &a.Path, &a.Stage, &a.Chunk, &a.Chunks, &a.Done, &a.Total, &a.Bytes, &a.Detail, &since, &updated)
	a.Since, a.Updated = time.UnixMicro(since), time.UnixMicro(updated)
	return a, err
}
