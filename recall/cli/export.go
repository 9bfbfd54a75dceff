package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/recording"
)

// exportCommand is "recall-archive export": a batch's transcripts written
// out.
func exportCommand(o recall.Options) *command.Command {
	var format, out string
	var sandbox bool
	var sf subtitleFlags
	// by chooses the transcripts of one provider, model and settings.
	var by providerFlags
	return &command.Command{
		Name: "export", Args: []command.Arg{batchArg}, Synopsis: "BATCH --out DIR [flags]", DB: true, JSON: true,
		Summary: "write the batch's transcripts",
		Help: `The transcripts keep the folder tree of the batch's files, below the
deepest folder that holds them all, and are named as players look for
them: talks/talk.mp3's are talks/talk.srt, talks/talk.vtt and so on. Where
two files would share a name (talk.mp3 and talk.wav), the first by path
keeps it and the next has its extension kept: talk.wav.srt.

Each recording's transcript is the latest that a provider made whole. The
built-in sandbox's placeholder transcripts are written only with
--include-sandbox, for recordings that no other provider transcribed.
With --provider (and --model, and the settings --speakers, --language,
--prompt and --vocabulary as the run or retranscribe took them), each
recording's transcript by that provider, model and settings is written,
and a recording without one is counted, not written.`,
		Flags: func(f *pflag.FlagSet) {
			f.StringVar(&format, "format", "txt,srt,vtt,json", "formats, comma-separated: txt, srt, vtt, json")
			f.StringVar(&out, "out", "", "the `DIR` to write to (required)")
			f.BoolVar(&sandbox, "include-sandbox", false, "write the sandbox's placeholder transcripts too")
			sf.register(f)
			f.StringVar(&by.name, "provider", "", "write the transcripts by this `PROVIDER` (default: each recording's latest): "+strings.Join(provider.Names(), ", "))
			command.CompleteWith(f, "provider", provider.Names()...)
			f.StringVar(&by.model, "model", "", "with --provider, the `MODEL` (default: the provider's)")
			by.registerSpeakers(f)
			// Here the settings choose a transcript instead of making one.
			for name, usage := range map[string]string{
				"speakers":   "with --provider, the transcripts made with speakers labelled (--speakers=N: N expected), as the run asked",
				"language":   "with --provider, the transcripts made with --language `LANGUAGE`",
				"prompt":     "with --provider, the transcripts made with --prompt `TEXT`",
				"vocabulary": "with --provider, the transcripts made with --vocabulary `FILE` (its terms as they are now)",
			} {
				f.Lookup(name).Usage = usage
			}
		},
		Check: func(*command.Run) error {
			if out == "" {
				return command.Usagef("--out is required")
			}
			for _, f := range strings.Split(format, ",") {
				if !slices.Contains(recall.Formats, f) {
					return command.Usagef("--format: unknown format %q: give some of %s, comma-separated", f, strings.Join(recall.Formats, ", "))
				}
			}
			if by.name == "" && (by.model != "" || by.settingsFlags() != "") {
				return command.Usagef("--model and the settings choose a provider's transcripts: give --provider too")
			}
			if by.name != "" {
				if err := by.known(); err != nil {
					return err
				}
			}
			return sf.check()
		},
		Run: func(ctx context.Context, r *command.Run) error {
			o.Subtitles = sf.rules
			opts := recall.ExportOptions{Formats: strings.Split(format, ","), Sandbox: sandbox}
			if by.name != "" {
				by.defaults()
				hints, err := by.hints()
				if err != nil {
					return err
				}
				settings := provider.Options{Name: by.name, Model: by.model, Speakers: by.speakers, Hints: hints}.Settings()
				opts.By = recording.Transcriber{Provider: by.name, Model: by.model, Settings: settings}
			}
			return archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
				rep, err := a.ExportFiles(ctx, r.Args[0], out, opts)
				return r.Done(rep, err, func(w io.Writer) {
					fmt.Fprintf(w, "wrote the transcripts of %s (%s) to %s\n", output.Plural(rep.Recordings, "recording"), output.Plural(len(rep.Files), "file"), out)
					if rep.Without != nil && *rep.Without > 0 {
						fmt.Fprintf(w, "%s of the batch without a whole transcript by %s, not written: 'recall-archive retranscribe %s --provider %s --model %s%s' makes them, priced first\n",
							output.Plural(*rep.Without, "recording"), rep.By, output.ShellQuote(r.Args[0]), by.name, by.model, by.settingsFlags())
					}
				})
			})(ctx, r)
		},
	}
}
