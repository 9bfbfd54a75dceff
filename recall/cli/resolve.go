package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/recording"
)

// resolveCommand is "recall-archive resolve": a person's decision on an
// ambiguous request.
func resolveCommand(o recall.Options) *command.Command {
	var rule command.Resolve
	var res journal.Resolution
	var transcript string
	return &command.Command{
		Name: "resolve", Args: []command.Arg{{Name: "KEY", Help: "the key of the request as 'recall-archive ambiguous' lists it"}},
		Synopsis: "KEY (--applied [--transcript FILE] | --not-applied) --note TEXT [--by NAME]", DB: true, JSON: true,
		Summary: "record a person's decision on an ambiguous request",
		Help:    command.ResolveHelp + "\n\nA request resolved as not applied is sent again after 'retry-failed --safe-only'.",
		Flags: func(f *pflag.FlagSet) {
			rule.Flags(f, "the provider did transcribe, and charge", "the provider did not; the request may be sent again")
			f.StringVar(&transcript, "transcript", "", "with --applied: a `FILE` with the transcript (plain text, or the provider's JSON)")
		},
		Check: func(r *command.Run) (err error) {
			if res, err = rule.Resolution(r); err == nil && transcript != "" && !rule.Applied() {
				err = command.Usagef("--transcript goes with --applied")
			}
			return err
		},
		Run: archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) (err error) {
			d := recall.Decision{Applied: rule.Applied(), Note: res.Note, By: res.By}
			if transcript != "" {
				if d.Transcript, err = readTranscript(transcript); err != nil {
					return err
				}
				d.Evidence = journal.Evidence{"transcript_file": transcript}
			}
			op, err := a.Resolve(ctx, r.Args[0], d)
			return r.Done(output.FromOperation(op), err, func(w io.Writer) { fmt.Fprintf(w, "%s resolved as %s by %s\n", op.Key, op.State, op.Resolution.By) })
		}),
	}
}

// readTranscript reads a transcript a person gives, as the console does
// ([recall.ParseTranscript]).
func readTranscript(path string) (*recording.Transcript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := recall.ParseTranscript(data)
	if err != nil {
		return nil, fmt.Errorf("--transcript %s: %w", path, err)
	}
	return t, nil
}
