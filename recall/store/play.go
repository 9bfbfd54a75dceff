package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// The sandbox's charges are play money: they are held and settled on a
// batch's play account (playAccount), never on the account of its budget.
// Versions before schema 6 held them on the budget's account; those holds
// stay there (a ledger's holds are never moved), and the budget's ledger
// limit carries their amount above the budget, so that they never count
// against it: recall_play_carried keeps what it carries, and fitLimit
// follows it when one of those holds is settled or voided.

// isPlay reports whether the request key pays for a chunk of the
// sandbox, whose money is play money.
func isPlay(ctx context.Context, q sqlstore.Querier, key string) (bool, error) {
	var name string
	err := q.QueryRowContext(ctx, `SELECT provider FROM recall_chunks WHERE op_key = $1`, key).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return name == recording.Sandbox, err
}

// accountFor returns the account that pays for the request key of batch:
// its play account, opened if need be, for the sandbox's.
func (s *Store) accountFor(ctx context.Context, tx *sqlstore.Tx, batch, key string) (string, error) {
	play, err := isPlay(ctx, tx.SQL(), key)
	if err != nil || !play {
		return account(batch), err
	}
	name := playAccount(batch)
	if _, err := s.l.AccountTx(ctx, tx, name); errors.Is(err, ledger.ErrNoAccount) {
		_, err = s.l.OpenTx(ctx, tx, name, unit, noLimit)
		return name, err
	} else if err != nil {
		return "", err
	}
	return name, nil
}

// playKeys returns the keys of the requests of the sandbox, whose money is
// play money.
func playKeys(ctx context.Context, q sqlstore.Querier) (map[string]bool, error) {
	keys := map[string]bool{}
	rows, err := q.QueryContext(ctx, `SELECT op_key FROM recall_chunks WHERE provider = $1`, recording.Sandbox)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		keys[k] = true
	}
	return keys, rows.Err()
}

// legacyPlay sums the play money that earlier versions held on the
// budget's account of batch: held, and settled.
func (s *Store) legacyPlay(ctx context.Context, tx ledger.Tx, q sqlstore.Querier, batch string) (held, spent ledger.Amount, err error) {
	holds, err := s.l.HoldsTx(ctx, tx, ledger.HoldFilter{Account: account(batch)})
	if err != nil || len(holds) == 0 {
		return 0, 0, err
	}
	keys, err := playKeys(ctx, q)
	if err != nil {
		return 0, 0, err
	}
	for _, h := range holds {
		if !keys[h.Operation] {
			continue
		}
		switch h.State {
		case ledger.Held:
			held += h.Amount
		case ledger.Settled:
			spent += h.Settled
		}
	}
	return held, spent, nil
}

// carried returns what the budget's ledger limit of batch carries above
// the budget, and whether the batch was looked at.
func carried(ctx context.Context, q sqlstore.Querier, batch string) (ledger.Amount, bool, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT amount FROM recall_play_carried WHERE batch = $1`, batch).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return ledger.Amount(n), err == nil, err
}

// fitLimit makes the budget's ledger limit of batch carry the play money
// earlier versions held on it, as it stands now.
func (s *Store) fitLimit(ctx context.Context, tx *sqlstore.Tx, batch string) error {
	q := tx.SQL()
	held, spent, err := s.legacyPlay(ctx, tx, q, batch)
	if err != nil {
		return err
	}
	legacy := held + spent
	was, seen, err := carried(ctx, q, batch)
	if err != nil || seen && was == legacy {
		return err
	}
	acct, err := s.l.AccountTx(ctx, tx, account(batch))
	switch {
	case errors.Is(err, ledger.ErrNoAccount):
	case err != nil:
		return err
	case acct.Limit != noLimit:
		if _, err := s.l.OpenTx(ctx, tx, acct.Name, unit, acct.Limit-was+legacy); err != nil {
			return err
		}
	}
	_, err = q.ExecContext(ctx, `INSERT INTO recall_play_carried (batch, amount) VALUES ($1, $2)
		ON CONFLICT (batch) DO UPDATE SET amount = excluded.amount`, batch, int64(legacy))
	return err
}

// refit follows a hold just settled or voided: one of the play money's
// on a budget's account changes what its limit carries.
func (s *Store) refit(ctx context.Context, tx *sqlstore.Tx, h ledger.Hold) error {
	batch, ok := strings.CutPrefix(h.Account, account(""))
	if !ok {
		return nil
	}
	play, err := isPlay(ctx, tx.SQL(), h.Operation)
	if err != nil || !play {
		return err
	}
	return s.fitLimit(ctx, tx, batch)
}

// carryPlay looks, once per batch, at the play money earlier versions held
// on its budget's account: see fitLimit.
func (s *Store) carryPlay(ctx context.Context) error {
	if s.readOnly {
		return nil
	}
	batches, err := s.texts(ctx, `SELECT name FROM recall_batches WHERE name NOT IN (SELECT batch FROM recall_play_carried) ORDER BY name`)
	if err != nil {
		return err
	}
	for _, b := range batches {
		if err := s.update(ctx, named("carrying the play money of batch "+b), func(tx *sqlstore.Tx) error { return s.fitLimit(ctx, tx, b) }); err != nil {
			return err
		}
	}
	return nil
}
