// Package ledger keeps budgets with two-phase holds, so that money is
// reserved before the side-effect boundary and never overspent by calls
// running at the same time.
//
// A hold reserves an amount on an account before the paid request goes out;
// it is refused if the account's held and spent amounts would pass its
// limit. When the request was applied, the hold is settled with the actual
// amount; when it provably was not, the hold is voided and the amount
// released. The hold of an ambiguous operation stays held until the
// operation is resolved: the money may have been spent.
//
// Amounts are integers in an account's minor unit (micro-dollars, say),
// never floating point. The methods ending in Tx run inside a transaction
// the caller opened, so that a hold and the journal's sending transition
// commit together.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rubicon-go/rubicon/internal/input"
)

// Amount is a quantity of an account's minor unit.
type Amount int64

// Account is a budget.
type Account struct {
	Name string
	// Unit names the minor unit, such as "micro-USD".
	Unit string
	// Limit is the most that Held and Spent may reach together through holds.
	Limit Amount
	// Held is reserved by holds not yet settled or voided.
	Held Amount
	// Spent is what settled holds actually cost. It may pass Limit when the
	// actual cost of a request exceeded its hold.
	Spent Amount
}

// Available returns what new holds may still reserve (negative when the
// account is overspent).
func (a Account) Available() Amount { return a.Limit - a.Held - a.Spent }

// HoldState is where a hold stands.
type HoldState string

// The states of a hold.
const (
	Held    HoldState = "held"
	Settled HoldState = "settled"
	Voided  HoldState = "voided"
)

// Hold is an amount reserved on an account for one operation.
type Hold struct {
	// ID is unique per hold. A hold pays for one attempt of an operation:
	// name it by the operation and the attempt ([AttemptHoldID]), so that
	// holding again after a restart finds the attempt's own hold, and a
	// new attempt after a safe failure gets a new one.
	ID      string
	Account string
	Amount  Amount
	State   HoldState
	// Settled is the actual amount, once settled.
	Settled Amount
	// Operation is the key of the journal operation the hold pays for, if any.
	Operation string
	Created   time.Time
	Updated   time.Time
}

// HoldFilter selects holds. Empty fields select everything.
type HoldFilter struct {
	Account string
	// Operation selects the holds that pay for the journal operation with
	// this key.
	Operation string
	States    []HoldState
}

// Totals are the sums of an account's holds, for [Ledger.Verify].
type Totals struct {
	Held    Amount // sum of the amounts of held holds
	Settled Amount // sum of the settled amounts of settled holds
}

// Errors the ledger returns; use errors.Is.
var (
	ErrNoAccount         = errors.New("no such account in the ledger")
	ErrNoHold            = errors.New("no such hold in the ledger")
	ErrInsufficientFunds = errors.New("the hold does not fit the budget")
	ErrHoldClosed        = errors.New("the hold is no longer held")
	ErrHoldConflict      = errors.New("the hold id is already used for another hold")
)

// InsufficientError reports a refused hold.
type InsufficientError struct {
	Account   string
	Amount    Amount
	Available Amount
}

// Error names the account, the amount and what is available.
func (e *InsufficientError) Error() string {
	return fmt.Sprintf("a hold of %d on account %q does not fit: %d available", e.Amount, e.Account, e.Available)
}

// Is makes errors.Is(err, ErrInsufficientFunds) true.
func (e *InsufficientError) Is(target error) bool { return target == ErrInsufficientFunds }

