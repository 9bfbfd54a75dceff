package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/recall/recording"
)

// Hit is a transcript segment that matches a search.
type Hit struct {
	SHA256 string
	// Transcriber made the transcript.
	recording.Transcriber
	Start, End time.Duration
	// Snippet is the segment's text around the match, matches marked
	// [like this].
	Snippet string
}

// Search finds every transcript segment that holds all of words, in any
// order, best first, at most limit of them: with FTS5 on SQLite, a
// tsvector on PostgreSQL. The sandbox's placeholder transcripts are
// searched only with sandbox.
func (s *Store) Search(ctx context.Context, words []string, limit int, sandbox bool) ([]Hit, error) {
	return s.SearchMarked(ctx, words, limit, sandbox, "[", "]")
}

// SearchMarked is Search with the matches in the snippets between open
// and close, such as characters that a transcript does not hold, for a
// page that marks them up. Neither may hold a double quote.
func (s *Store) SearchMarked(ctx context.Context, words []string, limit int, sandbox bool, open, close string) ([]Hit, error) {
	skip := recording.Sandbox
	if sandbox {
		skip = ""
	}
	var q string
	var args []any
	if s.db.Backend() == "postgres" {
		q = `SELECT sha256, provider, model, start_us, end_us,
				ts_headline('simple', text, plainto_tsquery('simple', $1), $3 || ', MaxWords=18, MinWords=6')
			FROM recall_search WHERE tsv @@ plainto_tsquery('simple', $1) AND provider <> $4
			ORDER BY ts_rank(tsv, plainto_tsquery('simple', $1)) DESC, sha256, start_us LIMIT $2`
		args = []any{strings.Join(words, " "), limit, `StartSel="` + open + `", StopSel="` + close + `"`, skip}
	} else {
		// Each word a quoted FTS5 string: the user's punctuation is never
		// read as query syntax.
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
		}
		q = `SELECT sha256, provider, model, start_us, end_us, snippet(recall_search, 6, $3, $4, '…', 12)
			FROM recall_search WHERE recall_search MATCH $1 AND provider <> $5 ORDER BY rank, sha256, start_us LIMIT $2`
		args = []any{strings.Join(quoted, " "), limit, open, close, skip}
	}
	return list(ctx, s, func(rows *sql.Rows) (h Hit, err error) {
		var start, end int64
		err = rows.Scan(&h.SHA256, &h.Provider, &h.Model, &start, &end, &h.Snippet)
		h.Start, h.End = fromMicros(start), fromMicros(end)
		return h, err
	}, q, args...)
}
