package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/recall"
)

// statusCommand is "recall-archive status": a batch's files, progress
// and money.
func statusCommand(o recall.Options) *command.Command {
	var pf providerFlags
	return &command.Command{Name: "status", Args: []command.Arg{batchArg}, DB: true, JSON: true, Summary: "items per state; money estimated, held and spent",
		Help:  "Exits 3 when some requests are ambiguous (they may have been paid for), with --json too.",
		Flags: pf.register, Run: pf.priced(o, func(ctx context.Context, r *command.Run, a *recall.Archive, pricing recall.Pricing) error {
			st, err := a.Status(ctx, r.Args[0])
			if err != nil {
				return err
			}
			est, err := a.Estimate(ctx, r.Args[0], pricing)
			if err := r.Done(map[string]any{"status": st, "estimate": est}, err, func(w io.Writer) { printStatus(w, st, est, &pf) }); err != nil {
				return err
			}
			if st.Transcription["ambiguous"] > 0 {
				return command.Exit(ExitAmbiguous)
			}
			return nil
		})}
}

func printStatus(w io.Writer, st recall.Status, est recall.Estimate, pf *providerFlags) {
	fmt.Fprintf(w, "batch %s\n  files:   ", st.Batch)
	for i, s := range slices.Sorted(maps.Keys(st.Items)) {
		if i > 0 {
			fmt.Fprint(w, ", ")
		}
		fmt.Fprintf(w, "%d %s", st.Items[s], s)
	}
	fmt.Fprintf(w, "\n  content: %d distinct, %s of audio, %s\n", st.Contents, st.Duration.Round(time.Second), output.Bytes(st.Bytes))
	fmt.Fprintf(w, "  transcription: %d done, %d ambiguous, %d failed, %d refused by budget, %d waiting",
		st.Transcription["done"], st.Transcription["ambiguous"], st.Transcription["failed"], st.Transcription["refused_by_budget"],
		st.Transcription["waiting"])
	if n := st.Transcription["sending"]; n > 0 {
		fmt.Fprintf(w, ", %d in flight (a run's, or a killed run's until its lease ends)", n)
	}
	fmt.Fprintln(w)
	if len(st.Languages) > 0 {
		fmt.Fprint(w, "  languages:")
		for i, lang := range slices.Sorted(maps.Keys(st.Languages)) {
			sep := " "
			if i > 0 {
				sep = ", "
			}
			fmt.Fprintf(w, "%s%s %d", sep, lang, st.Languages[lang])
		}
		fmt.Fprintln(w, " (recordings transcribed in each, as detected or asked)")
	}
	m := st.Money
	budget := "budget " + dollars(m.Budget)
	fmt.Fprintf(w, "  money: %s; estimated $%s in all, $%s still to spend (%s/%s); spent $%s; held $%s, of which $%s by ambiguous requests\n",
		budget, est.Cost.Decimal(6), est.RemainingCost.Decimal(6), pf.name, pf.model, m.Spent.Decimal(6), m.Held.Decimal(6), m.HeldAmbiguous.Decimal(6))
	printProviders(w, m)
	printProblems(w, st.Problems)
}
