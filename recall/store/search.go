package store

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// Hit is a transcript segment that matches a search.
type Hit struct {
	SHA256     string
	Start, End time.Duration
	// Snippet is the segment's text around the match, matches marked
	// [like this].
	Snippet string
}

// Search finds every transcript segment that holds all of words, in any
// order, best first, at most limit of them: with FTS5 on SQLite, a
// tsvector on PostgreSQL.
func (s *Store) Search(ctx context.Context, words []string, limit int) ([]Hit, error) {
	var q string
	var arg any
	if s.db.Backend() == "postgres" {
		q = `SELECT sha256, start_us, end_us,
				ts_headline('simple', text, plainto_tsquery('simple', $1), 'StartSel=[, StopSel=], MaxWords=18, MinWords=6')
			FROM recall_search WHERE tsv @@ plainto_tsquery('simple', $1)
			ORDER BY ts_rank(tsv, plainto_tsquery('simple', $1)) DESC, sha256, start_us LIMIT $2`
		arg = strings.Join(words, " ")
	} else {
		// Each word a quoted FTS5 string: the user's punctuation is never
		// read as query syntax.
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
		}
		q = `SELECT sha256, start_us, end_us, snippet(recall_search, 4, '[', ']', '…', 12)
			FROM recall_search WHERE recall_search MATCH $1 ORDER BY rank, sha256, start_us LIMIT $2`
		arg = strings.Join(quoted, " ")
	}
	return list(ctx, s, func(rows *sql.Rows) (h Hit, err error) {
		var start, end int64
		err = rows.Scan(&h.SHA256, &start, &end, &h.Snippet)
		h.Start, h.End = fromMicros(start), fromMicros(end)
		return h, err
	}, q, arg, limit)
}
