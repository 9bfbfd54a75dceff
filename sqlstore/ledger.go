package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/rubicon-go/rubicon/ledger"
)

// PutAccount implements ledger.Tx.
func (tx *Tx) PutAccount(ctx context.Context, name, unit string, limit ledger.Amount) (ledger.Account, error) {
	if _, err := tx.exec(ctx, `INSERT INTO rubicon_accounts (name, unit, limit_amount) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET unit = excluded.unit, limit_amount = excluded.limit_amount`, name, unit, int64(limit)); err != nil {
		return ledger.Account{}, err
	}
	return tx.Account(ctx, name)
}

const accountColumns = `name, unit, limit_amount, held, spent`

func scanAccount(s scanner) (ledger.Account, error) {
	var a ledger.Account
	var limit, held, spent int64
	err := s.Scan(&a.Name, &a.Unit, &limit, &held, &spent)
	a.Limit, a.Held, a.Spent = ledger.Amount(limit), ledger.Amount(held), ledger.Amount(spent)
	return a, err
}

// Account implements ledger.Tx.
func (tx *Tx) Account(ctx context.Context, name string) (ledger.Account, error) {
	a, err := scanAccount(tx.queryRow(ctx, `SELECT `+accountColumns+` FROM rubicon_accounts WHERE name = $1`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("%w: %q", ledger.ErrNoAccount, name)
	}
	return a, err
}

// Accounts implements ledger.Tx.
func (tx *Tx) Accounts(ctx context.Context) ([]ledger.Account, error) {
	rows, err := tx.query(ctx, `SELECT `+accountColumns+` FROM rubicon_accounts ORDER BY name`)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scanAccount)
}

// AddHeld implements ledger.Tx. The limit check and the increment are one
// statement, so concurrent holds cannot both pass the check.
func (tx *Tx) AddHeld(ctx context.Context, account string, amount ledger.Amount) (bool, error) {
	// $2 <= limit - held - spent rather than held + spent + $2 <= limit:
	// the sum could overflow, which SQLite turns into a float.
	res, err := tx.exec(ctx, `UPDATE rubicon_accounts SET held = held + $2
		WHERE name = $1 AND $2 <= limit_amount - held - spent`, account, int64(amount))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// MoveHeld implements ledger.Tx. The overflow check is part of the
// statement: SQLite would store an overflowing sum as a float.
func (tx *Tx) MoveHeld(ctx context.Context, account string, held, spent ledger.Amount) error {
	res, err := tx.exec(ctx, `UPDATE rubicon_accounts SET held = held - $2, spent = spent + $3
		WHERE name = $1 AND $3 <= 9223372036854775807 - held - spent + $2`,
		account, int64(held), int64(spent))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	acct, err := tx.Account(ctx, account)
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: account %q (held %d, spent %d) cannot release %d and spend %d", ledger.ErrOverflow, account, acct.Held, acct.Spent, held, spent)
}

const holdColumns = `id, account, amount, state, settled, op_key, created_at, updated_at`

// InsertHold implements ledger.Tx.
func (tx *Tx) InsertHold(ctx context.Context, h ledger.Hold) error {
	_, err := tx.exec(ctx, `INSERT INTO rubicon_holds (`+holdColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		h.ID, h.Account, int64(h.Amount), string(h.State), int64(h.Settled), h.Operation, micros(h.Created), micros(h.Updated))
	return err
}

func scanHold(s scanner) (ledger.Hold, error) {
	var h ledger.Hold
	var amount, settled, created, updated int64
	var state string
	err := s.Scan(&h.ID, &h.Account, &amount, &state, &settled, &h.Operation, &created, &updated)
	h.Amount, h.Settled, h.State = ledger.Amount(amount), ledger.Amount(settled), ledger.HoldState(state)
	h.Created, h.Updated = fromMicros(created), fromMicros(updated)
	return h, err
}

// LockHold implements ledger.Tx.
func (tx *Tx) LockHold(ctx context.Context, id string) (ledger.Hold, error) {
	h, err := scanHold(tx.queryRow(ctx, `SELECT `+holdColumns+` FROM rubicon_holds WHERE id = $1`+tx.lock(), id))
	if errors.Is(err, sql.ErrNoRows) {
		return h, fmt.Errorf("%w: %q", ledger.ErrNoHold, id)
	}
	return h, err
}

// Holds implements ledger.Tx.
func (tx *Tx) Holds(ctx context.Context, f ledger.HoldFilter) ([]ledger.Hold, error) {
	var w where
	if f.Account != "" {
		w.add("account = " + w.arg(f.Account))
	}
	if f.Operation != "" {
		w.add("op_key = " + w.arg(f.Operation))
	}
	in(&w, "state", f.States)
	rows, err := tx.query(ctx, `SELECT `+holdColumns+` FROM rubicon_holds`+w.String()+` ORDER BY created_at, id`, w.args...)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scanHold)
}

// UpdateHold implements ledger.Tx.
func (tx *Tx) UpdateHold(ctx context.Context, h ledger.Hold) error {
	res, err := tx.exec(ctx, `UPDATE rubicon_holds SET state = $2, settled = $3, updated_at = $4 WHERE id = $1`,
		h.ID, string(h.State), int64(h.Settled), micros(h.Updated))
	if err != nil {
		return err
	}
	return oneRow(res, fmt.Errorf("%w: %q", ledger.ErrNoHold, h.ID))
}

// HoldTotals implements ledger.Tx.
func (tx *Tx) HoldTotals(ctx context.Context) (map[string]ledger.Totals, error) {
	rows, err := tx.query(ctx, `SELECT account,
		CAST(COALESCE(SUM(CASE WHEN state = 'held' THEN amount ELSE 0 END), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN state = 'settled' THEN settled ELSE 0 END), 0) AS BIGINT)
		FROM rubicon_holds GROUP BY account`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]ledger.Totals{}
	for rows.Next() {
		var name string
		var held, settled int64
		if err := rows.Scan(&name, &held, &settled); err != nil {
			return nil, err
		}
		out[name] = ledger.Totals{Held: ledger.Amount(held), Settled: ledger.Amount(settled)}
	}
	return out, rows.Err()
}
