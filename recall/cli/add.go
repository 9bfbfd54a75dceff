package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/recall"
)

// addCommand is "recall-archive add": media found, probed, hashed and
// recorded once per content.
func addCommand(o recall.Options) *command.Command {
	var workers int
	paths := command.Arg{Name: "PATH", Help: "a file or directory of recordings", Many: true, Files: true}
	return &command.Command{Name: "add", Args: []command.Arg{batchArg, paths}, DB: true, JSON: true, Summary: "find the media under PATH, hash each file, record it in BATCH",
		Flags: func(f *pflag.FlagSet) {
			f.IntVar(&workers, "workers", 0, "probe and hash this many files at a time (default: one per CPU)")
		},
		Run: archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
			rep, err := a.Add(ctx, r.Args[0], r.Args[1:], recall.AddOptions{Workers: workers})
			if err := r.Done(rep, err, func(w io.Writer) { printAdded(w, rep) }); err != nil || len(rep.Problems) == 0 {
				return err
			}
			return command.Exit(ExitItemProblems)
		})}
}

func printAdded(w io.Writer, rep recall.AddReport) {
	fmt.Fprintf(w, "batch %s: %s added (%s), %d unchanged, %d skipped as not media\n",
		rep.Batch, output.Plural(rep.Added, "file"), output.Plural(rep.NewContents, "new content"), rep.Unchanged, rep.Skipped)
	printProblems(w, rep.Problems)
}
