package recall

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/sqlstore"
)

// Hit is a transcript segment that matches a search.
type Hit struct {
	// Paths are the files, in any batch, that hold the recording.
	Paths   []string      `json:"paths"`
	SHA256  string        `json:"sha256"`
	Start   time.Duration `json:"start_ns"`
	End     time.Duration `json:"end_ns"`
	Snippet string        `json:"snippet"`
}

// Search finds query in every transcript: all its words, in any order.
// Matches are marked [like this] in the snippets.
func (a *Archive) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	words := strings.Fields(query)
	if len(words) == 0 {
		return nil, errors.New("recall: search for at least one word")
	}
	if limit <= 0 {
		limit = 50
	}
	var q string
	var arg any
	if a.db.Backend() == "postgres" {
		q = `SELECT sha256, start_us, end_us,
				ts_headline('simple', text, plainto_tsquery('simple', $1), 'StartSel=[, StopSel=], MaxWords=18, MinWords=6')
			FROM recall_search WHERE tsv @@ plainto_tsquery('simple', $1)
			ORDER BY ts_rank(tsv, plainto_tsquery('simple', $1)) DESC, sha256, start_us LIMIT $2`
		arg = query
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
	var hits []Hit
	err := a.db.View(ctx, func(tx *sqlstore.Tx) error {
		rows, err := tx.SQL().QueryContext(ctx, q, arg, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h Hit
			var start, end int64
			if err := rows.Scan(&h.SHA256, &start, &end, &h.Snippet); err != nil {
				return err
			}
			h.Start, h.End = time.Duration(start)*time.Microsecond, time.Duration(end)*time.Microsecond
			hits = append(hits, h)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	for i := range hits {
		if hits[i].Paths, err = a.pathsOf(ctx, "", hits[i].SHA256); err != nil {
			return nil, err
		}
	}
	return hits, nil
}
