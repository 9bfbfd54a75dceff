package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/recording"
)

// speakersCommand is "recall-archive speakers": the speakers of a
// recording's transcript with their names, or names given to them.
func speakersCommand(o recall.Options) *command.Command {
	var names map[string]string
	file := command.Arg{Name: "FILE", Help: "the path of a file of the batch, as it was added", Files: true}
	assign := command.Arg{Name: "LABEL=NAME", Help: "a speaker's label and the name to show for it", Optional: true, Many: true}
	return &command.Command{Name: "speakers", Args: []command.Arg{batchArg, file, assign}, Synopsis: "BATCH FILE [LABEL=NAME...] [flags]", DB: true, JSON: true,
		Summary: "list the speakers of a recording's transcript with their names, or name them, paying nothing",
		Help: `Without LABEL=NAME, lists the speakers that the recording's transcript
labels (transcribed with --speakers), in the order they first speak, with
their names. With them, gives the speakers names, shown from then on
instead of the labels in every export (VTT voices, SRT and text, JSON's
speaker_name), search and the console: A=Alice names speaker A, "B=Bob
Smith" speaker B, and A= takes A's name away. A label may be given as the
exports show it, "Speaker A=Alice", and case aside.

The transcript is the one that export writes. Names belong to the
recording: every file and batch that holds it shows them. Nothing is sent
to a provider and nothing is paid; search --speaker finds a speaker's
words by label or by name.`,
		Check: func(r *command.Run) (err error) {
			names, err = parseNames(r.Args[2:])
			return err
		},
		Run: archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
			rep, err := a.Speakers(ctx, r.Args[0], r.Args[1], names)
			return r.Done(rep, err, func(w io.Writer) { printSpeakers(w, rep) })
		})}
}

// parseNames reads LABEL=NAME arguments: by label, the name to give, empty
// to take it away.
func parseNames(args []string) (map[string]string, error) {
	names := map[string]string{}
	for _, arg := range args {
		label, name, ok := strings.Cut(arg, "=")
		label = strings.TrimSpace(label)
		switch {
		case !ok:
			return nil, command.Usagef("%q names no speaker: write LABEL=NAME, such as A=Alice (A= takes A's name away)", arg)
		case label == "":
			return nil, command.Usagef("%q has no label before =: write LABEL=NAME, such as A=Alice", arg)
		}
		if _, twice := names[label]; twice {
			return nil, command.Usagef("speaker %s is named twice: give each label once", label)
		}
		names[label] = name
	}
	return names, nil
}

// printSpeakers lists rep's speakers, a line each, and says what was
// named or how to name them.
func printSpeakers(w io.Writer, rep recall.SpeakersReport) {
	if len(rep.Speakers) == 0 {
		fmt.Fprintf(w, "%q: its transcript by %s/%s labels no speakers (transcribe it with --speakers to name them)\n", rep.Path, rep.Provider, rep.Model)
		return
	}
	fmt.Fprintf(w, "%q: %s in its transcript by %s/%s\n", rep.Path, output.Plural(len(rep.Speakers), "speaker"), rep.Provider, rep.Model)
	labels, names := make([]string, len(rep.Speakers)), make([]string, len(rep.Speakers))
	lw, nw := 0, 0
	for i, s := range rep.Speakers {
		labels[i], names[i] = s.Label, s.Name
		if s.Name == "" {
			names[i] = "(no name: shown as " + recording.Speaker(s.Label, "") + ")"
		}
		lw, nw = max(lw, len(labels[i])), max(nw, len([]rune(names[i])))
	}
	for i, s := range rep.Speakers {
		fmt.Fprintf(w, "  %-*s  %-*s  from %s, %s, %s in all\n", lw, labels[i], nw, names[i], clock(s.First), output.Plural(s.Segments, "segment"), spoken(s.Spoken))
	}
	if len(rep.Named) == 0 {
		fmt.Fprintf(w, "name them: recall-archive speakers %s %s %s=NAME...\n", output.ShellQuote(rep.Batch), output.ShellQuote(rep.Path), rep.Speakers[0].Label)
		return
	}
	fmt.Fprintf(w, "changed the name of %s (%s); exports, searches and the console show the names (nothing was sent or paid)\n",
		output.Plural(len(rep.Named), "speaker"), strings.Join(rep.Named, ", "))
}

// spoken formats how long a speaker speaks: seconds, to the tenth, under
// a minute, else H:MM:SS.
func spoken(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return clock(d)
}
