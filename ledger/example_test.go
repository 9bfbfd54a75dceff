package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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