// Tx is what the ledger needs from storage, inside one transaction.
type Tx interface {
	// PutAccount creates the account or changes its limit and unit.
	PutAccount(ctx context.Context, name, unit string, limit Amount) (Account, error)
	// Account returns the account; an error wrapping ErrNoAccount if none.
	Account(ctx context.Context, name string) (Account, error)
	// Accounts returns every account.
	Accounts(ctx context.Context) ([]Account, error)
	// AddHeld adds amount to the account's Held if Held+Spent+amount stays
	// within Limit, in one atomic step, and reports whether it did. It
	// must compute without overflow (as amount <= Limit-Held-Spent, say).
	AddHeld(ctx context.Context, account string, amount Amount) (bool, error)
	// MoveHeld subtracts held from the account's Held and adds spent to its
	// Spent, atomically, if Held+Spent stays at most MaxAmount; otherwise it
	// changes nothing and returns an error wrapping ErrOverflow. An
	// unknown account is an error wrapping ErrNoAccount.
	MoveHeld(ctx context.Context, account string, held, spent Amount) error
	// InsertHold stores a new hold.
	InsertHold(ctx context.Context, h Hold) error
	// LockHold returns the hold with id, locked for update; an error
	// wrapping ErrNoHold if none.
	LockHold(ctx context.Context, id string) (Hold, error)
	// UpdateHold stores h's State, Settled and Updated.
	UpdateHold(ctx context.Context, h Hold) error
	// HoldTotals returns the sums of each account's holds.
	HoldTotals(ctx context.Context) (map[string]Totals, error)
	// Holds returns the holds that f selects, oldest first.
	Holds(ctx context.Context, f HoldFilter) ([]Hold, error)
}

// Store runs functions in transactions.
type Store interface {
	Update(ctx context.Context, fn func(Tx) error) error
	View(ctx context.Context, fn func(Tx) error) error
}

// Ledger keeps accounts and holds. It is safe for concurrent use, by as
// many goroutines and processes as the Store allows.
type Ledger struct {
	store Store
	now   func() time.Time
}

// New returns a ledger over store. A nil now means time.Now.
func New(store Store, now func() time.Time) *Ledger {
	if now == nil {
		now = time.Now
	}
	return &Ledger{store: store, now: now}
}

// Open creates the account, or sets its limit and unit if it exists.
func (l *Ledger) Open(ctx context.Context, name, unit string, limit Amount) (acct Account, err error) {
	err = l.store.Update(ctx, func(tx Tx) error {
		acct, err = l.OpenTx(ctx, tx, name, unit, limit)
		return err
	})
	return acct, err
}

// OpenTx is Open inside the caller's transaction, for example to change a
// limit together with the caller's record of who changed it.
func (l *Ledger) OpenTx(ctx context.Context, tx Tx, name, unit string, limit Amount) (Account, error) {
	if err := checkID("account name", name, MaxNameBytes); err != nil {
		return Account{}, err
	}
	if err := input.Text("unit", unit, MaxUnitBytes); err != nil {
		return Account{}, invalid(fmt.Errorf("account %q: %w", name, err))
	}
	if limit < 0 {
		return Account{}, fmt.Errorf("account %q: the limit %d is negative", name, limit)
	}
	return tx.PutAccount(ctx, name, unit, limit)
}

// Account returns the named account.
func (l *Ledger) Account(ctx context.Context, name string) (acct Account, err error) {
	if err := checkID("account name", name, MaxNameBytes); err != nil {
		return Account{}, err
	}
	err = l.store.View(ctx, func(tx Tx) error {
		acct, err = tx.Account(ctx, name)
		return err
	})
	return acct, err
}

// AccountTx is Account inside the caller's transaction.
func (l *Ledger) AccountTx(ctx context.Context, tx Tx, name string) (Account, error) {
	if err := checkID("account name", name, MaxNameBytes); err != nil {
		return Account{}, err
	}
	return tx.Account(ctx, name)
}

// Holds returns the holds that f selects, oldest first: what an account
// holds, or what pays for an operation.
func (l *Ledger) Holds(ctx context.Context, f HoldFilter) (holds []Hold, err error) {
	if err := checkHoldFilter(f); err != nil {
		return nil, err
	}
	err = l.store.View(ctx, func(tx Tx) error {
		holds, err = tx.Holds(ctx, f)
		return err
	})
	return holds, err
}

