package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/journal"
)

const operationColumns = `key, kind, subject, state, attempts, last_phase, last_error, evidence, worker, instance, lease_expires_at, created_at, updated_at, resolution, guard, replay`

type scanner interface{ Scan(dest ...any) error }

// scanOperation reads one operation. A row that scans but whose evidence or
// resolution cannot be decoded gives the operation without that part and a
// *journal.CorruptError.
func scanOperation(s scanner) (journal.Operation, error) {
	var (
		op         journal.Operation
		state      string
		phase      string
		evidence   string
		lease      sql.NullInt64
		created    int64
		updated    int64
		resolution sql.NullString
		guard      sql.NullString
		replay     sql.NullString
	)
	if err := s.Scan(&op.Key, &op.Kind, &op.Subject, &state, &op.Attempts, &phase, &op.LastError, &evidence,
		&op.Worker, &op.Instance, &lease, &created, &updated, &resolution, &guard, &replay); err != nil {
		return op, err
	}
	op.Guard, op.Replay = guard.String, replay.String
	op.State, op.LastPhase = journal.State(state), rubicon.Phase(phase)
	op.Created, op.Updated = fromMicros(created), fromMicros(updated)
	if lease.Valid {
		op.LeaseExpires = fromMicros(lease.Int64)
	}
	var err error
	if op.Evidence, err = decodeEvidence(evidence); err != nil {
		return op, &journal.CorruptError{Key: op.Key, Part: "evidence", Err: err}
	}
	if resolution.Valid {
		var r storedResolution
		if err := decodeJSON(resolution.String, &r); err != nil {
			return op, &journal.CorruptError{Key: op.Key, Part: "resolution", Err: err}
		}
		op.Resolution = &journal.Resolution{To: journal.State(r.To), By: r.By, Note: r.Note, At: fromMicros(r.At), Evidence: r.Evidence}
	}
	return op, nil
}

// storedResolution is a Resolution as JSON in the resolution column.
type storedResolution struct {
	To       string           `json:"to"`
	By       string           `json:"by"`
	Note     string           `json:"note"`
	At       int64            `json:"at"`
	Evidence journal.Evidence `json:"evidence,omitempty"`
}

