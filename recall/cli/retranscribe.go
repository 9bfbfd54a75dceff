package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/recall"
)

// retranscribeCommand is "recall-archive retranscribe": a batch
// transcribed again, on purpose, by another provider, model or settings,
// once its cost is shown and agreed to.
func retranscribeCommand(o recall.Options) *command.Command {
	var rf runFlags
	var yes bool
	var flags *pflag.FlagSet
	return &command.Command{
		Name: "retranscribe", Args: []command.Arg{batchArg}, Synopsis: "BATCH --provider PROVIDER [--model MODEL] [--speakers] [--language L] [--prompt T] [--vocabulary F] [--yes] [flags]", DB: true, JSON: true,
		Summary: "transcribe a batch again with another provider, model or settings, its cost shown first",
		Help: `A transcript is made by a provider's model with its settings (--speakers,
--language, --prompt, --vocabulary), and a run asking for other ones does
not pay for a second transcript. This command does, on purpose: it shows
what the recordings of the batch that PROVIDER's MODEL has not transcribed
with these settings would cost, each option the prices file prices on its
own line, asks to go on (--yes answers for you), and runs the batch with
them, with run's flags. What other providers, models or settings made is
kept; what these made already is never paid for again. Export then uses
the new transcripts, and search finds them beside the earlier ones.`,
		Flags: func(f *pflag.FlagSet) {
			flags = f
			rf.register(f)
			f.BoolVar(&yes, "yes", false, "go on without asking")
		},
		Check: func(r *command.Run) error {
			if !flags.Changed("provider") {
				return command.Usagef("say which provider transcribes again, with the settings it is asked for: --provider openai, deepgram, assemblyai or sandbox, and --speakers, --language, --prompt or --vocabulary as the run takes them")
			}
			if r.JSON && !yes {
				return command.Usagef("with --json, give --yes: there is no one to ask")
			}
			return nil
		},
		Run: func(ctx context.Context, r *command.Run) error {
			pricing, err := rf.pf.pricing(r)
			if err != nil {
				return err
			}
			var proceed bool
			err = archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
				est, err := a.Estimate(ctx, r.Args[0], pricing)
				if err != nil {
					return err
				}
				if !r.JSON {
					fmt.Fprintf(r.Stderr, "batch %s: %d of its %s not yet transcribed by %s: %s of audio, $%s at $%s a minute\n",
						est.Batch, est.RemainingContents, output.Plural(est.Contents, "recording"), est.Transcriber,
						est.Remaining.Round(time.Second), est.RemainingCost.Decimal(6), pricing.PerMinute.Decimal(6))
					printOptions(r.Stderr, est, true)
				}
				if est.RemainingContents == 0 {
					fmt.Fprintf(r.Stderr, "nothing to transcribe: %s transcribed every recording of the batch\n", est.Transcriber)
					return nil
				}
				if proceed = yes; !proceed {
					proceed, err = confirm(r, fmt.Sprintf("transcribe them again for $%s? [y/N] ", est.RemainingCost.Decimal(6)))
				}
				return err
			})(ctx, r)
			if err != nil || !proceed {
				return err
			}
			rf.again = true
			return run(ctx, r, o, &rf, nil)
		},
	}
}

// confirm asks question on standard error and reads the answer from
// standard input: yes for "y" or "yes".
func confirm(r *command.Run, question string) (bool, error) {
	fmt.Fprint(r.Stderr, question)
	if r.Stdin == nil {
		return false, errors.New("no answer: give --yes to go on without asking")
	}
	line, err := bufio.NewReader(r.Stdin).ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	if answer == "" && err != nil {
		return false, errors.New("no answer on standard input: give --yes to go on without asking")
	}
	if answer == "y" || answer == "yes" {
		return true, nil
	}
	fmt.Fprintln(r.Stderr, "nothing sent")
	return false, nil
}
