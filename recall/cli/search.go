package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/recall"
)

// searchCommand is "recall-archive search": words found in every
// transcript.
func searchCommand(o recall.Options) *command.Command {
	var limit int
	var sandbox bool
	query := command.Arg{Name: "QUERY", Help: "the words to find", Many: true}
	return &command.Command{Name: "search", Args: []command.Arg{query}, DB: true, JSON: true, Summary: "find words in every transcript, with the file and the time",
		Help: `Each match names the provider and model whose transcript holds it. The
built-in sandbox's placeholder transcripts are searched only with
--include-sandbox.`,
		Flags: func(f *pflag.FlagSet) {
			f.IntVar(&limit, "limit", 20, "show at most this many matches")
			f.BoolVar(&sandbox, "include-sandbox", false, "search the sandbox's placeholder transcripts too")
		},
		Run: archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
			query := strings.Join(r.Args, " ")
			hits, err := a.Search(ctx, query, limit, sandbox)
			hint := false
			if err == nil && len(hits) == 0 && !sandbox {
				hint, err = a.SandboxHolds(ctx, query)
			}
			return r.Done(hits, err, func(w io.Writer) {
				printHits(w, hits)
				if hint {
					fmt.Fprintln(w, "the sandbox's placeholder transcripts hold it: search them with --include-sandbox, or transcribe with a real provider ('recall-archive retranscribe')")
				}
			})
		})}
}

func printHits(w io.Writer, hits []recall.Hit) {
	if len(hits) == 0 {
		fmt.Fprintln(w, "no matches")
	}
	for _, h := range hits {
		path := h.SHA256[:12]
		if len(h.Paths) > 0 {
			path = h.Paths[0]
		}
		fmt.Fprintf(w, "%s  at %s  (%s/%s)\n    %s\n", path, clock(h.Start), h.Provider, h.Model, h.Snippet)
	}
}

// clock formats an offset as H:MM:SS.
func clock(d time.Duration) string {
	s := int(d.Seconds())
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}
