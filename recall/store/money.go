package store

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// noLimit is the limit of a batch without a budget.
const noLimit = ledger.Amount(1 << 60)

// unit is the unit of the batches' accounts.
const unit = "micro-USD"

// Money is where a batch's budget stands, in micro-dollars.
type Money struct {
	// Budget is the batch's cap, 0 when it has none.
	Budget ledger.Amount
	// Held is reserved by requests not yet settled, HeldAmbiguous the part
	// of it held by ambiguous requests, which may have been charged.
	Held, HeldAmbiguous ledger.Amount
	// Spent is what applied requests cost.
	Spent ledger.Amount
	// Play is the sandbox's play money, held and spent, which counts in
	// none of the above.
	Play PlayMoney
	// Providers are the money per provider that was paid or held, by name
	// (the sandbox's, marked Play, too).
	Providers []ProviderMoney
}

// PlayMoney is what the sandbox held and charged: nothing was paid.
// HeldAmbiguous is the part of Held that ambiguous requests hold.
type PlayMoney struct{ Held, HeldAmbiguous, Spent ledger.Amount }

// ProviderMoney is the money one provider was paid and is held for.
type ProviderMoney struct {
	Provider    string
	Play        bool
	Held, Spent ledger.Amount
}

// OpenAccount makes sure the batch has its ledger account, without a cap
// when it has none; an existing account, and its budget, stay as they are.
func (s *Store) OpenAccount(ctx context.Context, batch string) error {
	return s.db.Update(ctx, func(tx *sqlstore.Tx) error {
		_, err := s.l.AccountTx(ctx, tx, account(batch))
		if errors.Is(err, ledger.ErrNoAccount) {
			_, err = s.l.OpenTx(ctx, tx, account(batch), unit, noLimit)
		}
		return err
	})
}

// BudgetChange is a change of a batch's budget, as recorded.
type BudgetChange struct {
	Batch string
	At    time.Time
	// Old and New are the budget before and after; 0 is none.
	Old, New ledger.Amount
	// By is who changed it, How the command that did.
	By, How string
}

// SetBudget caps what the batch may spend over all its runs, held and
// settled together (0 takes the cap away), and records the change with
// who made it and how, in one transaction. It returns the change; a
// budget set to what it was changes nothing and records nothing (its Old
// equals its New).
func (s *Store) SetBudget(ctx context.Context, batch string, budget ledger.Amount, by, how string) (BudgetChange, error) {
	c := BudgetChange{Batch: batch, New: budget, By: by, How: how}
	err := s.db.Update(ctx, func(tx *sqlstore.Tx) error {
		c.At = s.now()
		// The limit carries the play money earlier versions held on the
		// account: see fitLimit.
		extra, _, err := carried(ctx, tx.SQL(), batch)
		if err != nil {
			return err
		}
		acct, err := s.l.AccountTx(ctx, tx, account(batch))
		switch {
		case errors.Is(err, ledger.ErrNoAccount):
			c.Old = 0
		case err != nil:
			return err
		case acct.Limit != noLimit:
			c.Old = acct.Limit - extra
		}
		if c.Old == c.New {
			return nil
		}
		limit := budget + extra
		if budget <= 0 {
			limit = noLimit
		}
		if _, err := s.l.OpenTx(ctx, tx, account(batch), unit, limit); err != nil {
			return err
		}
		_, err = tx.SQL().ExecContext(ctx, `INSERT INTO recall_budget_changes (batch, changed_at, old_amount, new_amount, changed_by, how)
			VALUES ($1, $2, $3, $4, $5, $6)`, batch, c.At.UnixMicro(), int64(c.Old), int64(c.New), by, how)
		return err
	})
	return c, err
}

// BudgetChanges returns the changes of the batch's budget, oldest first.
func (s *Store) BudgetChanges(ctx context.Context, batch string) ([]BudgetChange, error) {
	return list(ctx, s, func(rows *sql.Rows) (BudgetChange, error) {
		c := BudgetChange{Batch: batch}
		var at, old, nw int64
		err := rows.Scan(&at, &old, &nw, &c.By, &c.How)
		c.At, c.Old, c.New = time.UnixMicro(at), ledger.Amount(old), ledger.Amount(nw)
		return c, err
	}, `SELECT changed_at, old_amount, new_amount, changed_by, how FROM recall_budget_changes WHERE batch = $1 ORDER BY changed_at`, batch)
}

// Refusal is a chunk that the batch's budget refused to pay for: it was
// never sent.
type Refusal struct {
	Key string
	// SHA256 names the chunk's content.
	SHA256 string
	// Needed is the chunk's hold; Missing what the budget lacked for it
	// when it was refused.
	Needed, Missing ledger.Amount
	At              time.Time
}

