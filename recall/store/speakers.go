package store

import (
	"context"
	"database/sql"
	"maps"
	"slices"

	"github.com/rubicon-go/rubicon/sqlstore"
)

// SpeakerNames returns the names people gave the speakers of a
// recording's content, by the labels its transcripts give them; empty
// when none was named.
func (s *Store) SpeakerNames(ctx context.Context, sha string) (map[string]string, error) {
	type row struct{ label, name string }
	rows, err := list(ctx, s, func(rows *sql.Rows) (n row, err error) {
		err = rows.Scan(&n.label, &n.name)
		return n, err
	}, `SELECT label, name FROM recall_speakers WHERE sha256 = $1`, sha)
	names := make(map[string]string, len(rows))
	for _, n := range rows {
		names[n.label] = n.name
	}
	return names, err
}

// NameSpeakers gives the speakers of a recording's content names, by
// label, in one transaction: an empty name takes the label's name away.
// The transcripts stay as the provider made them; exports, searches and
// pages show the names.
func (s *Store) NameSpeakers(ctx context.Context, sha string, names map[string]string) error {
	now := s.now().UnixMicro()
	return s.update(ctx, named("naming the speakers of "+sha), func(tx *sqlstore.Tx) error {
		q := tx.SQL()
		for _, label := range slices.Sorted(maps.Keys(names)) {
			var err error
			if names[label] == "" {
				_, err = q.ExecContext(ctx, `DELETE FROM recall_speakers WHERE sha256 = $1 AND label = $2`, sha, label)
			} else {
				_, err = q.ExecContext(ctx, `INSERT INTO recall_speakers (sha256, label, name, named_at) VALUES ($1, $2, $3, $4)
					ON CONFLICT (sha256, label) DO UPDATE SET name = excluded.name, named_at = excluded.named_at`, sha, label, names[label], now)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}
