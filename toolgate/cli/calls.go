package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/toolgate"
)

// callsCommand is "toolgate calls": the journaled calls a person may
// have to settle.
func callsCommand() *command.Command {
	var all bool
	return &command.Command{
		Name: "calls", Synopsis: "[--db DSN] [--all] [--json]", DB: true, JSON: true,
		Summary: "the tool calls whose outcome is unknown (--all: every recorded call)",
		Flags: func(f *pflag.FlagSet) {
			f.BoolVar(&all, "all", false, "every recorded call, not only those whose outcome is unknown")
		},
		Run: func(ctx context.Context, r *command.Run) error {
			db, err := openDB(ctx, r)
			if err != nil {
				return err
			}
			defer db.Close()
			f := journal.Filter{Kind: toolgate.JournalKind}
			if !all {
				f.States = []journal.State{journal.Ambiguous}
			}
			ops, err := journal.New(db.JournalStore(), journal.Options{}).List(ctx, f)
			if err != nil {
				return err
			}
			r.Show(output.FromOperations(ops, "arguments"), func(w io.Writer) { printCalls(w, ops) })
			return nil
		},
	}
}

func printCalls(w io.Writer, ops []journal.Operation) {
	if len(ops) == 0 {
		fmt.Fprintln(w, "no calls with an unknown outcome")
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSTATE\tCALL\tARGUMENTS\tWHEN\tWHY")
	for _, op := range ops {
		args := fmt.Sprint(op.Evidence["arguments"])
		if len(args) > 60 {
			args = args[:57] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%v %v\t%s\t%s\t%s\n", op.Key, op.State, op.Evidence["method"], op.Evidence["path"], args,
			op.Created.Local().Format(time.DateTime), op.LastError)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nCheck the upstream, then settle each call with what you found:\n  toolgate resolve KEY --applied --note \"what you checked\"\n  toolgate resolve KEY --not-applied --note \"what you checked\"")
}
