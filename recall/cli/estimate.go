package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/recall"
)

// estimateCommand is "recall-archive estimate": what the batch will cost.
func estimateCommand(o recall.Options) *command.Command {
	var pf providerFlags
	return &command.Command{Name: "estimate", Args: []command.Arg{batchArg}, DB: true, JSON: true, Summary: "total duration and cost at the provider's price",
		Flags: pf.register, Run: pf.priced(o, func(ctx context.Context, r *command.Run, a *recall.Archive, pricing recall.Pricing) error {
			est, err := a.Estimate(ctx, r.Args[0], pricing)
			return r.Done(est, err, func(w io.Writer) {
				fmt.Fprintf(w, "batch %s: %s, %s of audio, $%s at $%s a minute (%s/%s)\nnot yet transcribed by %s/%s: %s, %s, $%s\n",
					est.Batch, output.Plural(est.Contents, "recording"), est.Duration.Round(time.Second), est.Cost.Decimal(6), pricing.PerMinute.Decimal(6), pf.name, pf.model,
					pf.name, pf.model, output.Plural(est.RemainingContents, "recording"), est.Remaining.Round(time.Second), est.RemainingCost.Decimal(6))
			})
		})}
}
