package ledger

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/rubicon-go/rubicon/internal/input"
)

// Limits on what the ledger stores, the same whatever the store: names and
// ids are valid UTF-8 without NUL, within these sizes. Input that breaks
// them is refused, before a store sees it, with an error wrapping
// [ErrInvalid].
const (
	// MaxNameBytes bounds an account's name.
	MaxNameBytes = 256
	// MaxUnitBytes bounds an account's unit.
	MaxUnitBytes = 64
	// MaxIDBytes bounds a hold's id and the operation key it names.
	MaxIDBytes = 1024
)

// MaxAmount is the largest amount an account can count. Held and Spent
// together stay at most MaxAmount: a hold or a settlement that would pass
// it is refused with [ErrOverflow] before anything is written.
const MaxAmount Amount = math.MaxInt64

var (
	// ErrInvalid is wrapped by the errors that refuse input breaking the
	// ledger's limits.
	ErrInvalid = errors.New("invalid input to the ledger")
	// ErrOverflow is wrapped by the errors that refuse an amount an account
	// could not count.
	ErrOverflow = errors.New("the amount is too large for the ledger")
)

func invalid(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalid, err)
}

func checkID(what, id string, max int) error {
	if strings.TrimSpace(id) == "" {
		return invalid(fmt.Errorf("%s is empty: give one", what))
	}
	return invalid(input.Text(what, id, max))
}

func checkHoldFilter(f HoldFilter) error {
	if err := input.Text("account name", f.Account, MaxNameBytes); err != nil {
		return invalid(err)
	}
	if err := input.Text("operation key", f.Operation, MaxIDBytes); err != nil {
		return invalid(err)
	}
	for _, s := range f.States {
		if s != Held && s != Settled && s != Voided {
			return invalid(fmt.Errorf("filter state %q is not a hold's state: use %s, %s or %s", s, Held, Settled, Voided))
		}
	}
	return nil
}

// OverflowError reports a settlement that would take an account's counters
// past [MaxAmount].
type OverflowError struct {
	Account string
	Hold    string
	Amount  Amount
	// Held and Spent are the account's counters as they stand.
	Held, Spent Amount
}

// Error names the account, the hold and the amounts.
func (e *OverflowError) Error() string {
	return fmt.Sprintf("settling hold %q at %d would take account %q (held %d, spent %d) past the largest amount it can count (%d): check the amount",
		e.Hold, e.Amount, e.Account, e.Held, e.Spent, MaxAmount)
}

// Is makes errors.Is(err, ErrOverflow) true.
func (e *OverflowError) Is(target error) bool { return target == ErrOverflow }

// fits reports whether an account with held and spent can have released
// taken off held and added added to spent, keeping held + spent at most
// MaxAmount. Every value is at least 0 and released is at most held.
func fits(held, spent, released, added Amount) bool {
	// MaxAmount - held - spent cannot overflow while held + spent stays at
	// most MaxAmount, which every change keeps.
	room := MaxAmount - held - spent + released
	return added <= room
}