// Refuse records that the batch's budget refused the chunk with key, which
// worker claimed: it needed needed, and missing more than the budget had
// left. The request stays pending, and worker's lease on it is given up in
// the same transaction, so that the next run, in any process, may send it.
func (s *Store) Refuse(ctx context.Context, batch, key, worker string, needed, missing ledger.Amount) error {
	return s.db.Update(ctx, func(tx *sqlstore.Tx) error {
		if err := s.j.ReleaseTx(ctx, tx, key, worker); err != nil {
			return err
		}
		_, err := tx.SQL().ExecContext(ctx, `INSERT INTO recall_refusals (batch, op_key, needed, missing, refused_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (batch, op_key) DO UPDATE SET needed = excluded.needed, missing = excluded.missing, refused_at = excluded.refused_at`,
			batch, key, int64(needed), int64(missing), s.now().UnixMicro())
		return err
	})
}

// Refusals returns the batch's chunks that its budget refused and that no
// run has sent since, by key.
func (s *Store) Refusals(ctx context.Context, batch string) ([]Refusal, error) {
	return list(ctx, s, func(rows *sql.Rows) (Refusal, error) {
		var r Refusal
		var needed, missing, at int64
		err := rows.Scan(&r.Key, &r.SHA256, &needed, &missing, &at)
		r.Needed, r.Missing, r.At = ledger.Amount(needed), ledger.Amount(missing), time.UnixMicro(at)
		return r, err
	}, `SELECT r.op_key, c.sha256, r.needed, r.missing, r.refused_at FROM recall_refusals r
		JOIN recall_chunks c ON c.op_key = r.op_key WHERE r.batch = $1 ORDER BY r.op_key`, batch)
}

// Money returns the batch's budget, held and spent amounts, real money
// alone, and the sandbox's play money apart: all zero for a batch never
// run.
func (s *Store) Money(ctx context.Context, batch string) (Money, error) {
	var m Money
	var holds []ledger.Hold
	var playKey map[string]bool
	var who map[string]string
	err := s.db.View(ctx, func(tx *sqlstore.Tx) error {
		m, holds, playKey, who = Money{}, nil, nil, map[string]string{}
		acct, err := s.l.AccountTx(ctx, tx, account(batch))
		switch {
		case errors.Is(err, ledger.ErrNoAccount):
		case err != nil:
			return err
		default:
			extra, _, err := carried(ctx, tx.SQL(), batch)
			if err != nil {
				return err
			}
			if acct.Limit != noLimit {
				m.Budget = acct.Limit - extra
			}
			m.Held, m.Spent = acct.Held, acct.Spent
		}
		for _, name := range []string{account(batch), playAccount(batch)} {
			hs, err := s.l.HoldsTx(ctx, tx, ledger.HoldFilter{Account: name})
			if err != nil {
				return err
			}
			holds = append(holds, hs...)
		}
		if playKey, err = playKeys(ctx, tx.SQL()); err != nil {
			return err
		}
		rows, err := tx.SQL().QueryContext(ctx, `SELECT c.op_key, c.provider FROM recall_chunks c
			WHERE c.sha256 IN (SELECT sha256 FROM recall_items WHERE batch = $1)`, batch)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k, p string
			if err := rows.Scan(&k, &p); err != nil {
				return err
			}
			who[k] = p
		}
		return rows.Err()
	})
	if err != nil || len(holds) == 0 {
		return m, err
	}
	byProvider := map[string]*ProviderMoney{}
	held, playHeld := map[string]ledger.Amount{}, map[string]ledger.Amount{}
	var keys []string
	for _, h := range holds {
		play := playKey[h.Operation]
		var amount, spent ledger.Amount
		switch h.State {
		case ledger.Held:
			amount = h.Amount
		case ledger.Settled:
			spent = h.Settled
		default:
			continue
		}
		if play {
			m.Play.Held += amount
			m.Play.Spent += spent
			if h.Account == account(batch) { // held there by an earlier version
				m.Held -= amount
				m.Spent -= spent
			}
		}
		if h.State == ledger.Held && h.Operation != "" {
			_, seen := held[h.Operation]
			_, seenPlay := playHeld[h.Operation]
			if !seen && !seenPlay {
				keys = append(keys, h.Operation)
			}
			if play {
				playHeld[h.Operation] += h.Amount
			} else {
				held[h.Operation] += h.Amount
			}
		}
		name := who[h.Operation]
		if name == "" {
			name = Unknown
		}
		pm := byProvider[name]
		if pm == nil {
			pm = &ProviderMoney{Provider: name, Play: play}
			byProvider[name] = pm
		}
		pm.Held += amount
		pm.Spent += spent
	}
	for _, name := range slices.Sorted(maps.Keys(byProvider)) {
		m.Providers = append(m.Providers, *byProvider[name])
	}
	if len(keys) == 0 {
		return m, nil // an empty filter would select every operation
	}
	ambiguous, err := s.j.List(ctx, journal.Filter{Keys: keys, States: []journal.State{journal.Ambiguous}})
	for _, op := range ambiguous {
		m.HeldAmbiguous += held[op.Key]
		m.Play.HeldAmbiguous += playHeld[op.Key]
	}
	return m, err
}
