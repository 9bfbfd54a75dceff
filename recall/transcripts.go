package recall

import (
	"context"
	"encoding/json"
	"time"

	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// storeTranscript keeps the transcript of one chunk, once: a second answer
// for the same chunk changes nothing. Its segments are indexed for search
// with their offsets from the start of the recording.
func (a *Archive) storeTranscript(ctx context.Context, tx *sqlstore.Tx, sha string, idx int, prov, model string, t provider.Transcript, cost ledger.Amount) error {
	q := tx.SQL()
	segs, err := json.Marshal(t.Segments)
	if err != nil {
		return err
	}
	res, err := q.ExecContext(ctx, `INSERT INTO recall_transcripts (sha256, idx, provider, model, text, segments, request_id, cost, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (sha256, idx) DO NOTHING`,
		sha, idx, prov, model, t.Text, string(segs), t.RequestID, int64(cost), a.now().UnixMicro())
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // already stored
	}
	var startUS int64
	if err := q.QueryRowContext(ctx, `SELECT start_us FROM recall_chunks WHERE sha256 = $1 AND idx = $2`, sha, idx).Scan(&startUS); err != nil {
		return err
	}
	offset := time.Duration(startUS) * time.Microsecond
	for _, s := range t.Segments {
		if s.Text == "" {
			continue
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO recall_search (sha256, idx, start_us, end_us, text) VALUES ($1, $2, $3, $4, $5)`,
			sha, idx, (offset + s.Start).Microseconds(), (offset + s.End).Microseconds(), s.Text); err != nil {
			return err
		}
	}
	return nil
}
