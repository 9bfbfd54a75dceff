// Package recall is recall-archive: batch transcription of a folder of
// recordings through a paid speech-to-text API that never pays twice.
//
// Files are recognised by probing them with ffprobe and identified by the
// SHA-256 of their content: the same recording at two paths, or in two
// batches, is one content, transcribed at most once. Everything before the
// paid request (discovery, probing, hashing, the audio proxy, the budget
// hold) is safe to repeat; the paid request itself goes through rubicon's
// journal, ledger and boundary-aware client.
package recall

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rubicon-go/rubicon/recall/media"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// Archive is an open recall-archive database.
type Archive struct {
	db    *sqlstore.DB
	tools media.Tools
	now   func() time.Time
}

// Options configure [Open].
type Options struct {
	// Tools locates ffprobe and ffmpeg.
	Tools media.Tools
	// Now returns the current time; default time.Now.
	Now func() time.Time
}

// Open opens the archive database that dsn names (a file path for SQLite,
// or a postgres:// DSN), creating or upgrading its schema.
func Open(ctx context.Context, dsn string, opts Options) (*Archive, error) {
	db, err := sqlstore.Open(ctx, dsn, sqlstore.Options{Migrations: Migrations()})
	if err != nil {
		return nil, err
	}
	a := &Archive{db: db, tools: opts.Tools, now: opts.Now}
	if a.now == nil {
		a.now = time.Now
	}
	return a, nil
}

// Close closes the archive.
func (a *Archive) Close() error { return a.db.Close() }

// Item states.
const (
	// StateAdded: a media file, hashed, waiting to be transcribed.
	StateAdded = "added"
	// StateFailed: a failure before any paid request that may go away
	// (ffmpeg missing, a file that could not be read); safe to retry.
	StateFailed = "failed"
	// StateRejected: not something that can be transcribed (not media, no
	// audio track); retrying will not change it.
	StateRejected = "rejected"
)

// Problem is a path that add could not use, and why.
type Problem struct {
	Path  string `json:"path"`
	State string `json:"state"`
	Phase string `json:"phase,omitempty"`
	Error string `json:"error"`
}

// AddReport says what add did.
type AddReport struct {
	Batch string `json:"batch"`
	// Added counts media files recorded in the batch by this call.
	Added int `json:"added"`
	// NewContents counts the distinct contents never seen before in any
	// batch; the other added files share content already recorded.
	NewContents int `json:"new_contents"`
	// Unchanged counts files already recorded in the batch with the same
	// content.
	Unchanged int `json:"unchanged"`
	// Skipped counts files passed over as not media: by their extension
	// (.txt, .jpg…), or, with an extension that says nothing, by probing.
	Skipped  int       `json:"skipped"`
	Problems []Problem `json:"problems"`
}

// AddOptions tune Add.
type AddOptions struct {
	// Workers probe and hash files in parallel; default the number of CPUs.
	Workers int
}