// HoldsTx is Holds inside the caller's transaction, for example to settle
// or release what pays for an operation as its outcome is recorded.
func (l *Ledger) HoldsTx(ctx context.Context, tx Tx, f HoldFilter) ([]Hold, error) {
	if err := checkHoldFilter(f); err != nil {
		return nil, err
	}
	return tx.Holds(ctx, f)
}

// HoldRequest asks for a hold.
type HoldRequest struct {
	ID        string
	Account   string
	Amount    Amount
	Operation string
}

// Hold reserves req.Amount on req.Account, or refuses with an
// *InsufficientError. Holding an ID that is still held returns the
// existing hold, so that a restart never holds twice; a request that
// differs from it is an error wrapping ErrHoldConflict. Holding the ID of a
// hold that was settled or voided is an error wrapping ErrHoldClosed: that
// hold paid for an attempt that is over, and the next attempt needs a hold
// of its own ([AttemptHoldID]).
func (l *Ledger) Hold(ctx context.Context, req HoldRequest) (h Hold, err error) {
	err = l.store.Update(ctx, func(tx Tx) error {
		h, err = l.HoldTx(ctx, tx, req)
		return err
	})
	return h, err
}

// HoldTx is Hold inside the caller's transaction.
func (l *Ledger) HoldTx(ctx context.Context, tx Tx, req HoldRequest) (Hold, error) {
	if err := checkID("hold id", req.ID, MaxIDBytes); err != nil {
		return Hold{}, err
	}
	if err := checkID("account name", req.Account, MaxNameBytes); err != nil {
		return Hold{}, err
	}
	if err := input.Text("operation key", req.Operation, MaxIDBytes); err != nil {
		return Hold{}, invalid(fmt.Errorf("hold %q: %w", req.ID, err))
	}
	if req.Amount < 0 {
		return Hold{}, fmt.Errorf("hold %q: the amount %d is negative", req.ID, req.Amount)
	}
	existing, err := tx.LockHold(ctx, req.ID)
	switch {
	case err == nil:
		if existing.Account != req.Account || existing.Amount != req.Amount {
			return existing, fmt.Errorf("%w: hold %q is %d on %q, not %d on %q", ErrHoldConflict, req.ID, existing.Amount, existing.Account, req.Amount, req.Account)
		}
		if existing.State != Held {
			return existing, fmt.Errorf("%w: hold %q was %s on %s, so it pays for an attempt that is over; hold the next attempt under an ID of its own, such as ledger.AttemptHoldID(operation, attempt)",
				ErrHoldClosed, req.ID, existing.State, existing.Updated.UTC().Format(time.RFC3339))
		}
		return existing, nil
	case !errors.Is(err, ErrNoHold):
		return Hold{}, err
	}
	ok, err := tx.AddHeld(ctx, req.Account, req.Amount)
	if err != nil {
		return Hold{}, err
	}
	if !ok {
		acct, err := tx.Account(ctx, req.Account)
		if err != nil {
			return Hold{}, err
		}
		return Hold{}, &InsufficientError{Account: req.Account, Amount: req.Amount, Available: acct.Available()}
	}
	now := l.now()
	h := Hold{ID: req.ID, Account: req.Account, Amount: req.Amount, State: Held, Operation: req.Operation, Created: now, Updated: now}
	return h, tx.InsertHold(ctx, h)
}

// AttemptHoldID returns the ID of the hold that pays for one attempt of an
// operation: the operation's key and the attempt's number, which the
// journal counts (journal.Operation.Attempts, after the sending
// transition).
func AttemptHoldID(operation string, attempt int) string {
	return operation + "#" + strconv.Itoa(attempt)
}

// Settle closes a hold of an applied operation with the actual amount,
// which may differ from the amount held. Settling a settled hold with the
// same amount again changes nothing.
func (l *Ledger) Settle(ctx context.Context, id string, actual Amount) (h Hold, err error) {
	err = l.store.Update(ctx, func(tx Tx) error {
		h, err = l.SettleTx(ctx, tx, id, actual)
		return err
	})
	return h, err
}

