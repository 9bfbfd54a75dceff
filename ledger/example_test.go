package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// Money is held before each paid request and settled or voided after it; a
// request that does not fit the budget is refused before it is sent.
func Example() {
	dir, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, filepath.Join(dir, "rubicon.db"), sqlstore.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	l := ledger.New(db.LedgerStore(), nil)

	budget, _ := ledger.ParseDecimal("1.00", 6) // one dollar in micro-dollars
	l.Open(ctx, "batch-1", "micro-USD", budget)

	l.Hold(ctx, ledger.HoldRequest{ID: "chunk-1", Account: "batch-1", Amount: 600_000})
	_, err = l.Hold(ctx, ledger.HoldRequest{ID: "chunk-2", Account: "batch-1", Amount: 600_000})
	fmt.Println("second hold refused:", errors.Is(err, ledger.ErrInsufficientFunds))

	l.Settle(ctx, "chunk-1", 540_000) // the provider charged less than estimated
	acct, _ := l.Account(ctx, "batch-1")
	fmt.Println("spent", acct.Spent.Decimal(6), "held", acct.Held.Decimal(6), "available", acct.Available().Decimal(6))
	// Output:
	// second hold refused: true
	// spent 0.540000 held 0.000000 available 0.460000
}

// Each attempt of a paid request has its own hold, named by the attempt
// that the journal's sending transition counts, in the same transaction.
// A request that provably never left releases its hold; the safe retry
// holds again under the next attempt's ID, so the charge it makes is held
// for and settled.
func ExampleAttemptHoldID() {
	dir, _ := os.MkdirTemp("", "ledger-attempts")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, filepath.Join(dir, "rubicon.db"), sqlstore.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	j := journal.New(db.JournalStore(), journal.Options{})
	l := ledger.New(db.LedgerStore(), nil)
	l.Open(ctx, "batch-1", "micro-USD", 1_000_000)
	j.Insert(ctx, journal.NewOperation{Key: "chunk-1", Kind: "transcribe"})

	// send commits the sending transition and the attempt's hold together.
	send := func() (hold string) {
		j.ClaimKey(ctx, "chunk-1", "worker-1")
		err := db.Update(ctx, func(tx *sqlstore.Tx) error {
			op, err := j.SendTx(ctx, tx, "chunk-1", "worker-1")
			if err != nil {
				return err
			}
			hold = ledger.AttemptHoldID(op.Key, op.Attempts)
			_, err = l.HoldTx(ctx, tx, ledger.HoldRequest{ID: hold, Account: "batch-1", Amount: 4_300, Operation: op.Key})
			return err
		})
		if err != nil {
			panic(err)
		}
		return hold
	}

	first := send()
	// The connection was refused: nothing left, nothing was charged.
	j.Record(ctx, "chunk-1", journal.Report{Worker: "worker-1", To: journal.FailedSafe, Phase: "not_sent"})
	l.Void(ctx, first)
	j.RetrySafe(ctx, journal.Scope{Keys: []string{"chunk-1"}})

	_, err = l.Hold(ctx, ledger.HoldRequest{ID: first, Account: "batch-1", Amount: 4_300, Operation: "chunk-1"})
	fmt.Println("the first attempt's hold again:", errors.Is(err, ledger.ErrHoldClosed))

	second := send()
	j.Record(ctx, "chunk-1", journal.Report{Worker: "worker-1", To: journal.Applied})
	l.Settle(ctx, second, 4_100)
	acct, _ := l.Account(ctx, "batch-1")
	fmt.Println(first, "then", second, "- spent", acct.Spent.Decimal(6), "held", acct.Held.Decimal(6))
	// Output:
	// the first attempt's hold again: true
	// chunk-1#1 then chunk-1#2 - spent 0.004100 held 0.000000
}
