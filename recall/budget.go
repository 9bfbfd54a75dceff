package recall

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/recording"
)

// ErrBudgetConflict reports a run asked for a budget other than the one
// the batch has: a budget changes only by [Archive.SetBudget], on purpose.
var ErrBudgetConflict = errors.New("the batch has another budget")

// BudgetChange is a recorded change of a batch's budget, in micro-dollars;
// 0 is no budget.
type BudgetChange struct {
	Batch string        `json:"batch"`
	At    time.Time     `json:"at"`
	Old   ledger.Amount `json:"old_micro_usd"`
	New   ledger.Amount `json:"new_micro_usd"`
	By    string        `json:"by"`
	How   string        `json:"how"`
}

// Changed reports whether the change changed anything.
func (c BudgetChange) Changed() bool { return c.Old != c.New }

// Budget is a batch's budget and its history.
type Budget struct {
	Batch string `json:"batch"`
	// Budget is the cap, 0 when the batch has none.
	Budget  ledger.Amount  `json:"budget_micro_usd"`
	Changes []BudgetChange `json:"changes"`
}

// SetBudget caps what batch may spend over all its runs, held and settled
// together; 0 takes the cap away. The change is recorded with by (who)
// and how (the command), unless the budget already was amount.
func (a *Archive) SetBudget(ctx context.Context, batch string, amount ledger.Amount, by, how string) (BudgetChange, error) {
	if amount < 0 {
		return BudgetChange{}, fmt.Errorf("budget %d is negative", amount)
	}
	if err := a.checkBatch(ctx, batch); err != nil {
		return BudgetChange{}, err
	}
	c, err := a.store.SetBudget(ctx, batch, amount, by, how)
	return BudgetChange(c), err
}

// Budget returns batch's budget and the record of its changes.
func (a *Archive) Budget(ctx context.Context, batch string) (Budget, error) {
	b := Budget{Batch: batch, Changes: []BudgetChange{}}
	if err := a.checkBatch(ctx, batch); err != nil {
		return b, err
	}
	m, err := a.store.Money(ctx, batch)
	if err != nil {
		return b, err
	}
	b.Budget = m.Budget
	changes, err := a.store.BudgetChanges(ctx, batch)
	for _, c := range changes {
		b.Changes = append(b.Changes, BudgetChange(c))
	}
	return b, err
}

// keepBudget makes sure the batch has the budget a run asks for: want 0
// keeps the batch's budget, whatever it is; another amount sets it on a
// batch without one, and is refused with ErrBudgetConflict on a batch with
// another.
func (a *Archive) keepBudget(ctx context.Context, batch string, want ledger.Amount, by string) error {
	if want == 0 {
		return a.store.OpenAccount(ctx, batch)
	}
	m, err := a.store.Money(ctx, batch)
	if err != nil {
		return err
	}
	switch m.Budget {
	case want:
		return a.store.OpenAccount(ctx, batch)
	case 0:
		_, err := a.store.SetBudget(ctx, batch, want, by, "run --budget")
		return err
	}
	return fmt.Errorf("%w: batch %q has a budget of $%s, and this run asks for $%s; change it with 'recall-archive budget %s %s', then run again",
		ErrBudgetConflict, batch, m.Budget.Decimal(6), want.Decimal(6), batch, want.Decimal(6))
}

// Refusal is a recording that the batch's budget refused to pay for.
type Refusal struct {
	Path string `json:"path"`
	// Needed is what its refused chunks need, Missing what the budget
	// lacked for them when they were refused.
	Needed  ledger.Amount `json:"needed_micro_usd"`
	Missing ledger.Amount `json:"missing_micro_usd"`
}

// refusals lists the batch's recordings that its budget refused, by path.
func (a *Archive) refusals(ctx context.Context, batch string, progress map[string]recording.Progress) ([]Refusal, error) {
	rs, err := a.store.Refusals(ctx, batch)
	if err != nil {
		return nil, err
	}
	out := []Refusal{}
	at := map[string]int{}
	for _, r := range rs {
		if progress[r.SHA256] != recording.RefusedByBudget {
			continue
		}
		i, ok := at[r.SHA256]
		if !ok {
			path := r.SHA256
			if paths, err := a.store.AddedPaths(ctx, batch, r.SHA256); err == nil && len(paths) > 0 {
				path = paths[0]
			}
			i = len(out)
			at[r.SHA256] = i
			out = append(out, Refusal{Path: path})
		}
		out[i].Needed += r.Needed
		out[i].Missing = max(out[i].Missing, r.Missing)
	}
	return out, nil
}