// CreateOperation implements journal.Tx. The guard is the partial unique
// index over open operations' guards: an INSERT that meets either it or
// the key inserts nothing, waiting first, on PostgreSQL, for a
// transaction that holds a conflicting row to end.
func (tx *Tx) CreateOperation(ctx context.Context, op journal.Operation) (journal.Operation, bool, error) {
	ev, err := encodeEvidence(op.Evidence)
	if err != nil {
		return journal.Operation{}, false, fmt.Errorf("operation %q: evidence: %w", op.Key, err)
	}
	// Under READ COMMITTED the holder of a guard may move on between the
	// INSERT and the look-up; the INSERT is then tried again.
	for try := 0; ; try++ {
		res, err := tx.exec(ctx, `INSERT INTO rubicon_operations (key, kind, subject, state, evidence, created_at, updated_at, guard, replay)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
			op.Key, op.Kind, op.Subject, string(op.State), ev, micros(op.Created), micros(op.Updated), nullText(op.Guard), nullText(op.Replay))
		if err != nil {
			return journal.Operation{}, false, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return journal.Operation{}, false, err
		}
		stored, err := tx.LockOperation(ctx, op.Key)
		var nf *journal.NotFoundError
		if n == 1 || !errors.As(err, &nf) || op.Guard == "" {
			return stored, n == 1, err
		}
		holder, err := scanOperation(tx.queryRow(ctx, `SELECT `+operationColumns+` FROM rubicon_operations
			WHERE guard = $1 AND state IN ('pending', 'sending', 'ambiguous')`, op.Guard))
		switch {
		case !errors.Is(err, sql.ErrNoRows):
			return holder, false, err
		case try == 2:
			return journal.Operation{}, false, nil // held, by whom is not known
		}
	}
}

// LastApplied implements journal.Tx.
func (tx *Tx) LastApplied(ctx context.Context, replay string, since time.Time) (journal.Operation, bool, error) {
	op, err := scanOperation(tx.queryRow(ctx, `SELECT `+operationColumns+` FROM rubicon_operations
		WHERE replay = $1 AND state = 'applied' AND updated_at >= $2 ORDER BY updated_at DESC, key LIMIT 1`, replay, micros(since)))
	if errors.Is(err, sql.ErrNoRows) {
		return journal.Operation{}, false, nil
	}
	return op, err == nil, err
}

func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// LockOperation implements journal.Tx.
func (tx *Tx) LockOperation(ctx context.Context, key string) (journal.Operation, error) {
	op, err := scanOperation(tx.queryRow(ctx, `SELECT `+operationColumns+` FROM rubicon_operations WHERE key = $1`+tx.lock(), key))
	if errors.Is(err, sql.ErrNoRows) {
		return op, &journal.NotFoundError{Key: key}
	}
	return op, err
}

// UpdateOperation implements journal.Tx.
func (tx *Tx) UpdateOperation(ctx context.Context, op journal.Operation) error {
	ev, err := encodeEvidence(op.Evidence)
	if err != nil {
		return fmt.Errorf("operation %q: evidence: %w", op.Key, err)
	}
	var resolution any
	if r := op.Resolution; r != nil {
		b, err := json.Marshal(storedResolution{To: string(r.To), By: r.By, Note: r.Note, At: micros(r.At), Evidence: r.Evidence})
		if err != nil {
			return fmt.Errorf("operation %q: resolution: %w", op.Key, err)
		}
		resolution = string(b)
	}
	res, err := tx.exec(ctx, `UPDATE rubicon_operations SET state = $2, attempts = $3, last_phase = $4, last_error = $5,
		evidence = $6, worker = $7, instance = $8, lease_expires_at = $9, updated_at = $10, resolution = $11 WHERE key = $1`,
		op.Key, string(op.State), op.Attempts, string(op.LastPhase), op.LastError, ev, op.Worker, op.Instance, nullMicros(op.LeaseExpires), micros(op.Updated), resolution)
	if err != nil {
		return err
	}
	return oneRow(res, &journal.NotFoundError{Key: op.Key})
}

// Move implements journal.Mover: one conditional UPDATE … RETURNING
// instead of a read and a write.
func (tx *Tx) Move(ctx context.Context, m journal.Move) (journal.Operation, bool, error) {
	var ev any
	if len(m.Evidence) > 0 {
		b, err := json.Marshal(m.Evidence)
		if err != nil {
			return journal.Operation{}, false, fmt.Errorf("operation %q: evidence: %w", m.Key, err)
		}
		if !topLevelOnly(b) {
			return journal.Operation{}, false, nil
		}
		ev = string(b)
	}
	attempts := 0
	if m.AddAttempt {
		attempts = 1
	}
	rows, err := tx.query(ctx, tx.d.move, ev, m.Key, string(m.To), attempts, nullMicros(m.Lease), micros(m.Updated),
		m.Failure, string(m.LastPhase), m.LastError, string(m.From), m.Worker, nullMicros(m.LeaseAfter), m.Instance, m.Attempt)
	if err != nil {
		return journal.Operation{}, false, err
	}
	ops, err := scanOperations(rows)
	if err != nil || len(ops) != 1 {
		return journal.Operation{}, false, err
	}
	return ops[0], true, nil
}

// topLevelOnly reports whether merging the JSON object b key by key gives
// the same as json_patch: no value is an object or null.
func topLevelOnly(b []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		return false
	}
	for _, v := range top {
		if len(v) == 0 || v[0] == '{' || v[0] == 'n' {
			return false
		}
	}
	return true
}

// AppendEntry implements journal.Tx.
func (tx *Tx) AppendEntry(ctx context.Context, e journal.Entry) error {
	ev, err := encodeEvidence(e.Evidence)
	if err != nil {
		return fmt.Errorf("operation %q: evidence: %w", e.Key, err)
	}
	_, err = tx.exec(ctx, `INSERT INTO rubicon_audit (op_key, from_state, to_state, at, actor, reason, evidence)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, e.Key, string(e.From), string(e.To), micros(e.At), e.Actor, e.Reason, ev)
	return err
}

// ClaimPending implements journal.Tx.
func (tx *Tx) ClaimPending(ctx context.Context, kind, worker, instance string, n int, now, until time.Time) ([]journal.Operation, error) {
	rows, err := tx.query(ctx, `UPDATE rubicon_operations SET worker = $1, lease_expires_at = $2, updated_at = $3, instance = $6
		WHERE key IN (SELECT key FROM rubicon_operations
			WHERE kind = $4 AND state = 'pending' AND (lease_expires_at IS NULL OR lease_expires_at <= $3)
			ORDER BY created_at, key LIMIT $5`+tx.d.skipLocked+`)
		RETURNING `+operationColumns, worker, micros(until), micros(now), kind, n, instance)
	if err != nil {
		return nil, err
	}
	ops, err := scanOperations(rows)
	sort.Slice(ops, func(i, j int) bool {
		if !ops[i].Created.Equal(ops[j].Created) {
			return ops[i].Created.Before(ops[j].Created)
		}
		return ops[i].Key < ops[j].Key
	})
	return ops, err
}

// RenewLeases implements journal.Tx.
func (tx *Tx) RenewLeases(ctx context.Context, worker, instance string, keys []string, now, until time.Time) ([]string, error) {
	var renewed []string
	for _, k := range keys {
		res, err := tx.exec(ctx, `UPDATE rubicon_operations SET lease_expires_at = CASE WHEN lease_expires_at > $1 THEN lease_expires_at ELSE $1 END
			WHERE key = $2 AND worker = $3 AND instance = $5 AND state IN ('pending', 'sending') AND lease_expires_at > $4`,
			micros(until), k, worker, micros(now), instance)
		if err != nil {
			return renewed, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return renewed, err
		} else if n == 1 {
			renewed = append(renewed, k)
		}
	}
	return renewed, nil
}

// ExpiredSending implements journal.Tx.
func (tx *Tx) ExpiredSending(ctx context.Context, now time.Time, limit int) ([]journal.Operation, error) {
	rows, err := tx.query(ctx, `SELECT `+operationColumns+` FROM rubicon_operations
		WHERE state = 'sending' AND lease_expires_at <= $1 ORDER BY lease_expires_at, key LIMIT $2`+tx.d.skipLocked,
		micros(now), limit)
	if err != nil {
		return nil, err
	}
	return scanOperations(rows)
}

// Operations implements journal.Tx.
func (tx *Tx) Operations(ctx context.Context, f journal.Filter) ([]journal.Operation, error) {
	var w where
	if f.Kind != "" {
		w.add("kind = " + w.arg(f.Kind))
	}
	if f.SubjectPrefix != "" {
		// substr rather than LIKE, so that % and _ in the prefix are literal.
		w.add(fmt.Sprintf("substr(subject, 1, %s) = %s", w.arg(len([]rune(f.SubjectPrefix))), w.arg(f.SubjectPrefix)))
	}
	if len(f.Keys) > 0 {
		keys, err := json.Marshal(f.Keys)
		if err != nil {
			return nil, err
		}
		w.add("key IN (" + tx.d.jsonTexts(w.arg(string(keys))) + ")")
	}
	in(&w, "state", f.States)
	q := `SELECT ` + operationColumns + ` FROM rubicon_operations` + w.String() + " ORDER BY created_at, key"
	if f.Limit > 0 {
		q += " LIMIT " + w.arg(f.Limit)
	}
	rows, err := tx.query(ctx, q, w.args...)
	if err != nil {
		return nil, err
	}
	return scanOperations(rows)
}

// Entries implements journal.Tx.
func (tx *Tx) Entries(ctx context.Context, key string) ([]journal.Entry, error) {
	rows, err := tx.query(ctx, `SELECT id, op_key, from_state, to_state, at, actor, reason, evidence
		FROM rubicon_audit WHERE op_key = $1 ORDER BY id`, key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []journal.Entry
	var damaged []error
	for rows.Next() {
		var e journal.Entry
		var from, to, ev string
		var at int64
		if err := rows.Scan(&e.ID, &e.Key, &from, &to, &at, &e.Actor, &e.Reason, &ev); err != nil {
			return nil, err
		}
		e.From, e.To, e.At = journal.State(from), journal.State(to), fromMicros(at)
		if e.Evidence, err = decodeEvidence(ev); err != nil {
			// The audit log cannot be repaired: keep the entry, say what
			// is lost.
			damaged = append(damaged, &journal.CorruptError{Key: e.Key, Part: fmt.Sprintf("audit entry %d's evidence", e.ID), Err: err})
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	return out, errors.Join(damaged...)
}

// scanOperations reads the operations of rows: every readable one, and a
// *journal.CorruptError for each that is not, joined.
func scanOperations(rows *sql.Rows) ([]journal.Operation, error) {
	defer rows.Close()
	var ops []journal.Operation
	var damaged []error
	for rows.Next() {
		op, err := scanOperation(rows)
		var ce *journal.CorruptError
		switch {
		case errors.As(err, &ce):
			damaged = append(damaged, err)
			continue
		case err != nil:
			return nil, err
		}
		ops = append(ops, op)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return ops, errors.Join(damaged...)
}

func encodeEvidence(e journal.Evidence) (string, error) {
	if len(e) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(e)
	return string(b), err
}

func decodeEvidence(s string) (journal.Evidence, error) {
	if s == "" || s == "{}" {
		return nil, nil
	}
	var e journal.Evidence
	if err := decodeJSON(s, &e); err != nil {
		return nil, err
	}
	if len(e) == 0 {
		return nil, nil
	}
	return e, nil
}

// decodeJSON decodes s into v, keeping numbers exact (json.Number): an id
// above 2^53 must not be rounded through a float64.
func decodeJSON(s string, v any) error {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func nullMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// oneRow checks that res changed exactly one row, and returns notFound if
// it changed none.
func oneRow(res sql.Result, notFound error) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return notFound
	}
	return nil
}
