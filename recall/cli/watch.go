package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/recall"
)

// watchCommand is "recall-archive watch": recordings added and
// transcribed as they appear in a folder.
func watchCommand(o recall.Options) *command.Command {
	var rf runFlags
	var batch string
	var settle, interval time.Duration
	dir := command.Arg{Name: "DIR", Help: "the folder to watch", Files: true}
	return &command.Command{Name: "watch", Args: []command.Arg{dir}, Synopsis: "DIR --batch BATCH [run's flags]", DB: true,
		Summary: "add and transcribe the recordings that appear in DIR",
		Help: `Watches DIR and its subfolders. A file is added to the batch once it has
stopped growing (its size and time unchanged for --settle), and the batch
is then run as 'recall-archive run' runs it, with run's flags, within the
batch's budget; a file still being written or copied is never read, nor
are hidden files and names of partial downloads (.part, .crdownload, .tmp).
The watch starts with a run, so that what an earlier watch left waiting is
done first, and goes on until Ctrl-C (or SIGTERM), which ends it as it ends
a run. Several watches of one folder, on one machine or on several sharing
PostgreSQL, pay for each recording once.`,
		Flags: func(f *pflag.FlagSet) {
			f.StringVar(&batch, "batch", "", "required: the `BATCH` the recordings are added to")
			command.DurationVar(f, &settle, "settle", 10*time.Second, "how long a file must stay unchanged before it is added, in seconds or such as 30s")
			command.DurationVar(f, &interval, "interval", 2*time.Second, "how often DIR is looked at")
			rf.register(f)
		},
		Check: func(r *command.Run) error {
			switch {
			case batch == "":
				return command.Usagef("say which batch the recordings go to: --batch BATCH")
			case settle <= 0 || interval <= 0:
				return command.Usagef("--settle and --interval must be more than 0")
			}
			if info, err := os.Stat(r.Args[0]); err != nil || !info.IsDir() {
				return command.Usagef("%s is not a folder: give the folder to watch", r.Args[0])
			}
			return nil
		},
		Run: func(ctx context.Context, r *command.Run) error {
			s := &recall.Settler{Root: r.Args[0], Quiet: settle}
			return watch(ctx, r, o, &rf, batch, s, interval)
		}}
}

// watch runs the batch at once, then each time files have settled in
// the folder, until ctx ends.
func watch(ctx context.Context, r *command.Run, o recall.Options, rf *runFlags, batch string, s *recall.Settler, interval time.Duration) error {
	onBatch := *r
	onBatch.Args = []string{batch}
	// A batch that does not exist yet has nothing left waiting: the
	// first run waits for the first recording.
	exists := true
	err := archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
		_, err := a.Status(ctx, batch)
		if errors.Is(err, recall.ErrNoBatch) {
			exists, err = false, nil
		}
		return err
	})(ctx, &onBatch)
	if err != nil {
		return err
	}
	var settled []string
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for first := exists; ; first = false {
		if first || len(settled) > 0 {
			paths := settled
			err := run(ctx, &onBatch, o, rf, func(ctx context.Context, a *recall.Archive) (any, func(io.Writer), error) {
				return addSettled(ctx, a, batch, s, paths)
			})
			if ctx.Err() != nil {
				// Interrupted while adding or running: the run has said
				// what it left; the next watch takes it up.
				return command.Exit(command.ExitInterrupted)
			}
			if code, ok := command.ExitCodeOf(err); err != nil && (!ok || code == ExitFailure) {
				return err
			}
		}
		if ctx.Err() != nil {
			return command.Exit(command.ExitInterrupted)
		}
		fmt.Fprintf(r.Stderr, "recall-archive: watching %s for batch %s (Ctrl-C ends it)\n", s.Root, batch)
		settled = nil
		for len(settled) == 0 {
			select {
			case <-ctx.Done():
				return command.Exit(command.ExitInterrupted)
			case <-tick.C:
			}
			var err error
			if settled, _, err = s.Scan(time.Now()); err != nil {
				return fmt.Errorf("watching %s: %w", s.Root, err)
			}
		}
	}
}

// addSettled adds to batch the settled files that are still as they
// settled, before the run; one that changed again waits for the next
// scans. With none to add (the first run of a watch), it adds nothing.
func addSettled(ctx context.Context, a *recall.Archive, batch string, s *recall.Settler, paths []string) (any, func(io.Writer), error) {
	var still []string
	for _, p := range paths {
		if s.Still(p) {
			still = append(still, p)
		} else {
			s.Unsettle(p)
		}
	}
	if len(still) == 0 {
		return nil, func(io.Writer) {}, nil
	}
	rep, err := a.Add(ctx, batch, still, recall.AddOptions{})
	if err != nil {
		for _, p := range still {
			s.Unsettle(p)
		}
		return nil, nil, err
	}
	return rep, func(w io.Writer) { printAdded(w, rep) }, nil
}
