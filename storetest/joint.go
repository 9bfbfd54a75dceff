package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
)

// jointCases are the cases of a hold and a transition in one transaction
// (Harness.Update).
func jointCases() []testCase {
	return []testCase{
		{name: "ClosedHoldIsNotHeldAgain", needs: needsUpdate, run: closedHoldIsNotHeldAgain},
		{name: "HoldAndSendCommitTogether", needs: needsUpdate, run: holdAndSendCommitTogether},
	}
}

// closedHoldIsNotHeldAgain: a hold settled or released, also inside a joint
// transaction, is not taken again by a second hold of its id.
func closedHoldIsNotHeldAgain(t *testing.T, h Harness) {
	// The trap: an operation that failed safely is retried under
	// the ID of the attempt before, whose hold was voided. Holding
	// it must not pass for a hold.
	e := open(t, h)
	e.l.Open(e.ctx, "acct", "micro-USD", 100)
	e.insert(t, "op")
	e.claim(t, "op", "w1")
	var first journal.Operation
	err := e.update(func(tx Tx) (err error) {
		if first, err = e.j.SendTx(e.ctx, tx, "op", "w1"); err != nil {
			return err
		}
		_, err = e.l.HoldTx(e.ctx, tx, ledger.HoldRequest{ID: ledger.AttemptHoldID("op", first.Attempts), Account: "acct", Amount: 60, Operation: "op"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = e.update(func(tx Tx) error {
		if _, err := e.j.RecordTx(e.ctx, tx, "op", journal.Report{Worker: "w1", To: journal.FailedSafe, Phase: "not_sent"}); err != nil {
			return err
		}
		_, err := e.l.VoidTx(e.ctx, tx, ledger.AttemptHoldID("op", first.Attempts))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.j.RetrySafe(e.ctx, journal.Scope{Keys: []string{"op"}}); err != nil {
		t.Fatal(err)
	}
	e.claim(t, "op", "w1")

	_, err = e.l.Hold(e.ctx, ledger.HoldRequest{ID: ledger.AttemptHoldID("op", first.Attempts), Account: "acct", Amount: 60, Operation: "op"})
	if !errors.Is(err, ledger.ErrHoldClosed) || !strings.Contains(err.Error(), "AttemptHoldID") {
		t.Fatalf("holding a voided hold's ID again: %v; want ErrHoldClosed saying what to do", err)
	}
	var second journal.Operation
	err = e.update(func(tx Tx) (err error) {
		if second, err = e.j.SendTx(e.ctx, tx, "op", "w1"); err != nil {
			return err
		}
		_, err = e.l.HoldTx(e.ctx, tx, ledger.HoldRequest{ID: ledger.AttemptHoldID("op", second.Attempts), Account: "acct", Amount: 60, Operation: "op"})
		return err
	})
	if err != nil || second.Attempts == first.Attempts {
		t.Fatalf("the second attempt's hold: %v (attempt %d after %d)", err, second.Attempts, first.Attempts)
	}
	if acct, _ := e.l.Account(e.ctx, "acct"); acct.Held != 60 {
		t.Fatalf("held %d before the second request, want 60", acct.Held)
	}
}

// holdAndSendCommitTogether: a hold and the sending transition made in one
// transaction both happen, or neither does.
func holdAndSendCommitTogether(t *testing.T, h Harness) {
	e := open(t, h)
	e.l.Open(e.ctx, "acct", "micro-USD", 100)
	e.insert(t, "op")
	e.claim(t, "op", "w1")

	// A send that fails (wrong worker) takes the hold with it.
	err := e.update(func(tx Tx) error {
		if _, err := e.l.HoldTx(e.ctx, tx, ledger.HoldRequest{ID: "op", Account: "acct", Amount: 60, Operation: "op"}); err != nil {
			return err
		}
		_, err := e.j.SendTx(e.ctx, tx, "op", "intruder")
		return err
	})
	if !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("send by the wrong worker: %v", err)
	}
	if acct, _ := e.l.Account(e.ctx, "acct"); acct.Held != 0 {
		t.Fatalf("the hold survived the rolled-back send: %+v", acct)
	}

	err = e.update(func(tx Tx) error {
		if _, err := e.l.HoldTx(e.ctx, tx, ledger.HoldRequest{ID: "op", Account: "acct", Amount: 60, Operation: "op"}); err != nil {
			return err
		}
		_, err := e.j.SendTx(e.ctx, tx, "op", "w1")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	op, _ := e.j.Get(e.ctx, "op")
	acct, _ := e.l.Account(e.ctx, "acct")
	if op.State != journal.Sending || acct.Held != 60 {
		t.Fatalf("after the joint commit: %s, held %d", op.State, acct.Held)
	}
	// Outcome and settlement, together too.
	err = e.update(func(tx Tx) error {
		if _, err := e.j.RecordTx(e.ctx, tx, "op", journal.Report{Worker: "w1", To: journal.Applied}); err != nil {
			return err
		}
		_, err := e.l.SettleTx(e.ctx, tx, "op", 55)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	acct, _ = e.l.Account(e.ctx, "acct")
	if acct.Held != 0 || acct.Spent != 55 {
		t.Fatalf("after settling: %+v", acct)
	}
}
