package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
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
		Help: `On a terminal, a bar shows the recordings done out of the batch's (those
done by earlier runs included), each recording being worked on and its
stage (converting, sending, waiting for an answer), the money spent and held
against the budget, and an estimate of the time left. Elsewhere, standard
error gets a line per step: the file, its stage, the chunk and the money.
With --json, standard error says nothing but the interruption.

The first Ctrl-C (or SIGTERM) is acknowledged at once: no new recording or
chunk starts, ffmpeg stops, and the requests in flight finish, each within
--timeout; running the batch again resumes it. A second Ctrl-C ends the run
at once: its requests in flight become ambiguous once --lease runs out, and
are never sent again. An interrupted run that leaves recordings waiting
exits 130, unless some are ambiguous (3).`,
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
		disp, err := runDisplay(ctx, r, a, batch, price)
		if err != nil {
			return err
		}
		stopDisplay := func() {}
		if disp != nil && !r.JSON {
			opts.Progress = disp.step
			stopDisplay = disp.start()
		}
		// The first Ctrl-C is acknowledged at once, with what the run
		// still waits for.
		finished := make(chan struct{})
		acknowledged := make(chan struct{})
		go func() {
			defer close(acknowledged)
			select {
			case <-ctx.Done():
				if disp != nil {
					disp.interrupt(rf.timeout, rf.lease)
				}
			case <-finished:
			}
		}()
		rep, err := a.Run(ctx, batch, opts)
		close(finished)
		<-acknowledged
		stopDisplay()
		if err != nil {
			return err
		}
		money, _ := a.Money(context.WithoutCancel(ctx), batch)
		interrupted := ctx.Err() != nil
		r.Show(map[string]any{"run": rep, "money": money, "interrupted": interrupted}, func(w io.Writer) { printRun(w, rep, money, interrupted) })
		switch {
		case rep.Ambiguous > 0:
			return command.Exit(ExitAmbiguous)
		case interrupted && rep.Waiting > 0:
			return command.Exit(command.ExitInterrupted)
		case rep.Failed > 0 || len(rep.Problems) > 0:
			return command.Exit(ExitItemProblems)
		}
		return nil
	})(ctx, r)
}

// runDisplay returns the display of a run of batch, or nil if the batch
// does not exist (the run says so).
func runDisplay(ctx context.Context, r *command.Run, a *recall.Archive, batch string, price ledger.Amount) (*display, error) {
	st, err := a.Status(ctx, batch)
	if errors.Is(err, recall.ErrNoBatch) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	est, err := a.Estimate(ctx, batch, price)
	if err != nil {
		return nil, err
	}
	money := func() (recall.Money, error) { return a.Money(context.WithoutCancel(ctx), batch) }
	return newDisplay(r.Stderr, st.Contents, st.Transcription["done"], est.Remaining, money), nil
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
