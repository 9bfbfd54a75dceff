package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/recall"
)

// estimateCommand is "recall-archive estimate": what the batch will cost.
func estimateCommand(o recall.Options) *command.Command {
	var pf providerFlags
	return &command.Command{Name: "estimate", Args: []command.Arg{batchArg}, DB: true, JSON: true, Summary: "total duration and cost at the provider's price, with the options asked for",
		Flags: func(f *pflag.FlagSet) { pf.register(f); pf.registerSpeakers(f) },
		Run: pf.priced(o, func(ctx context.Context, r *command.Run, a *recall.Archive, pricing recall.Pricing) error {
			est, err := a.Estimate(ctx, r.Args[0], pricing)
			return r.Done(est, err, func(w io.Writer) {
				fmt.Fprintf(w, "batch %s: %s, %s of audio, $%s at $%s a minute (%s)\n",
					est.Batch, output.Plural(est.Contents, "recording"), est.Duration.Round(time.Second), est.Cost.Decimal(6), pricing.PerMinute.Decimal(6), est.Transcriber)
				printOptions(w, est, false)
				fmt.Fprintf(w, "not yet transcribed by %s: %s, %s, $%s\n",
					est.Transcriber, output.Plural(est.RemainingContents, "recording"), est.Remaining.Round(time.Second), est.RemainingCost.Decimal(6))
				if est.OtherSettings > 0 {
					fmt.Fprintf(w, "  of which %s transcribed with other settings: a run leaves them, 'recall-archive retranscribe' pays for them\n", output.Plural(est.OtherSettings, "recording"))
				}
			})
		})}
}

// printOptions writes what each option the estimate prices adds to it,
// in all or, with remaining, to what is not yet transcribed.
func printOptions(w io.Writer, est recall.Estimate, remaining bool) {
	for _, o := range est.Options {
		cost := o.Cost
		if remaining {
			cost = o.RemainingCost
		}
		fmt.Fprintf(w, "  of which %s: $%s, at $%s a minute on top\n", o.Option, cost.Decimal(6), o.PerMinute.Decimal(6))
	}
}
