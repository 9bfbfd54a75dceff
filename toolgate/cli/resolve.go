package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/journal"
)

// resolveCommand is "toolgate resolve": a person settles a call whose
// outcome is unknown.
func resolveCommand() *command.Command {
	var rule command.Resolve
	return &command.Command{
		Name: "resolve", Args: []command.Arg{{Name: "KEY", Help: "the key of the call as toolgate calls lists it"}},
		Synopsis: "KEY (--applied | --not-applied) --note TEXT [--by NAME] [--db DSN] [--json]", DB: true, JSON: true,
		Summary: "settle a call whose outcome is unknown, once a person has checked the upstream",
		Help:    command.ResolveHelp + "\n\nOnce settled, calls of the tool on that resource are allowed again.",
		Flags: func(f *pflag.FlagSet) {
			rule.Flags(f, "the upstream did apply the call", "it did not; the call may be made again")
		},
		Run: func(ctx context.Context, r *command.Run) error {
			res, err := rule.Resolution(r)
			if err != nil {
				return err
			}
			db, err := openDB(ctx, r)
			if err != nil {
				return err
			}
			defer db.Close()
			op, err := journal.New(db.JournalStore(), journal.Options{}).Resolve(ctx, r.Args[0], res)
			if err != nil {
				return resolveError(r.Args[0], err)
			}
			r.Show(output.FromOperation(op, "arguments"), func(w io.Writer) { fmt.Fprintf(w, "%s resolved as %s by %s\n", op.Key, op.State, res.By) })
			return nil
		},
	}
}
