package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/rubicon-go/rubicon/journal"
)

// AuditEntries implements journal.AuditReader: the audit log across
// operations, newest first.
func (tx *Tx) AuditEntries(ctx context.Context, f journal.AuditFilter) ([]journal.Entry, error) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if f.Kind != "" {
		where = append(where, "a.op_key IN (SELECT key FROM rubicon_operations WHERE kind = "+arg(f.Kind)+")")
	}
	if f.Before > 0 {
		where = append(where, "a.id < "+arg(f.Before))
	}
	q := `SELECT a.id, a.op_key, a.from_state, a.to_state, a.at, a.actor, a.reason, a.evidence FROM rubicon_audit a`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY a.id DESC LIMIT " + arg(f.Limit)
	rows, err := tx.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []journal.Entry
	for rows.Next() {
		var e journal.Entry
		var from, to, ev string
		var at int64
		if err := rows.Scan(&e.ID, &e.Key, &from, &to, &at, &e.Actor, &e.Reason, &ev); err != nil {
			return nil, err
		}
		e.From, e.To, e.At = journal.State(from), journal.State(to), fromMicros(at)
		if e.Evidence, err = decodeEvidence(ev); err != nil {
			return nil, fmt.Errorf("audit entry %d: evidence: %w", e.ID, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
