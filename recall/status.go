package recall

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/rubicon-go/rubicon/sqlstore"
)

// ErrNoBatch reports a batch name that was never added to.
var ErrNoBatch = errors.New("recall: no such batch")

// Status describes a batch.
type Status struct {
	Batch string `json:"batch"`
	// Items counts the batch's files by state.
	Items map[string]int `json:"items"`
	// Contents counts the distinct contents among the added files.
	Contents int `json:"contents"`
	// Duration and Bytes total the distinct contents.
	Duration time.Duration `json:"duration_ns"`
	Bytes    int64         `json:"bytes"`
	// Transcription counts the distinct contents by how far they got:
	// done, ambiguous, failed, sending, waiting.
	Transcription map[string]int `json:"transcription"`
	// Money is where the batch's budget stands.
	Money Money `json:"money"`
	// Problems lists the files that failed or were rejected.
	Problems []Problem `json:"problems"`
}

// Status reports on batch.
func (a *Archive) Status(ctx context.Context, batch string) (Status, error) {
	st := Status{Batch: batch, Items: map[string]int{StateAdded: 0, StateFailed: 0, StateRejected: 0}, Problems: []Problem{}}
	err := a.db.View(ctx, func(tx *sqlstore.Tx) error {
		q := tx.SQL()
		var one int
		if err := q.QueryRowContext(ctx, `SELECT 1 FROM recall_batches WHERE name = $1`, batch).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w %q: add files to it first", ErrNoBatch, batch)
		} else if err != nil {
			return err
		}
		rows, err := q.QueryContext(ctx, `SELECT state, COUNT(*) FROM recall_items WHERE batch = $1 GROUP BY state`, batch)
		if err != nil {
			return err
		}
		for rows.Next() {
			var s string
			var n int
			if err := rows.Scan(&s, &n); err != nil {
				rows.Close()
				return err
			}
			st.Items[s] = n
		}
		rows.Close()
		var dur, bytes int64
		err = q.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(c.duration_us), 0), COALESCE(SUM(c.size), 0) FROM recall_contents c
			WHERE c.sha256 IN (SELECT sha256 FROM recall_items WHERE batch = $1 AND state = 'added')`, batch).Scan(&st.Contents, &dur, &bytes)
		if err != nil {
			return err
		}
		st.Duration, st.Bytes = time.Duration(dur)*time.Microsecond, bytes
		rows, err = q.QueryContext(ctx, `SELECT path, state, phase, error FROM recall_items WHERE batch = $1 AND state <> 'added' ORDER BY path`, batch)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p Problem
			if err := rows.Scan(&p.Path, &p.State, &p.Phase, &p.Error); err != nil {
				return err
			}
			st.Problems = append(st.Problems, p)
		}
		return rows.Err()
	})
	if err != nil {
		return st, err
	}
	states, err := a.contentStates(ctx, batch)
	if err != nil {
		return st, err
	}
	st.Transcription = map[string]int{contentDone: 0, contentAmbiguous: 0, contentFailed: 0, contentWaiting: 0}
	for _, s := range states {
		st.Transcription[s]++
	}
	st.Money, err = a.Money(ctx, batch)
	return st, err
}
