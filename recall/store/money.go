package store

import (
	"context"
	"errors"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
)

// noLimit is the limit of a batch without a budget.
const noLimit = ledger.Amount(1 << 60)

// Money is where a batch's budget stands, in micro-dollars.
type Money struct {
	// Budget is the batch's cap, 0 when it has none.
	Budget ledger.Amount
	// Held is reserved by requests not yet settled, HeldAmbiguous the part
	// of it held by ambiguous requests, which may have been charged.
	Held, HeldAmbiguous ledger.Amount
	// Spent is what applied requests cost.
	Spent ledger.Amount
}

// SetBudget caps what the batch may spend over all its runs, held and
// settled together; 0 takes the cap away.
func (s *Store) SetBudget(ctx context.Context, batch string, budget ledger.Amount) error {
	if budget <= 0 {
		budget = noLimit
	}
	_, err := s.l.Open(ctx, account(batch), "micro-USD", budget)
	return err
}

// Money returns the batch's budget, held and spent amounts: all zero for a
// batch never run.
func (s *Store) Money(ctx context.Context, batch string) (Money, error) {
	var m Money
	acct, err := s.l.Account(ctx, account(batch))
	if errors.Is(err, ledger.ErrNoAccount) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if acct.Limit != noLimit {
		m.Budget = acct.Limit
	}
	m.Held, m.Spent = acct.Held, acct.Spent
	holds, err := s.l.Holds(ctx, ledger.HoldFilter{Account: acct.Name, States: []ledger.HoldState{ledger.Held}})
	if err != nil {
		return m, err
	}
	held := map[string]ledger.Amount{}
	var keys []string
	for _, h := range holds {
		if _, seen := held[h.Operation]; !seen && h.Operation != "" {
			keys = append(keys, h.Operation)
		}
		held[h.Operation] += h.Amount
	}
	if len(keys) == 0 {
		return m, nil // an empty filter would select every operation
	}
	ambiguous, err := s.j.List(ctx, journal.Filter{Keys: keys, States: []journal.State{journal.Ambiguous}})
	for _, op := range ambiguous {
		m.HeldAmbiguous += held[op.Key]
	}
	return m, err
}
