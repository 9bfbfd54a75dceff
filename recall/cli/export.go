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
)

// exportCommand is "recall-archive export": a batch's transcripts written
// out.
func exportCommand(o recall.Options) *command.Command {
	var format, out string
	var sandbox bool
	var sf subtitleFlags
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
--include-sandbox, for recordings that no other provider transcribed.`,
		Flags: func(f *pflag.FlagSet) {
			f.StringVar(&format, "format", "txt,srt,vtt,json", "formats, comma-separated: txt, srt, vtt, json")
			f.StringVar(&out, "out", "", "the `DIR` to write to (required)")
			f.BoolVar(&sandbox, "include-sandbox", false, "write the sandbox's placeholder transcripts too")
			sf.register(f)
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
			return sf.check()
		},
		Run: func(ctx context.Context, r *command.Run) error {
			o.Subtitles = sf.rules
			return archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
				rep, err := a.ExportFiles(ctx, r.Args[0], out, strings.Split(format, ","), sandbox)
				return r.Done(rep, err, func(w io.Writer) {
					fmt.Fprintf(w, "wrote the transcripts of %s (%s) to %s\n", output.Plural(rep.Recordings, "recording"), output.Plural(len(rep.Files), "file"), out)
				})
			})(ctx, r)
		},
	}
}
