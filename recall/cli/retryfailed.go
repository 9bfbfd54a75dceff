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

// retryFailedCommand is "recall-archive retry-failed": what is proven
// unpaid, queued again and run.
func retryFailedCommand(o recall.Options) *command.Command {
	var safeOnly, queueOnly bool
	var rf runFlags
	return &command.Command{Name: "retry-failed", Args: []command.Arg{batchArg}, Synopsis: "BATCH --safe-only [--queue-only] [flags]", DB: true, JSON: true,
		Summary: "run again every failure known to be before payment",
		Help: `Queues again the files whose probing, reading or audio proxy failed, and the
requests that were never sent or that the provider refused without charging,
then runs the batch with run's flags, as 'recall-archive run' does. Ambiguous
requests are never retried: they are listed, for 'recall-archive resolve'.
Recordings the budget refused are not failures: raise the budget
('recall-archive budget') and run the batch. With --queue-only, the failures
are queued and nothing is sent; the next run sends them.`,
		Flags: func(f *pflag.FlagSet) {
			f.BoolVar(&safeOnly, "safe-only", false, "required: retry only failures known to be before payment")
			f.BoolVar(&queueOnly, "queue-only", false, "queue the failures again without running the batch")
			rf.register(f)
		},
		Check: func(*command.Run) error {
			if !safeOnly {
				return command.Usagef("say --safe-only: only failures known to be before payment are ever retried; ambiguous requests are resolved with 'recall-archive resolve'")
			}
			return nil
		},
		Run: func(ctx context.Context, r *command.Run) error {
			if queueOnly {
				return archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
					rep, err := a.RetryFailed(ctx, r.Args[0])
					return r.Done(rep, err, func(w io.Writer) { printRetried(w, rep, true) })
				})(ctx, r)
			}
			return run(ctx, r, o, &rf, func(ctx context.Context, a *recall.Archive) (any, func(io.Writer), error) {
				rep, err := a.RetryFailed(ctx, r.Args[0])
				return rep, func(w io.Writer) { printRetried(w, rep, false) }, err
			})
		}}
}

func printRetried(w io.Writer, rep recall.RetryReport, queueOnly bool) {
	then := "sending them now"
	if queueOnly {
		then = "run the batch to send them"
	}
	fmt.Fprintf(w, "batch %s: %s and %s queued again; %s\n", rep.Batch, output.Plural(rep.Items, "file"), output.Plural(rep.Requests, "request"), then)
	if len(rep.Left) > 0 {
		fmt.Fprintf(w, "left alone (%d):\n", len(rep.Left))
		for _, l := range rep.Left {
			fmt.Fprintf(w, "  %s (%s): %s\n", l.Key, l.State, l.Why)
		}
	}
}
