package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/rubicon-go/rubicon/recall"
)

func runAdd(ctx context.Context, cl *cmdline) int {
	workers := cl.fs.Int("workers", 0, "probe and hash this many files at a time (default: one per CPU)")
	if code, ok := cl.parse(2, -1); !ok {
		return code
	}
	a, err := cl.open(ctx)
	if err != nil {
		return cl.fail(err)
	}
	defer a.Close()
	rep, err := a.Add(ctx, cl.args[0], cl.args[1:], recall.AddOptions{Workers: *workers})
	if err != nil {
		return cl.fail(err)
	}
	if cl.json {
		cl.emit(rep)
	} else {
		w := cl.env.Stdout
		fmt.Fprintf(w, "batch %s: %d files added (%d new contents), %d unchanged, %d skipped as not media\n",
			rep.Batch, rep.Added, rep.NewContents, rep.Unchanged, rep.Skipped)
		printProblems(cl, rep.Problems)
	}
	if len(rep.Problems) > 0 {
		return ExitItemProblems
	}
	return ExitOK
}

func runStatus(ctx context.Context, cl *cmdline) int {
	var pf providerFlags
	pf.register(cl)
	if code, ok := cl.parse(1, 1); !ok {
		return code
	}
	price, err := pf.price()
	if err != nil {
		return cl.fail(err)
	}
	a, err := cl.open(ctx)
	if err != nil {
		return cl.fail(err)
	}
	defer a.Close()
	st, err := a.Status(ctx, cl.args[0])
	if err != nil {
		return cl.fail(err)
	}
	est, err := a.Estimate(ctx, cl.args[0], price)
	if err != nil {
		return cl.fail(err)
	}
	if cl.json {
		cl.emit(map[string]any{"status": st, "estimate": est})
		return ExitOK
	}
	w := cl.env.Stdout
	fmt.Fprintf(w, "batch %s\n  files:   ", st.Batch)
	for i, s := range sortedKeys(st.Items) {
		if i > 0 {
			fmt.Fprint(w, ", ")
		}
		fmt.Fprintf(w, "%d %s", st.Items[s], s)
	}
	fmt.Fprintf(w, "\n  content: %d distinct, %s of audio, %s\n", st.Contents, st.Duration.Round(time.Second), humanBytes(st.Bytes))
	fmt.Fprintf(w, "  transcription: %d done, %d ambiguous, %d failed, %d waiting\n",
		st.Transcription["done"], st.Transcription["ambiguous"], st.Transcription["failed"], st.Transcription["waiting"]+st.Transcription["sending"])
	m := st.Money
	budget := "no budget"
	if m.Budget > 0 {
		budget = "budget $" + m.Budget.Decimal(6)
	}
	fmt.Fprintf(w, "  money: %s; estimated $%s in all, $%s still to spend (%s/%s); spent $%s; held $%s, of which $%s by ambiguous requests\n",
		budget, est.Cost.Decimal(6), est.RemainingCost.Decimal(6), pf.name, pf.model, m.Spent.Decimal(6), m.Held.Decimal(6), m.HeldAmbiguous.Decimal(6))
	printProblems(cl, st.Problems)
	return ExitOK
}

func printProblems(cl *cmdline, ps []recall.Problem) {
	if len(ps) == 0 {
		return
	}
	w := cl.env.Stdout
	fmt.Fprintf(w, "problems (%d):\n", len(ps))
	for _, p := range ps {
		fmt.Fprintf(w, "  %-8s %s\n           %s\n", p.State, strconv.Quote(p.Path), p.Error)
	}
}

func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}
