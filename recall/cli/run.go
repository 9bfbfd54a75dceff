package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall"
)

// runFlags are run's flags, past the provider's.
type runFlags struct {
	pf             providerFlags
	subtitles      subtitleFlags
	budget, out    string
	workers        int
	timeout, lease time.Duration
	// again: retranscribe's run, which pays for a new transcript of what
	// another transcriber made (recall.RunOptions.Again).
	again bool
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
exits 130, unless some are ambiguous (3).

A transcript is made with its provider, model and settings (--speakers,
--language, --prompt, --vocabulary). A recording that another provider,
model or settings transcribed is not sent again (but to the sandbox,
whose play money costs nothing): the run names it, and
'recall-archive retranscribe' pays for a new transcript once its cost is
shown (exit 4 until then).`,
		Flags: rf.register,
		Run:   func(ctx context.Context, r *command.Run) error { return run(ctx, r, o, &rf, nil) },
	}
}

// register declares run's flags in f, for run and for the commands that
// run the batch after their own work (retry-failed).
func (rf *runFlags) register(f *pflag.FlagSet) {
	rf.pf.register(f)
	f.StringVar(&rf.budget, "budget", "", "the most the batch may spend, in `DOLLARS`, over all its runs: set on a batch without a budget, and kept by every later run ('recall-archive budget' changes it)")
	f.IntVar(&rf.workers, "workers", 4, "transcribe this many recordings at a time")
	command.DurationVar(f, &rf.timeout, "timeout", 10*time.Minute, "bound on each paid request, counted from its commit as sent, in seconds or such as 90s or 10m; one that runs out may have been charged")
	f.StringVar(&rf.out, "out", "", "write .txt, .srt, .vtt and .json transcripts to this `DIR`")
	rf.subtitles.register(f)
	rf.pf.registerSpeakers(f)
	command.DurationVar(f, &rf.lease, "lease", 0, "how long a request that was sent stays with its run: it is over by then, and only then may another run declare it ambiguous once this one was killed, or anyone resolve it as not applied (default: --timeout plus 30s)")
}

// run runs the batch as rf says. before, if not nil, does its command's
// work on the open archive first, and returns what it shows beside the
// run's report: its value for --json, and its text.
func run(ctx context.Context, r *command.Run, o recall.Options, rf *runFlags, before func(context.Context, *recall.Archive) (any, func(io.Writer), error)) error {
	if rf.workers < 1 {
		return command.Usagef("--workers must be at least 1")
	}
	if err := rf.subtitles.check(); err != nil {
		return err
	}
	o.Subtitles = rf.subtitles.rules
	if rf.lease == 0 {
		rf.lease = rf.timeout + recall.LeaseMargin
	}
	if rf.lease-rf.lease/100 < rf.timeout {
		return command.Usagef("--lease %s is shorter than --timeout %s: a request must be over before the lease it is sent under runs out; give a --lease of at least %s, or a shorter --timeout",
			rf.lease, rf.timeout, (rf.timeout*101/100).Round(time.Millisecond)+time.Millisecond)
	}
	var limit ledger.Amount
	if rf.budget != "" {
		b, err := parseBudget(rf.budget, "--budget", false)
		if err != nil {
			return err
		}
		limit = b
	}
	pricing, err := rf.pf.pricing(r)
	if err != nil {
		return err
	}
	prov, stop, err := rf.pf.build(r, rf.timeout)
	if err != nil {
		return err
	}
	defer stop()
	opts := recall.RunOptions{Provider: prov, PricePerMinute: pricing.PerMinute, Billing: pricing.Billing, Options: pricing.Options, Again: rf.again,
		Budget: limit, User: r.User(), Workers: rf.workers, Out: rf.out, CacheDir: cacheDir(r)}
	o.SendLease = rf.lease
	return archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
		batch := r.Args[0]
		var first any
		firstText := func(io.Writer) {}
		if before != nil {
			var err error
			if first, firstText, err = before(ctx, a); err != nil {
				return err
			}
		}
		if b, err := a.Budget(ctx, batch); err == nil && limit > 0 && b.Budget == 0 && !r.JSON {
			fmt.Fprintf(r.Stderr, "batch %s: budget set to $%s; later runs keep it ('recall-archive budget' changes it)\n", batch, limit.Decimal(6))
		}
		disp, err := runDisplay(ctx, r, a, batch, pricing)
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
		shown := map[string]any{"run": rep, "money": money, "interrupted": interrupted}
		if first != nil {
			shown["retry"] = first
		}
		r.Show(shown, func(w io.Writer) {
			firstText(w)
			printRun(w, rep, money, rf.pf.again(), interrupted)
			printOthers(w, rep, rf.pf.chosen())
			printKeyRefused(w, rep, &rf.pf)
		})
		switch {
		case rep.KeyRefused != "":
			return command.Exit(ExitFailure)
		case rep.Ambiguous > 0:
			return command.Exit(ExitAmbiguous)
		case interrupted && rep.Waiting > 0:
			return command.Exit(command.ExitInterrupted)
		case rep.Failed > 0 || rep.Refused > 0 || rep.OtherSettings > 0 || len(rep.Problems) > 0 || len(rep.Earlier) > 0:
			return command.Exit(ExitItemProblems)
		}
		return nil
	})(ctx, r)
}

// runDisplay returns the display of a run of batch, or nil if the batch
// does not exist (the run says so).
func runDisplay(ctx context.Context, r *command.Run, a *recall.Archive, batch string, pricing recall.Pricing) (*display, error) {
	st, err := a.Status(ctx, batch)
	if errors.Is(err, recall.ErrNoBatch) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	est, err := a.Estimate(ctx, batch, pricing)
	if err != nil {
		return nil, err
	}
	money := func() (recall.Money, error) { return a.Money(context.WithoutCancel(ctx), batch) }
	// Done before: with the run's provider, model and settings.
	return newDisplay(r.Stderr, st.Contents, est.Contents-est.RemainingContents, est.Remaining, money), nil
}

// printRun writes the run's report; again holds the flags that choose the
// run's provider, for the commands it suggests.
func printRun(w io.Writer, rep recall.RunReport, money recall.Money, again string, interrupted bool) {
	fmt.Fprintf(w, "batch %s: %s paid for in this run; %s done, %d ambiguous, %d failed safely, %d refused by budget, %d waiting",
		rep.Batch, output.Plural(rep.Paid, "request"), output.Plural(rep.Done, "recording"), rep.Ambiguous, rep.Failed, rep.Refused, rep.Waiting)
	if rep.OtherSettings > 0 {
		fmt.Fprintf(w, ", %d transcribed with other settings", rep.OtherSettings)
	}
	if rep.InFlight > 0 {
		fmt.Fprintf(w, ", %d in flight (another run's, or a killed run's until its lease ends)", rep.InFlight)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "money: spent $%s, held $%s (of which $%s by ambiguous requests); budget %s\n", money.Spent.Decimal(6), money.Held.Decimal(6), money.HeldAmbiguous.Decimal(6), dollars(money.Budget))
	printProviders(w, money)
	printProblems(w, rep.Problems)
	if len(rep.Earlier) > 0 {
		fmt.Fprintf(w, "failed before this run (%d), not sent:\n", len(rep.Earlier))
		for _, p := range rep.Earlier {
			fmt.Fprintf(w, "  %-8s %s\n           %s\n", p.State, strconv.Quote(p.Path), p.Error)
		}
	}
	if len(rep.Notes) > 0 {
		fmt.Fprintf(w, "notes (%d):\n", len(rep.Notes))
		for _, n := range rep.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	printRefusals(w, rep, money)
	if rep.Ambiguous > 0 {
		fmt.Fprintf(w, "some requests may have been charged without an answer: see 'recall-archive ambiguous %s'\n", rep.Batch)
	}
	if rep.Failed > 0 || len(rep.Earlier) > 0 {
		fmt.Fprintf(w, "failures before payment can be retried: 'recall-archive retry-failed %s --safe-only%s'\n", rep.Batch, again)
	}
	if interrupted {
		fmt.Fprintln(w, "interrupted: run again to go on")
	}
}

// printOthers lists the recordings that the run did not send because
// another transcriber made their transcript, and how to pay for one with
// the run's settings; chosen holds the flags that ask for them.
func printOthers(w io.Writer, rep recall.RunReport, chosen string) {
	if len(rep.Others) == 0 {
		return
	}
	fmt.Fprintf(w, "transcribed with other settings (%d), not sent:\n", len(rep.Others))
	for _, o := range rep.Others {
		fmt.Fprintf(w, "  %s by %s\n", strconv.Quote(o.Path), o.By.Described())
	}
	fmt.Fprintf(w, "their transcripts are kept; to pay for new ones with this run's settings, 'recall-archive retranscribe %s%s' shows the cost first\n", rep.Batch, chosen)
}

// printProviders says what each provider was paid, with the sandbox's
// play money apart, when there is more than real money to say.
func printProviders(w io.Writer, m recall.Money) {
	if m.Play.Spent == 0 && m.Play.Held == 0 && len(m.Providers) < 2 {
		return
	}
	var parts []string
	for _, p := range m.Providers {
		if !p.Play {
			parts = append(parts, fmt.Sprintf("%s $%s", p.Provider, p.Spent.Decimal(6)))
		}
	}
	line := "  by provider: " + strings.Join(parts, ", ")
	if len(parts) == 0 {
		line = "  no real money spent"
	}
	if m.Play.Spent > 0 || m.Play.Held > 0 {
		line += fmt.Sprintf("; the sandbox's play money apart, counted in no budget: spent $%s, held $%s (of which $%s by ambiguous requests)",
			m.Play.Spent.Decimal(6), m.Play.Held.Decimal(6), m.Play.HeldAmbiguous.Decimal(6))
	}
	fmt.Fprintln(w, line)
}

// printKeyRefused says, when the provider refused the API key, which
// variable holds it and how to go on.
func printKeyRefused(w io.Writer, rep recall.RunReport, pf *providerFlags) {
	if rep.KeyRefused == "" {
		return
	}
	where := "the API key"
	if pf.keyEnv != "" {
		where = "the API key in $" + pf.keyEnv
	}
	fmt.Fprintf(w, "%s was refused (%s): the run stopped, and nothing more was sent\n", where, rep.KeyRefused)
	fmt.Fprintf(w, "set a valid key (or name another variable with --api-key-env), then 'recall-archive retry-failed %s --safe-only%s' sends the refused request again and the rest\n",
		rep.Batch, pf.again())
}

// printRefusals lists the recordings the budget refused, and the budget
// that would pay for them.
func printRefusals(w io.Writer, rep recall.RunReport, money recall.Money) {
	if len(rep.Refusals) == 0 {
		return
	}
	var needed ledger.Amount
	fmt.Fprintf(w, "refused by budget (%d), never sent:\n", len(rep.Refusals))
	for _, f := range rep.Refusals {
		needed += f.Needed
		fmt.Fprintf(w, "  %s needs $%s, $%s more than the budget had left\n", strconv.Quote(f.Path), f.Needed.Decimal(6), f.Missing.Decimal(6))
	}
	fmt.Fprintf(w, "to send them, raise the budget to at least $%s ('recall-archive budget %s AMOUNT') and run the batch again\n",
		(money.Spent + money.Held + needed).Decimal(6), rep.Batch)
}
