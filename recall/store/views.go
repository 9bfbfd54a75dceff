package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/rubicon-go/rubicon/journal"
)

// The views in this file serve the pages that show an archive (the
// console): what the command line reaches a batch at a time, listed.

// Batch is a batch of the archive.
type Batch struct {
	Name    string
	Created time.Time
}

// Batches returns the archive's batches, by name.
func (s *Store) Batches(ctx context.Context) ([]Batch, error) {
	return list(ctx, s, func(rows *sql.Rows) (b Batch, err error) {
		var us int64
		err = rows.Scan(&b.Name, &us)
		b.Created = time.UnixMicro(us)
		return b, err
	}, `SELECT name, created_at FROM recall_batches ORDER BY name`)
}

// Content returns the content sha, and false if the archive has none by
// that name.
func (s *Store) Content(ctx context.Context, sha string) (Content, bool, error) {
	cs, err := list(ctx, s, func(rows *sql.Rows) (Content, error) {
		c := Content{SHA256: sha}
		var us int64
		var video, probed int
		err := rows.Scan(&c.Size, &us, &c.Format, &video, &probed)
		c.Duration, c.Video, c.Probed = fromMicros(us), video == 1, probed == 1
		return c, err
	}, `SELECT size, duration_us, format, has_video, probed FROM recall_contents WHERE sha256 = $1`, sha)
	if err != nil || len(cs) == 0 {
		return Content{}, false, err
	}
	return cs[0], true, nil
}

// Journal returns the journal of the archive's paid requests, for pages
// that list them, show their history and read the audit log. Requests
// move on through the Store's methods, which keep recall's rows and the
// ledger in step with the journal.
func (s *Store) Journal() *journal.Journal { return s.j }
