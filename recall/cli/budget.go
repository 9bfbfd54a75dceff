package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall"
)

// budgetCommand is "recall-archive budget": a batch's budget, shown or
// changed on purpose, with the record of its changes.
func budgetCommand(o recall.Options) *command.Command {
	var by string
	return &command.Command{
		Name: "budget", Args: []command.Arg{batchArg, {Name: "AMOUNT", Optional: true, Help: "the most the batch may spend, in dollars, or none"}},
		DB: true, JSON: true,
		Summary: "show or change the most a batch may spend, over all its runs",
		Help: `The budget belongs to the batch: 'run --budget' sets it on a batch without
one, and every later run keeps to it, whatever its flags. Only this command
changes it (AMOUNT "none" takes it away); each change is recorded with its
time, the old and new amounts and who made it, and listed when AMOUNT is
left out. A recording the budget refused was never sent: raise the budget
and run the batch again to send it.`,
		Flags: func(f *pflag.FlagSet) {
			f.StringVar(&by, "by", "", "who changes the budget, for the record (default: the current user)")
		},
		Run: archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
			batch := r.Args[0]
			if len(r.Args) < 2 {
				b, err := a.Budget(ctx, batch)
				if err != nil {
					return err
				}
				m, err := a.Money(ctx, batch)
				return r.Done(map[string]any{"budget": b, "money": m}, err, func(w io.Writer) { printBudget(w, b, m) })
			}
			amount, err := parseBudget(r.Args[1], "AMOUNT", true)
			if err != nil {
				return err
			}
			if by == "" {
				by = r.User()
			}
			c, err := a.SetBudget(ctx, batch, amount, by, "budget")
			return r.Done(c, err, func(w io.Writer) {
				if !c.Changed() {
					fmt.Fprintf(w, "batch %s: the budget stays %s\n", batch, dollars(c.New))
					return
				}
				fmt.Fprintf(w, "batch %s: budget changed from %s to %s\n", batch, dollars(c.Old), dollars(c.New))
			})
		}),
	}
}

// parseBudget reads a budget in dollars ("5", "12.50", "$0.02"); with
// none, "none" is no budget (0).
func parseBudget(s, what string, none bool) (ledger.Amount, error) {
	if none && strings.EqualFold(s, "none") {
		return 0, nil
	}
	b, err := ledger.ParseDecimal(strings.TrimPrefix(s, "$"), 6)
	if err != nil || b <= 0 {
		also := ""
		if none {
			also = ", or none to take the budget away"
		}
		return 0, command.Usagef("%s %q: give dollars, such as 5 or 12.50%s", what, s, also)
	}
	return b, nil
}

// dollars writes a budget: "$5.000000", or "none".
func dollars(a ledger.Amount) string {
	if a == 0 {
		return "none"
	}
	return "$" + a.Decimal(6)
}

func printBudget(w io.Writer, b recall.Budget, m recall.Money) {
	fmt.Fprintf(w, "batch %s: budget %s; spent $%s, held $%s\n", b.Batch, dollars(b.Budget), m.Spent.Decimal(6), m.Held.Decimal(6))
	if len(b.Changes) == 0 {
		return
	}
	fmt.Fprintf(w, "changes (%d):\n", len(b.Changes))
	for _, c := range b.Changes {
		fmt.Fprintf(w, "  %s  %s -> %s  by %s (%s)\n", c.At.UTC().Format("2006-01-02 15:04:05Z"), dollars(c.Old), dollars(c.New), c.By, c.How)
	}
}
