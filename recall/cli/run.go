package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall"
)

// runFlags are run's flags, past the provider's.
type runFlags struct {
	pf             providerFlags
	budget, out    string
	workers        int
	timeout, lease time.Duration
}

// runCommand is "recall-archive run": the batch transcribed, each
// recording paid for at most once.
func runCommand(o recall.Options) *command.Command {
	var rf runFlags
	return &command.Command{
		Name: "run", Args: []command.Arg{batchArg}, DB: true, JSON: true,
		Summary: "transcribe the batch, paying at most once for each recording",
		Help: `Ctrl-C stops taking new chunks and lets requests in flight finish; running
the batch again resumes it. A request in flight when a run is killed becomes
ambiguous once its lease runs out, and is never sent again.`,
		Flags: func(f *pflag.FlagSet) {
			rf.pf.register(f)
			f.StringVar(&rf.budget, "budget", "", "the most the batch may spend, in `DOLLARS` (over all its runs)")
			f.IntVar(&rf.workers, "workers", 4, "transcribe this many recordings at a time")
			command.DurationVar(f, &rf.timeout, "timeout", 10*time.Minute, "bound on each paid request, in seconds or such as 90s or 10m; one that runs out may have been charged")
			f.StringVar(&rf.out, "out", "", "write .txt, .srt, .vtt and .json transcripts to this `DIR`")
			command.DurationVar(f, &rf.lease, "lease", 30*time.Second, "after a run is killed, how long its requests in flight wait before the next run declares them ambiguous")
		},
		Run: func(ctx context.Context, r *command.Run) error { return run(ctx, r, o, &rf) },
	}
}

func run(ctx context.Context, r *command.Run, o recall.Options, rf *runFlags) error {
	if rf.workers < 1 {
		return command.Usagef("--workers must be at least 1")
	}
	var limit ledger.Amount
	if rf.budget != "" {
		b, err := ledger.ParseDecimal(strings.TrimPrefix(rf.budget, "$"), 6)
		if err != nil || b == 0 {
			return command.Usagef("--budget %q: give dollars, such as 5 or 12.50", rf.budget)
		}
		limit = b
	}
	price, err := rf.pf.price(r)
	if err != nil {
		return err
	}
	prov, stop, err := rf.pf.build(r, rf.timeout)
	if err != nil {
		return err
	}
	defer stop()
	opts := recall.RunOptions{Provider: prov, PricePerMinute: price, Budget: limit, Workers: rf.workers, Out: rf.out}
	o.Lease = rf.lease
	return archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
		batch := r.Args[0]
		if !r.JSON && isTerminal(r.Stderr) {
			opts.Progress = progress(ctx, r.Stderr, a, batch, price)
		}
		rep, err := a.Run(ctx, batch, opts)
		if opts.Progress != nil {
			fmt.Fprint(r.Stderr, "\r\033[K")
		}
		if err != nil {
			return err
		}
		money, _ := a.Money(context.WithoutCancel(ctx), batch)
		r.Show(map[string]any{"run": rep, "money": money}, func(w io.Writer) { printRun(w, rep, money, ctx.Err() != nil) })
		switch {
		case rep.Ambiguous > 0:
			return command.Exit(ExitAmbiguous)
		case rep.Failed > 0 || len(rep.Problems) > 0:
			return command.Exit(ExitItemProblems)
		}
		return nil
	})(ctx, r)
}

// progress returns the function that keeps a progress line on w.
func progress(ctx context.Context, w io.Writer, a *recall.Archive, batch string, price ledger.Amount) func(recall.Progress) {
	var done, total atomic.Int64
	est, _ := a.Estimate(ctx, batch, price)
	total.Store(int64(est.Contents))
	return func(p recall.Progress) {
		if p.Chunk == p.Chunks {
			done.Add(1)
		}
		fmt.Fprintf(w, "\r\033[K[%d/%d] %s chunk %d/%d: %s", done.Load(), total.Load(), p.Path[:12], p.Chunk, p.Chunks, p.State)
	}
}

func printRun(w io.Writer, rep recall.RunReport, money recall.Money, interrupted bool) {
	fmt.Fprintf(w, "batch %s: %d requests paid for in this run; %d recordings done, %d ambiguous, %d failed safely, %d waiting\n",
		rep.Batch, rep.Paid, rep.Done, rep.Ambiguous, rep.Failed, rep.Waiting)
	fmt.Fprintf(w, "money: spent $%s, held $%s (of which $%s by ambiguous requests)\n", money.Spent.Decimal(6), money.Held.Decimal(6), money.HeldAmbiguous.Decimal(6))
	printProblems(w, rep.Problems)
	if rep.Ambiguous > 0 {
		fmt.Fprintf(w, "some requests may have been charged without an answer: see 'recall-archive ambiguous %s'\n", rep.Batch)
	}
	if rep.Failed > 0 {
		fmt.Fprintf(w, "failures before payment can be retried: 'recall-archive retry-failed %s --safe-only'\n", rep.Batch)
	}
	if interrupted {
		fmt.Fprintln(w, "interrupted: run again to go on")
	}
}

// isTerminal reports whether w is a terminal, for the progress line.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
