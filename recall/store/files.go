package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// File is a path recorded in a batch, and what became of it.
type File struct {
	// Path is the file's real path, absolute, through every symbolic
	// link: the same file however it was named when added.
	Batch, Path string
	// Shown is the path it was added by, made absolute, when it differs
	// from Path (a folder reached through a link): the one to show.
	Shown string
	// SHA256 names the file's content; empty when it could not be hashed.
	SHA256 string
	// State is Added, Failed or Rejected; Phase and Error say where and why
	// a file that is not added failed.
	State, Phase, Error string
}

// Content is a recording's bytes, recorded once however many files, in
// however many batches, hold them.
type Content struct {
	SHA256   string
	Size     int64
	Duration time.Duration
	Format   string
	Video    bool
	// Probed is false for a content recorded while ffprobe could not read
	// it; its duration, format and video are then unknown.
	Probed bool
}

// Display returns the path to show for f: the one it was added by.
func (f File) Display() string {
	if f.Shown != "" {
		return f.Shown
	}
	return f.Path
}

// shown selects the path to show of recall_items.
const shown = `COALESCE(NULLIF(shown_path, ''), path)`

// AddBatch records the batch, unless it exists.
func (s *Store) AddBatch(ctx context.Context, name string) error {
	return s.update(ctx, named("adding batch "+name), func(tx *sqlstore.Tx) error {
		if _, err := tx.SQL().ExecContext(ctx, `INSERT INTO recall_batches (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
			name, s.now().UnixMicro()); err != nil {
			return err
		}
		// A new batch's play money is never on its budget's account.
		_, err := tx.SQL().ExecContext(ctx, `INSERT INTO recall_play_carried (batch, amount) VALUES ($1, 0) ON CONFLICT (batch) DO NOTHING`, name)
		return err
	})
}

// HasBatch reports whether the batch was ever added to.
func (s *Store) HasBatch(ctx context.Context, name string) (bool, error) {
	names, err := s.texts(ctx, `SELECT name FROM recall_batches WHERE name = $1`, name)
	return len(names) > 0, err
}

// PutFile records f and, unless it is nil, its content c. It reports
// whether the content is new to the archive, and whether the batch already
// held the file with the same content and state.
func (s *Store) PutFile(ctx context.Context, f File, c *Content) (newContent, unchanged bool, err error) {
	err = s.update(ctx, named("recording "+f.Path), func(tx *sqlstore.Tx) error {
		newContent, unchanged = false, false
		now := s.now().UnixMicro()
		if c != nil {
			if newContent, err = putContent(ctx, tx, *c, now); err != nil {
				return err
			}
		}
		unchanged, err = putFile(ctx, tx, f, now)
		return err
	})
	return newContent, unchanged, err
}

func putContent(ctx context.Context, tx *sqlstore.Tx, c Content, now int64) (created bool, err error) {
	q := tx.SQL()
	r, err := q.ExecContext(ctx, `INSERT INTO recall_contents (sha256, size, duration_us, format, has_video, probed, added_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (sha256) DO NOTHING`,
		c.SHA256, c.Size, micros(c.Duration), c.Format, boolInt(c.Video), boolInt(c.Probed), now)
	if err != nil {
		return false, err
	}
	if n, _ := r.RowsAffected(); n == 1 || !c.Probed {
		return n == 1, nil
	}
	// A content first recorded without ffprobe learns its details.
	_, err = q.ExecContext(ctx, `UPDATE recall_contents SET duration_us = $2, format = $3, has_video = $4, probed = 1
		WHERE sha256 = $1 AND probed = 0`, c.SHA256, micros(c.Duration), c.Format, boolInt(c.Video))
	return false, err
}

func putFile(ctx context.Context, tx *sqlstore.Tx, f File, now int64) (unchanged bool, err error) {
	q := tx.SQL()
	var sha any
	if f.SHA256 != "" {
		sha = f.SHA256
	}
	var oldSHA sql.NullString
	var oldState string
	err = q.QueryRowContext(ctx, `SELECT sha256, state FROM recall_items WHERE batch = $1 AND path = $2`, f.Batch, f.Path).Scan(&oldSHA, &oldState)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = q.ExecContext(ctx, `INSERT INTO recall_items (batch, path, sha256, state, phase, error, added_at, updated_at, shown_path)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)`, f.Batch, f.Path, sha, f.State, f.Phase, f.Error, now, f.Shown)
		return false, err
	case err != nil:
		return false, err
	}
	unchanged = oldSHA.Valid && oldSHA.String == f.SHA256 && oldState == f.State
	_, err = q.ExecContext(ctx, `UPDATE recall_items SET sha256 = $3, state = $4, phase = $5, error = $6, updated_at = $7, shown_path = $8
		WHERE batch = $1 AND path = $2`, f.Batch, f.Path, sha, f.State, f.Phase, f.Error, now, f.Shown)
	return unchanged, err
}

// FileCounts counts the batch's files by state.
func (s *Store) FileCounts(ctx context.Context, batch string) (map[string]int, error) {
	type count struct {
		state string
		n     int
	}
	counts, err := list(ctx, s, func(rows *sql.Rows) (c count, err error) {
		err = rows.Scan(&c.state, &c.n)
		return c, err
	}, `SELECT state, COUNT(*) FROM recall_items WHERE batch = $1 GROUP BY state`, batch)
	out := make(map[string]int, len(counts))
	for _, c := range counts {
		out[c.state] = c.n
	}
	return out, err
}

// Files returns the batch's files in any of states, by path.
func (s *Store) Files(ctx context.Context, batch string, states ...string) ([]File, error) {
	args := []any{batch}
	marks := make([]string, len(states))
	for i, st := range states {
		args = append(args, st)
		marks[i] = "$" + strconv.Itoa(i+2)
	}
	return list(ctx, s, func(rows *sql.Rows) (File, error) {
		f := File{Batch: batch}
		err := rows.Scan(&f.Path, &f.Shown, &f.SHA256, &f.State, &f.Phase, &f.Error)
		return f, err
	}, `SELECT path, shown_path, COALESCE(sha256, ''), state, phase, error FROM recall_items
		WHERE batch = $1 AND state IN (`+strings.Join(marks, ", ")+`) ORDER BY path`, args...)
}

// FailContent marks the batch's files of the content sha as failed in
// phase, before any payment, with the error msg.
func (s *Store) FailContent(ctx context.Context, batch, sha, phase, msg string) error {
	return s.update(ctx, named("marking the files of content "+shortSHA(sha)+" failed"), func(tx *sqlstore.Tx) error {
		_, err := tx.SQL().ExecContext(ctx, `UPDATE recall_items SET state = $3, phase = $4, error = $5, updated_at = $6 WHERE batch = $1 AND sha256 = $2`,
			batch, sha, recording.Failed, phase, msg, s.now().UnixMicro())
		return err
	})
}

// Requeue marks the batch's files that failed in phase as added again, and
// returns how many it marked.
func (s *Store) Requeue(ctx context.Context, batch, phase string) (int, error) {
	var n int64
	err := s.update(ctx, named("queueing the failed files of batch "+batch), func(tx *sqlstore.Tx) error {
		r, err := tx.SQL().ExecContext(ctx, `UPDATE recall_items SET state = $2, phase = '', error = '', updated_at = $3
			WHERE batch = $1 AND state = $4 AND phase = $5`, batch, recording.Added, s.now().UnixMicro(), recording.Failed, phase)
		if err == nil {
			n, err = r.RowsAffected()
		}
		return err
	})
	return int(n), err
}

// Contents returns the distinct contents of the batch's added files,
// oldest first.
func (s *Store) Contents(ctx context.Context, batch string) ([]Content, error) {
	return list(ctx, s, func(rows *sql.Rows) (Content, error) {
		var c Content
		var us int64
		var video, probed int
		err := rows.Scan(&c.SHA256, &c.Size, &us, &c.Format, &video, &probed)
		c.Duration, c.Video, c.Probed = fromMicros(us), video == 1, probed == 1
		return c, err
	}, `SELECT c.sha256, c.size, c.duration_us, c.format, c.has_video, c.probed FROM recall_contents c
		WHERE c.sha256 IN (SELECT sha256 FROM recall_items WHERE batch = $1 AND state = $2) ORDER BY c.added_at, c.sha256`, batch, recording.Added)
}

// RelativePaths returns the batch's paths that are not absolute: earlier
// versions recorded a file by the path it was given.
func (s *Store) RelativePaths(ctx context.Context, batch string) ([]string, error) {
	return s.texts(ctx, `SELECT path FROM recall_items WHERE batch = $1 AND path NOT LIKE '/%' ORDER BY path`, batch)
}

// MovePath records the batch's file at path from by the path to instead,
// shown as shown; when the batch has a file at to already, from is
// removed, being the same file.
func (s *Store) MovePath(ctx context.Context, batch, from, to, shown string) error {
	return s.update(ctx, named("recording "+from+" as "+to), func(tx *sqlstore.Tx) error {
		q := tx.SQL()
		var n int
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM recall_items WHERE batch = $1 AND path = $2`, batch, to).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			_, err := q.ExecContext(ctx, `DELETE FROM recall_items WHERE batch = $1 AND path = $2`, batch, from)
			return err
		}
		_, err := q.ExecContext(ctx, `UPDATE recall_items SET path = $3, shown_path = $4 WHERE batch = $1 AND path = $2`, batch, from, to, shown)
		return err
	})
}