// Add discovers the media under paths, hashes each file and records it in
// batch once per path; contents are recorded once however many paths or
// batches hold them. A path that cannot be used is reported in the
// report's Problems, recorded where it can be, and never stops the rest.
func (a *Archive) Add(ctx context.Context, batch string, paths []string, opts AddOptions) (AddReport, error) {
	rep := AddReport{Batch: batch, Problems: []Problem{}}
	if err := checkBatchName(batch); err != nil {
		return rep, err
	}
	if len(paths) == 0 {
		return rep, errors.New("recall: add needs at least one path")
	}
	if err := a.db.Update(ctx, func(tx *sqlstore.Tx) error {
		_, err := tx.SQL().ExecContext(ctx, `INSERT INTO recall_batches (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
			batch, a.now().UnixMicro())
		return err
	}); err != nil {
		return rep, err
	}

	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var mu sync.Mutex
	record := func(f func(*AddReport)) {
		mu.Lock()
		f(&rep)
		mu.Unlock()
	}
	cands := make(chan candidate, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c := range cands {
				if ctx.Err() != nil {
					continue
				}
				a.addOne(ctx, batch, c, record)
			}
		})
	}
	discover(paths, func(c candidate) { cands <- c }, func(p problem) {
		record(func(r *AddReport) {
			r.Problems = append(r.Problems, Problem{Path: p.path, State: StateRejected, Phase: "discover", Error: p.err.Error()})
		})
	})
	close(cands)
	wg.Wait()
	sort.Slice(rep.Problems, func(i, j int) bool { return rep.Problems[i].Path < rep.Problems[j].Path })
	return rep, ctx.Err()
}

// fileResult is what probing and hashing found for one file.
type fileResult struct {
	path     string
	sha256   string
	size     int64
	info     media.Info
	probed   bool
	state    string
	phase    string
	errorMsg string
}

func (a *Archive) addOne(ctx context.Context, batch string, c candidate, record func(func(*AddReport))) {
	if c.ignored {
		record(func(r *AddReport) { r.Skipped++ })
		return
	}
	res := fileResult{path: c.path, state: StateAdded}
	// A file that cannot be opened is not "not media": say why, as a
	// failure that a fix of its permissions and retry-failed repair.
	f, err := os.Open(c.path)
	if err != nil {
		res.state, res.phase, res.errorMsg = StateFailed, "read", describeOpenError(c.path, err).Error()
		a.report(ctx, batch, res, record)
		return
	}
	f.Close()
	info, err := a.tools.Probe(ctx, c.path)
	switch {
	case err == nil:
		res.info, res.probed = info, true
	case errors.Is(err, media.ErrNotInstalled):
		res.state, res.phase, res.errorMsg = StateFailed, "probe", err.Error()
	case errors.Is(err, media.ErrNotMedia) || errors.Is(err, media.ErrNoAudio):
		if !c.expected {
			record(func(r *AddReport) { r.Skipped++ })
			return
		}
		res.state, res.phase, res.errorMsg = StateRejected, "probe", err.Error()
	default:
		res.state, res.phase, res.errorMsg = StateFailed, "probe", err.Error()
	}
	if res.state != StateRejected {
		res.sha256, res.size, err = HashFile(c.path)
		if err != nil {
			res.state, res.phase, res.errorMsg = StateFailed, "read", describeOpenError(c.path, err).Error()
		}
	}
	a.report(ctx, batch, res, record)
}

// report stores a file's result and counts it in the add report.
func (a *Archive) report(ctx context.Context, batch string, res fileResult, record func(func(*AddReport))) {
	newContent, unchanged, err := a.store(ctx, batch, res)
	record(func(r *AddReport) {
		switch {
		case err != nil:
			r.Problems = append(r.Problems, Problem{Path: res.path, State: StateFailed, Phase: "record", Error: err.Error()})
		case res.state != StateAdded:
			r.Problems = append(r.Problems, Problem{Path: res.path, State: res.state, Phase: res.phase, Error: res.errorMsg})
		case unchanged:
			r.Unchanged++
		default:
			r.Added++
			if newContent {
				r.NewContents++
			}
		}
	})
}

// store records a file's result: its content, if hashed, and its item.
func (a *Archive) store(ctx context.Context, batch string, res fileResult) (newContent, unchanged bool, err error) {
	now := a.now().UnixMicro()
	err = a.db.Update(ctx, func(tx *sqlstore.Tx) error {
		newContent, unchanged = false, false
		q := tx.SQL()
		var sha any
		if res.sha256 != "" {
			sha = res.sha256
			r, err := q.ExecContext(ctx, `INSERT INTO recall_contents (sha256, size, duration_us, format, has_video, probed, added_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (sha256) DO NOTHING`,
				res.sha256, res.size, res.info.Duration.Microseconds(), res.info.Format, boolInt(res.info.Video), boolInt(res.probed), now)
			if err != nil {
				return err
			}
			n, _ := r.RowsAffected()
			newContent = n == 1
			if !newContent && res.probed {
				// A content first recorded without ffprobe learns its details.
				if _, err := q.ExecContext(ctx, `UPDATE recall_contents SET duration_us = $2, format = $3, has_video = $4, probed = 1
					WHERE sha256 = $1 AND probed = 0`, res.sha256, res.info.Duration.Microseconds(), res.info.Format, boolInt(res.info.Video)); err != nil {
					return err
				}
			}
		}
		var oldSHA sql.NullString
		var oldState string
		err := q.QueryRowContext(ctx, `SELECT sha256, state FROM recall_items WHERE batch = $1 AND path = $2`, batch, res.path).Scan(&oldSHA, &oldState)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = q.ExecContext(ctx, `INSERT INTO recall_items (batch, path, sha256, state, phase, error, added_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`, batch, res.path, sha, res.state, res.phase, res.errorMsg, now)
			return err
		case err != nil:
			return err
		}
		unchanged = oldSHA.Valid && oldSHA.String == res.sha256 && oldState == res.state
		_, err = q.ExecContext(ctx, `UPDATE recall_items SET sha256 = $3, state = $4, phase = $5, error = $6, updated_at = $7
			WHERE batch = $1 AND path = $2`, batch, res.path, sha, res.state, res.phase, res.errorMsg, now)
		return err
	})
	return newContent, unchanged, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkBatchName refuses names that would be awkward on a command line or
// in a file name.
func checkBatchName(name string) error {
	if name == "" || len(name) > 100 || strings.ContainsAny(name, "/\\\x00\n\r\t") || strings.TrimSpace(name) != name {
		return fmt.Errorf("recall: batch name %q: use 1 to 100 characters, without slashes, control characters or surrounding spaces", name)
	}
	return nil
}

// texts runs a query that selects one text column and returns its values.
func (a *Archive) texts(ctx context.Context, query string, args ...any) ([]string, error) {
	var out []string
	err := a.db.View(ctx, func(tx *sqlstore.Tx) error {
		rows, err := tx.SQL().QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				return err
			}
			out = append(out, v)
		}
		return rows.Err()
	})
	return out, err
}