// SettleTx is Settle inside the caller's transaction.
func (l *Ledger) SettleTx(ctx context.Context, tx Tx, id string, actual Amount) (Hold, error) {
	if err := checkID("hold id", id, MaxIDBytes); err != nil {
		return Hold{}, err
	}
	if actual < 0 {
		return Hold{}, fmt.Errorf("settling hold %q: the actual amount %d is negative", id, actual)
	}
	h, err := tx.LockHold(ctx, id)
	if err != nil {
		return Hold{}, err
	}
	if h.State == Settled && h.Settled == actual {
		return h, nil
	}
	if h.State != Held {
		return h, closedError(h, "settle")
	}
	// Checked before anything is written, with a clear error; the store
	// checks again in the same statement as the change.
	acct, err := tx.Account(ctx, h.Account)
	if err != nil {
		return Hold{}, err
	}
	if !fits(acct.Held, acct.Spent, h.Amount, actual) {
		return h, &OverflowError{Account: h.Account, Hold: id, Amount: actual, Held: acct.Held, Spent: acct.Spent}
	}
	return l.close(ctx, tx, h, Settled, actual)
}

// Void releases a hold of an operation that was not applied. Voiding a
// voided hold again changes nothing.
func (l *Ledger) Void(ctx context.Context, id string) (h Hold, err error) {
	err = l.store.Update(ctx, func(tx Tx) error {
		h, err = l.VoidTx(ctx, tx, id)
		return err
	})
	return h, err
}

// VoidTx is Void inside the caller's transaction.
func (l *Ledger) VoidTx(ctx context.Context, tx Tx, id string) (Hold, error) {
	if err := checkID("hold id", id, MaxIDBytes); err != nil {
		return Hold{}, err
	}
	h, err := tx.LockHold(ctx, id)
	if err != nil {
		return Hold{}, err
	}
	if h.State == Voided {
		return h, nil
	}
	if h.State != Held {
		return h, closedError(h, "void")
	}
	return l.close(ctx, tx, h, Voided, 0)
}

func (l *Ledger) close(ctx context.Context, tx Tx, h Hold, to HoldState, actual Amount) (Hold, error) {
	if err := tx.MoveHeld(ctx, h.Account, h.Amount, actual); err != nil {
		return Hold{}, err
	}
	h.State, h.Settled, h.Updated = to, actual, l.now()
	return h, tx.UpdateHold(ctx, h)
}

func closedError(h Hold, verb string) error {
	if h.State == Settled {
		return fmt.Errorf("%w: cannot %s hold %q: it was settled at %d", ErrHoldClosed, verb, h.ID, h.Settled)
	}
	return fmt.Errorf("%w: cannot %s hold %q: it is %s", ErrHoldClosed, verb, h.ID, h.State)
}

// Imbalance is an account whose counters disagree with its holds.
type Imbalance struct {
	Account           string
	Held, HoldsHeld   Amount
	Spent, HoldsSpent Amount
}

// Verify checks that every account's Held and Spent equal the sums of its
// holds, and returns the accounts where they do not.
func (l *Ledger) Verify(ctx context.Context) (bad []Imbalance, err error) {
	err = l.store.View(ctx, func(tx Tx) error {
		accts, err := tx.Accounts(ctx)
		if err != nil {
			return err
		}
		totals, err := tx.HoldTotals(ctx)
		if err != nil {
			return err
		}
		for _, a := range accts {
			t := totals[a.Name]
			if a.Held != t.Held || a.Spent != t.Settled {
				bad = append(bad, Imbalance{Account: a.Name, Held: a.Held, HoldsHeld: t.Held, Spent: a.Spent, HoldsSpent: t.Settled})
			}
		}
		return nil
	})
	return bad, err
}