// Paths returns the paths to show of the files that hold the content sha
// in the batch, or in every batch when batch is empty, sorted.
func (s *Store) Paths(ctx context.Context, batch, sha string) ([]string, error) {
	return s.texts(ctx, `SELECT DISTINCT `+shown+` FROM recall_items WHERE sha256 = $1 AND ($2 = '' OR batch = $2) ORDER BY 1`, sha, batch)
}

// AddedPaths returns the paths to show of the batch's added files that
// hold the content sha, sorted.
func (s *Store) AddedPaths(ctx context.Context, batch, sha string) ([]string, error) {
	return s.texts(ctx, `SELECT `+shown+` FROM recall_items WHERE batch = $1 AND sha256 = $2 AND state = $3 ORDER BY 1`, batch, sha, recording.Added)
}

// SourcePaths returns every path, in any batch, recorded as holding the
// content sha, first recorded first: the file may have changed since.
func (s *Store) SourcePaths(ctx context.Context, sha string) ([]string, error) {
	return s.texts(ctx, `SELECT path FROM recall_items WHERE sha256 = $1 ORDER BY added_at`, sha)
}

// RemoveFiles removes from the batch its files at paths (as added, or as
// shown), or every file of the batch when paths is empty, and returns
// those it removed. The contents, their transcripts and the ledger stay:
// another batch may hold the same recording, and what was paid was paid.
func (s *Store) RemoveFiles(ctx context.Context, batch string, paths ...string) ([]File, error) {
	var removed []File
	err := s.update(ctx, named("removing files of batch "+batch), func(tx *sqlstore.Tx) error {
		removed = removed[:0]
		q := tx.SQL()
		rows, err := q.QueryContext(ctx, `SELECT path, shown_path, COALESCE(sha256, ''), state FROM recall_items WHERE batch = $1 ORDER BY path`, batch)
		if err != nil {
			return err
		}
		var all []File
		for rows.Next() {
			f := File{Batch: batch}
			if err := rows.Scan(&f.Path, &f.Shown, &f.SHA256, &f.State); err != nil {
				rows.Close()
				return err
			}
			all = append(all, f)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, f := range all {
			if len(paths) > 0 && !slices.Contains(paths, f.Path) && !slices.Contains(paths, f.Shown) {
				continue
			}
			if _, err := q.ExecContext(ctx, `DELETE FROM recall_items WHERE batch = $1 AND path = $2`, batch, f.Path); err != nil {
				return err
			}
			removed = append(removed, f)
		}
		return nil
	})
	return removed, err
}
