package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/recall"
)

// removeCommand is "recall-archive remove": files taken out of a batch,
// or all of a batch's, with the money it paid kept.
func removeCommand(o recall.Options) *command.Command {
	var batch string
	files := command.Arg{Name: "FILE", Help: "the path of a file as it was added", Optional: true, Many: true, Files: true}
	return &command.Command{Name: "remove", Args: []command.Arg{files}, Synopsis: "--batch BATCH [FILE...] [flags]", DB: true, JSON: true,
		Summary: "remove files from a batch, or all of its files; what was paid stays in the ledger",
		Help: `With FILEs, removes them from the batch; without, every file of the batch.
The recordings' transcripts stay (another batch may hold the same
recording, and adding a file again finds its transcript and pays nothing),
and so do the batch, its budget and all it paid: the ledger keeps every
payment. A file whose recording has an ambiguous request, or one being
sent, is kept until it is resolved or its run is over.`,
		FlagValues: map[string]func(context.Context, *command.Run) ([]string, error){"batch": completeBatches},
		Flags: func(f *pflag.FlagSet) {
			f.StringVar(&batch, "batch", "", "the `BATCH` to remove files from (required)")
		},
		Check: func(*command.Run) error {
			if batch == "" {
				return command.Usagef("give --batch BATCH: the batch to remove files from")
			}
			return nil
		},
		Run: archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
			rep, err := a.Remove(ctx, batch, r.Args)
			return r.Done(rep, err, func(w io.Writer) { printRemoved(w, rep, len(r.Args) == 0) })
		})}
}

func printRemoved(w io.Writer, rep recall.RemoveReport, all bool) {
	for _, p := range rep.Removed {
		fmt.Fprintf(w, "removed %q\n", p)
	}
	what := output.Plural(len(rep.Removed), "file")
	if all {
		what = "all its files (" + what + ")"
	}
	fmt.Fprintf(w, "batch %s: removed %s; what it paid stays in the ledger: $%s spent", rep.Batch, what, rep.Spent.Decimal(6))
	if rep.PlaySpent > 0 {
		fmt.Fprintf(w, " (and $%s of the sandbox's play money)", rep.PlaySpent.Decimal(6))
	}
	fmt.Fprintln(w, "; the transcripts stay, and adding a file again pays nothing for them")
}
