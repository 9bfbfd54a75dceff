package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/ledger"
)

// ledgerCases are the cases of the ledger: holds, their limit under
// concurrency, and listing them by filter.
func ledgerCases() []testCase {
	return []testCase{
		{name: "LedgerHolds", run: ledgerHolds},
		{name: "HoldsByAccountOperationAndState", run: holdsByFilter},
		{name: "ConcurrentHoldsNeverExceedTheLimit", run: concurrentHoldsNeverExceedTheLimit},
	}
}

// ledgerHolds: holds are idempotent per id, refused past the limit, on an
// unknown account or for another amount under the same id, and settle or
// release into a balanced account.
func ledgerHolds(t *testing.T, h Harness) {
	e := open(t, h)
	if _, err := e.l.Open(e.ctx, "batch-1", "micro-USD", 1_000_000); err != nil {
		t.Fatal(err)
	}
	hold, err := e.l.Hold(e.ctx, ledger.HoldRequest{ID: "h1", Account: "batch-1", Amount: 600_000, Operation: "op-1"})
	if err != nil || hold.State != ledger.Held {
		t.Fatalf("hold: %+v, %v", hold, err)
	}
	again, err := e.l.Hold(e.ctx, ledger.HoldRequest{ID: "h1", Account: "batch-1", Amount: 600_000})
	if err != nil || again.ID != "h1" {
		t.Fatalf("holding the same id again: %v", err)
	}
	if _, err := e.l.Hold(e.ctx, ledger.HoldRequest{ID: "h1", Account: "batch-1", Amount: 1}); !errors.Is(err, ledger.ErrHoldConflict) {
		t.Fatalf("reusing a hold id for another amount: %v", err)
	}
	_, err = e.l.Hold(e.ctx, ledger.HoldRequest{ID: "h2", Account: "batch-1", Amount: 500_000})
	var ie *ledger.InsufficientError
	if !errors.As(err, &ie) || ie.Available != 400_000 {
		t.Fatalf("a hold past the limit: %v, want refused with 400000 available", err)
	}
	if _, err := e.l.Hold(e.ctx, ledger.HoldRequest{ID: "h3", Account: "nope", Amount: 1}); !errors.Is(err, ledger.ErrNoAccount) {
		t.Fatalf("a hold on an unknown account: %v", err)
	}
	if _, err := e.l.Hold(e.ctx, ledger.HoldRequest{ID: "h4", Account: "batch-1", Amount: 400_000}); err != nil {
		t.Fatalf("a hold that fits exactly: %v", err)
	}
	if _, err := e.l.Settle(e.ctx, "h1", 650_000); err != nil { // actual above the estimate
		t.Fatal(err)
	}
	if _, err := e.l.Settle(e.ctx, "h1", 650_000); err != nil {
		t.Fatalf("settling again with the same amount: %v", err)
	}
	if _, err := e.l.Settle(e.ctx, "h1", 1); !errors.Is(err, ledger.ErrHoldClosed) {
		t.Fatalf("settling again with another amount: %v", err)
	}
	if _, err := e.l.Void(e.ctx, "h4"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.l.Settle(e.ctx, "h4", 5); !errors.Is(err, ledger.ErrHoldClosed) {
		t.Fatalf("settling a voided hold: %v", err)
	}
	if _, err := e.l.Void(e.ctx, "missing"); !errors.Is(err, ledger.ErrNoHold) {
		t.Fatalf("voiding an unknown hold: %v", err)
	}
	acct, err := e.l.Account(e.ctx, "batch-1")
	if err != nil || acct.Held != 0 || acct.Spent != 650_000 || acct.Available() != 350_000 {
		t.Fatalf("account: %+v, %v", acct, err)
	}
	if bad, err := e.l.Verify(e.ctx); err != nil || len(bad) != 0 {
		t.Fatalf("verify: %+v, %v", bad, err)
	}
}

// holdsByFilter: holds are listed by account, by the operation they pay
// for and by state, oldest first, also inside a transaction that made one.
func holdsByFilter(t *testing.T, h Harness) {
	e := open(t, h)
	for _, acct := range []string{"a", "b"} {
		if _, err := e.l.Open(e.ctx, acct, "micro-USD", 1000); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []ledger.HoldRequest{
		{ID: "h1", Account: "a", Amount: 10, Operation: "op-1"},
		{ID: "h2", Account: "a", Amount: 20, Operation: "op-2"},
		{ID: "h3", Account: "b", Amount: 30, Operation: "op-1"},
	} {
		if _, err := e.l.Hold(e.ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.l.Settle(e.ctx, "h1", 9); err != nil {
		t.Fatal(err)
	}
	ids := func(f ledger.HoldFilter) string {
		t.Helper()
		holds, err := e.l.Holds(e.ctx, f)
		if err != nil {
			t.Fatalf("holds %+v: %v", f, err)
		}
		var out []string
		for _, h := range holds {
			out = append(out, fmt.Sprintf("%s:%s:%d", h.ID, h.State, h.Amount))
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		f    ledger.HoldFilter
		want string
	}{
		{ledger.HoldFilter{}, "h1:settled:10,h2:held:20,h3:held:30"},
		{ledger.HoldFilter{Account: "a"}, "h1:settled:10,h2:held:20"},
		{ledger.HoldFilter{Operation: "op-1"}, "h1:settled:10,h3:held:30"},
		{ledger.HoldFilter{Account: "a", States: []ledger.HoldState{ledger.Held}}, "h2:held:20"},
		{ledger.HoldFilter{Operation: "op-1", States: []ledger.HoldState{ledger.Held, ledger.Voided}}, "h3:held:30"},
		{ledger.HoldFilter{Account: "nope"}, ""},
	} {
		if got := ids(c.f); got != c.want {
			t.Errorf("holds %+v: %q, want %q", c.f, got, c.want)
		}
	}
	if _, err := e.l.Holds(e.ctx, ledger.HoldFilter{States: []ledger.HoldState{"spent"}}); !errors.Is(err, ledger.ErrInvalid) {
		t.Errorf("holds in an unknown state: %v; want ErrInvalid", err)
	}
	if h.Update == nil {
		return
	}
	err := e.update(func(tx Tx) error {
		if _, err := e.l.HoldTx(e.ctx, tx, ledger.HoldRequest{ID: "h4", Account: "b", Amount: 40, Operation: "op-1"}); err != nil {
			return err
		}
		holds, err := e.l.HoldsTx(e.ctx, tx, ledger.HoldFilter{Operation: "op-1", States: []ledger.HoldState{ledger.Held}})
		if err != nil {
			return err
		}
		if len(holds) != 2 || holds[1].ID != "h4" {
			return fmt.Errorf("holds of op-1 inside the transaction that made h4: %+v", holds)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// concurrentHoldsNeverExceedTheLimit: holds taken at once never take an
// account past its limit.
func concurrentHoldsNeverExceedTheLimit(t *testing.T, h Harness) {
	e := open(t, h)
	e.l.Open(e.ctx, "shared", "micro-USD", 1_000)
	const goroutines, each = 16, 20
	errs := make(chan error, goroutines*each)
	granted := make(chan struct{}, goroutines*each)
	done := make(chan struct{})
	for g := range goroutines {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range each {
				_, err := e.l.Hold(context.Background(), ledger.HoldRequest{ID: fmt.Sprintf("g%d-%d", g, i), Account: "shared", Amount: 7})
				switch {
				case err == nil:
					granted <- struct{}{}
				case !errors.Is(err, ledger.ErrInsufficientFunds):
					errs <- err
				}
			}
		}()
	}
	for range goroutines {
		<-done
	}
	close(errs)
	for err := range errs {
		t.Fatalf("hold failed other than for the budget: %v", err)
	}
	acct, _ := e.l.Account(e.ctx, "shared")
	if n := len(granted); n != 1000/7 || acct.Held != ledger.Amount(7*n) || acct.Held > acct.Limit {
		t.Fatalf("%d holds granted, %d held of %d: want %d holds, never past the limit", n, acct.Held, acct.Limit, 1000/7)
	}
	if bad, err := e.l.Verify(e.ctx); err != nil || len(bad) != 0 {
		t.Fatalf("verify: %+v, %v", bad, err)
	}
}
