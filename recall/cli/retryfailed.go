package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/recall"
)

// retryFailedCommand is "recall-archive retry-failed": what is proven
// unpaid, queued again.
func retryFailedCommand(o recall.Options) *command.Command {
	var safeOnly bool
	return &command.Command{Name: "retry-failed", Args: []command.Arg{batchArg}, Synopsis: "BATCH --safe-only [flags]", DB: true, JSON: true,
		Summary: "queue again every failure known to be before payment",
		Flags: func(f *pflag.FlagSet) {
			f.BoolVar(&safeOnly, "safe-only", false, "required: retry only failures known to be before payment")
		},
		Check: func(*command.Run) error {
			if !safeOnly {
				return command.Usagef("say --safe-only: only failures known to be before payment are ever retried; ambiguous requests are resolved with 'recall-archive resolve'")
			}
			return nil
		},
		Run: archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
			rep, err := a.RetryFailed(ctx, r.Args[0])
			return r.Done(rep, err, func(w io.Writer) { printRetried(w, rep) })
		})}
}

func printRetried(w io.Writer, rep recall.RetryReport) {
	fmt.Fprintf(w, "batch %s: %d files and %d requests queued again; run the batch to send them\n", rep.Batch, rep.Items, rep.Requests)
	if len(rep.Left) > 0 {
		fmt.Fprintf(w, "left alone (%d):\n", len(rep.Left))
		for _, l := range rep.Left {
			fmt.Fprintf(w, "  %s (%s): %s\n", l.Key, l.State, l.Why)
		}
	}
}
