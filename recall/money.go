package recall

import (
	"context"
	"errors"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// Money is where a batch's budget stands, in micro-dollars.
type Money struct {
	// Budget is the batch's cap, 0 when it has none.
	Budget ledger.Amount `json:"budget_micro_usd"`
	// Held is reserved by requests not yet settled, HeldAmbiguous the part
	// of it held by ambiguous requests, which may have been charged.
	Held          ledger.Amount `json:"held_micro_usd"`
	HeldAmbiguous ledger.Amount `json:"held_ambiguous_micro_usd"`
	// Spent is what applied requests cost.
	Spent ledger.Amount `json:"spent_micro_usd"`
}

// Money returns the batch's budget, held and spent amounts.
func (a *Archive) Money(ctx context.Context, batch string) (Money, error) {
	var m Money
	acct, err := ledger.New(a.db.LedgerStore(), a.now).Account(ctx, accountOf(batch))
	if errors.Is(err, ledger.ErrNoAccount) {
		return m, nil // never run
	}
	if err != nil {
		return m, err
	}
	if acct.Limit != noLimit {
		m.Budget = acct.Limit
	}
	m.Held, m.Spent = acct.Held, acct.Spent
	err = a.db.View(ctx, func(tx *sqlstore.Tx) error {
		return tx.SQL().QueryRowContext(ctx, `SELECT COALESCE(SUM(h.amount), 0) FROM rubicon_holds h
			JOIN rubicon_operations o ON o.key = h.op_key
			WHERE h.account = $1 AND h.state = 'held' AND o.state = 'ambiguous'`, accountOf(batch)).Scan(&m.HeldAmbiguous)
	})
	return m, err
}

// Operations returns the journal operations of the batch's chunks.
func (a *Archive) Operations(ctx context.Context, batch string) ([]journal.Operation, error) {
	keys, err := a.texts(ctx, `SELECT DISTINCT c.op_key FROM recall_chunks c
		JOIN recall_items i ON i.sha256 = c.sha256 WHERE i.batch = $1 ORDER BY c.op_key`, batch)
	if err != nil {
		return nil, err
	}
	j := journal.New(a.db.JournalStore(), journal.Options{Now: a.now})
	ops := make([]journal.Operation, 0, len(keys))
	for _, k := range keys {
		op, err := j.Get(ctx, k)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}
