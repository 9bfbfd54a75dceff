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
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/recording"
)

// searchHelp documents the query syntax, in search's help and the docs.
const searchHelp = `A query is words, all of which a segment holds, in any order; case and
punctuation do not count. "Words in quotes" are a phrase: side by side, in
that order. OR (in capitals) between words or groups of words finds either:
bridge OR library, or "old bridge" river OR library. A word ending in *
finds the words that start so: bri* finds bridge and brick. Quote the query
for the shell: recall-archive search 'bridge OR "old library"'.

Each match names the provider and model whose transcript holds it; the
total counts every match, past --limit too. The built-in sandbox's
placeholder transcripts are searched only with --include-sandbox.

Where a transcript labels its speakers (transcribed with --speakers), each
match says who speaks it, by the name given with 'recall-archive
speakers' if any; --speaker keeps to one speaker's segments, by label (A,
or Speaker A as the exports show it) or by the whole name, case aside.`

// searchCommand is "recall-archive search": words found in the
// transcripts, of one batch or of all.
func searchCommand(o recall.Options) *command.Command {
	var limit int
	var sandbox bool
	var batch, speaker string
	query := command.Arg{Name: "QUERY", Help: "the words to find", Many: true}
	return &command.Command{Name: "search", Args: []command.Arg{query}, Synopsis: "QUERY [--batch BATCH] [flags]", DB: true, JSON: true,
		Summary:    "find words in the transcripts, with the file and the time, and count the matches",
		Help:       searchHelp,
		FlagValues: map[string]func(context.Context, *command.Run) ([]string, error){"batch": completeBatches},
		Flags: func(f *pflag.FlagSet) {
			f.IntVar(&limit, "limit", 20, "show at most this many matches")
			f.StringVar(&batch, "batch", "", "search the recordings of this `BATCH` only (default: every batch)")
			f.StringVar(&speaker, "speaker", "", "find only what this `SPEAKER` says: a label (A, or Speaker A) or the name given to it")
			f.BoolVar(&sandbox, "include-sandbox", false, "search the sandbox's placeholder transcripts too")
		},
		Run: archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
			query := strings.Join(r.Args, " ")
			in := recall.Scope{Batch: batch, Speaker: speaker, Limit: limit, Sandbox: sandbox}
			res, err := a.Find(ctx, query, in)
			if errors.Is(err, recall.ErrQuery) {
				return command.Usagef("%v ('recall-archive help search' gives the syntax)", err)
			}
			hint := false
			if err == nil && res.Total == 0 && !sandbox {
				var held recall.SearchResult
				in.Limit, in.Sandbox = 1, true
				held, err = a.Find(ctx, query, in)
				hint = held.Total > 0
			}
			return r.Done(res, err, func(w io.Writer) {
				printHits(w, res)
				if hint {
					fmt.Fprintln(w, "the sandbox's placeholder transcripts hold it: search them with --include-sandbox, or transcribe with a real provider ('recall-archive retranscribe')")
				}
			})
		})}
}

func printHits(w io.Writer, res recall.SearchResult) {
	for _, h := range res.Hits {
		path := h.SHA256[:12]
		if len(h.Paths) > 0 {
			path = h.Paths[0]
		}
		said := h.Snippet
		if h.Speaker != "" {
			said = recording.Speaker(h.Speaker, h.SpeakerName) + ": " + said
		}
		fmt.Fprintf(w, "%s  at %s  (%s)\n    %s\n", path, clock(h.Start), recording.Transcriber{Provider: h.Provider, Model: h.Model, Settings: h.Settings}, said)
	}
	where := "in every batch"
	if res.Batch != "" {
		where = "in batch " + res.Batch
	}
	if res.Speaker != "" {
		where += ", said by " + res.Speaker
	}
	switch {
	case res.Total == 0:
		fmt.Fprintf(w, "no matches %s\n", where)
	case res.Total > len(res.Hits):
		fmt.Fprintf(w, "%s %s, %d shown (--limit shows more)\n", output.Plural(res.Total, "match", "matches"), where, len(res.Hits))
	default:
		fmt.Fprintf(w, "%s %s\n", output.Plural(res.Total, "match", "matches"), where)
	}
}

// clock formats an offset as H:MM:SS.
func clock(d time.Duration) string {
	s := int(d.Seconds())
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}
