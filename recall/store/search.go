package store

import (
	"context"
	"database/sql"
	"fmt"
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
	// Speaker labels who speaks the segment, as the provider told them
	// apart; empty when speakers were not asked for. SpeakerName is the
	// name a person gave that label ([Store.NameSpeakers]), if any.
	Speaker, SpeakerName string
	// Snippet is the segment's text around the match, matches marked
	// [like this].
	Snippet string
}

// Search finds every transcript segment that holds all of words, in any
// order, best first, at most limit of them ([Store.Find] with [Words]).
func (s *Store) Search(ctx context.Context, words []string, limit int, sandbox bool) ([]Hit, error) {
	hits, _, err := s.Find(ctx, Words(words...), Find{Limit: limit, Sandbox: sandbox})
	return hits, err
}

// SearchMarked is Search with the matches in the snippets between open
// and close, such as characters that a transcript does not hold, for a
// page that marks them up. Neither may hold a double quote.
func (s *Store) SearchMarked(ctx context.Context, words []string, limit int, sandbox bool, open, close string) ([]Hit, error) {
	hits, _, err := s.Find(ctx, Words(words...), Find{Limit: limit, Sandbox: sandbox, Open: open, Close: close})
	return hits, err
}

// Find says where and how a search looks.
type Find struct {
	// Batch, if set, keeps the search to the recordings of the batch's
	// added files.
	Batch string
	// Limit caps the hits returned; the total counts them all.
	Limit int
	// Sandbox: the sandbox's placeholder transcripts are searched too.
	Sandbox bool
	// Speakers, if set, keeps the search to the segments of a speaker
	// that any of them names: by the provider's label or by the name a
	// person gave it, case aside (on SQLite, the case of ASCII letters).
	Speakers []string
	// Open and Close mark the matches in the snippets; "[" and "]" when
	// empty. Neither may hold a double quote.
	Open, Close string
}

// speakerName is the name given to the speaker of a row of the search
// index; empty when none was.
const speakerName = `COALESCE((SELECT n.name FROM recall_speakers n WHERE n.sha256 = recall_search.sha256 AND n.label = recall_search.speaker), '')`

// Find returns the transcript segments that match q, best first, at most
// f.Limit of them, and how many match in all: with FTS5 on SQLite, a
// tsvector on PostgreSQL.
func (s *Store) Find(ctx context.Context, q Query, f Find) (hits []Hit, total int, err error) {
	skip := recording.Sandbox
	if f.Sandbox {
		skip = ""
	}
	if f.Open == "" && f.Close == "" {
		f.Open, f.Close = "[", "]"
	}
	// The parameters: $1 the provider left out, $2 the batch, then the
	// query's; the select alone adds the marks and the limit.
	args := []any{skip, f.Batch}
	var match, order string
	var marks []string // postgres: the headline and its options
	if s.db.Backend() == "postgres" {
		expr, qargs := q.tsquery(3)
		args = append(args, qargs...)
		match = `FROM recall_search, (SELECT ` + expr + ` AS q) AS query WHERE tsv @@ query.q`
		order = ` ORDER BY ts_rank(tsv, query.q) DESC, sha256, start_us`
		marks = []string{`ts_headline('simple', text, query.q, $%d)`, `StartSel="` + f.Open + `", StopSel="` + f.Close + `", MaxWords=18, MinWords=6`}
	} else {
		args = append(args, q.fts5())
		match = `FROM recall_search WHERE recall_search MATCH $3`
		order = ` ORDER BY rank, sha256, start_us`
	}
	match += ` AND provider <> $1 AND ($2 = '' OR sha256 IN (SELECT sha256 FROM recall_items WHERE batch = $2 AND state = '` + recording.Added + `'))`
	if len(f.Speakers) > 0 {
		var either []string
		for _, who := range f.Speakers {
			// lower() on both sides: SQLite's folds ASCII alone, and a
			// name given as it was written matches whatever its letters.
			args = append(args, who)
			n := len(args)
			either = append(either, fmt.Sprintf(`lower(speaker) = lower($%d) OR lower(%s) = lower($%d)`, n, speakerName, n))
		}
		match += ` AND speaker <> '' AND (` + strings.Join(either, " OR ") + `)`
	}
	counted, err := list(ctx, s, func(rows *sql.Rows) (n int, err error) {
		err = rows.Scan(&n)
		return n, err
	}, `SELECT count(*) `+match, args...)
	if err != nil {
		return nil, 0, err
	}
	var sel string
	if s.db.Backend() == "postgres" {
		sel = fmt.Sprintf(marks[0], len(args)+1)
		args = append(args, marks[1])
	} else {
		sel = fmt.Sprintf(`snippet(recall_search, 7, $%d, $%d, '…', 12)`, len(args)+1, len(args)+2)
		args = append(args, f.Open, f.Close)
	}
	args = append(args, f.Limit)
	hits, err = list(ctx, s, func(rows *sql.Rows) (h Hit, err error) {
		var start, end int64
		err = rows.Scan(&h.SHA256, &h.Provider, &h.Model, &h.Settings, &start, &end, &h.Speaker, &h.SpeakerName, &h.Snippet)
		h.Start, h.End = fromMicros(start), fromMicros(end)
		return h, err
	}, `SELECT sha256, provider, model, settings, start_us, end_us, speaker, `+speakerName+`, `+sel+` `+match+order+fmt.Sprintf(` LIMIT $%d`, len(args)), args...)
	return hits, counted[0], err
}
