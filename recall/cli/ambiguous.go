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
)

// ambiguousCommand is "recall-archive ambiguous": the requests that may
// have been charged, with what shows it. It exits 3 when there are any.
func ambiguousCommand(o recall.Options) *command.Command {
	return &command.Command{Name: "ambiguous", Args: []command.Arg{{Name: "BATCH", Optional: true, Complete: completeBatches}}, DB: true, JSON: true,
		Summary: "requests that may have been charged, with their evidence", Help: "Exits 3 when there are any, with --json too.",
		Run: archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
			items, err := a.Ambiguous(ctx, strings.Join(r.Args, ""))
			if err := r.Done(items, err, func(w io.Writer) { printAmbiguous(w, items) }); err != nil || len(items) == 0 {
				return err
			}
			return command.Exit(ExitAmbiguous)
		})}
}

func printAmbiguous(w io.Writer, items []recall.AmbiguousItem) {
	if len(items) == 0 {
		fmt.Fprintln(w, "no ambiguous requests")
		return
	}
	for _, it := range items {
		fmt.Fprintf(w, "%s\n", it.Key)
		fmt.Fprintf(w, "  batch:     %s\n", strings.Join(it.Batches, ", "))
		for _, p := range it.Paths {
			fmt.Fprintf(w, "  file:      %q\n", p)
		}
		fmt.Fprintf(w, "  sent at:   %s (attempt %d)\n", it.SentAt.Local().Format(time.RFC3339), it.Attempts)
		fmt.Fprintf(w, "  what:      %s\n", it.LastError)
		if v, ok := it.Evidence["bytes_written"]; ok {
			fmt.Fprintf(w, "  written:   %v bytes\n", v)
		}
		if v, ok := it.Evidence["provider_request_id"]; ok {
			fmt.Fprintf(w, "  request:   %v\n", v)
		}
		fmt.Fprintf(w, "  held:      $%s\n", it.Held.Decimal(6))
		fmt.Fprintf(w, "  if charged:     %s\n", resolveLine(it.Key, "--applied"))
		fmt.Fprintf(w, "  if not charged: %s\n", resolveLine(it.Key, "--not-applied"))
	}
	fmt.Fprint(w, `
How to check: look at the provider's usage or billing page around the time
each request was sent, then run the line that says what you found, with
what you checked as the note (with --applied, add --transcript FILE if you
have the text). A request resolved as not applied is sent again by
'recall-archive retry-failed BATCH --safe-only'. The sandbox provider can be
asked: GET /v1/sandbox/charges?tag=KEY.
`)
}

// resolveLine is the command that resolves the request key as decision
// says, as it can be pasted into a shell.
func resolveLine(key, decision string) string {
	return "recall-archive resolve " + output.ShellQuote(key) + " " + decision + ` --note "what you checked"`
}
