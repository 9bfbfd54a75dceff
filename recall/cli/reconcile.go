package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall"
)

// reconcileCommand is "recall-archive reconcile": a provider that keeps
// records asked about each ambiguous request.
func reconcileCommand(o recall.Options) *command.Command {
	var pf providerFlags
	return &command.Command{Name: "reconcile", Args: []command.Arg{batchArg}, DB: true, JSON: true, Flags: pf.register,
		Summary: "ask the provider about ambiguous requests, and resolve them from its answer",
		Help:    "Exits 3 when a request could not be asked about: it stays ambiguous.",
		Check: func(*command.Run) error {
			if pf.name == "sandbox" && pf.url == "" {
				return command.Usagef("give --provider-url: the sandbox to ask is the one that was called")
			}
			return nil
		},
		Run: archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
			prov, stop, err := pf.build(r, time.Minute)
			if err != nil {
				return err
			}
			defer stop()
			res, err := a.Reconcile(ctx, r.Args[0], prov)
			if err := r.Done(res, err, func(w io.Writer) { printReconciled(w, res) }); err != nil {
				return err
			}
			for _, rr := range res {
				if rr.Error != "" {
					return command.Exit(ExitAmbiguous)
				}
			}
			return nil
		}),
	}
}

func printReconciled(w io.Writer, res []recall.Reconciled) {
	if len(res) == 0 {
		fmt.Fprintln(w, "no ambiguous requests")
	}
	for _, r := range res {
		switch {
		case r.Error != "":
			fmt.Fprintf(w, "%s: still ambiguous: %s\n", r.Key, r.Error)
			if r.Check != "" {
				fmt.Fprintf(w, "  to decide by hand, check %s; then 'recall-archive resolve'\n", r.Check)
			}
		case r.State == journal.Applied:
			fmt.Fprintf(w, "%s: charged (request %s): resolved as applied\n", r.Key, r.Request)
		default:
			fmt.Fprintf(w, "%s: no such charge: resolved as not applied; retry-failed --safe-only will send it again\n", r.Key)
		}
	}
}
