package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

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
			var progress recall.AddProgress
			stop := showAdding(r.Stderr, &progress, time.Now)
			rep, err := a.Add(ctx, r.Args[0], r.Args[1:], recall.AddOptions{Workers: workers, Progress: &progress})
			stop()
			if err := r.Done(rep, err, func(w io.Writer) { printAdded(w, rep) }); err != nil || len(rep.Problems) == 0 {
				return err
			}
			return command.Exit(ExitItemProblems)
		})}
}

// showAdding keeps a line on a terminal w saying what an add has done,
// redrawn five times a second until stop, which leaves the last one.
// Elsewhere it shows nothing: the report says it all at the end.
func showAdding(w io.Writer, p *recall.AddProgress, now func() time.Time) (stop func()) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	start := now()
	draw := func() { fmt.Fprintf(w, "\r\033[K%s", addingLine(p, now().Sub(start))) }
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				draw()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		draw()
		fmt.Fprintln(w)
	}
}

// addingLine says what an add has done after elapsed: files probed and
// hashed, and the bytes read with their rate.
func addingLine(p *recall.AddProgress, elapsed time.Duration) string {
	found, probed, hashed, bytes := p.Found.Load(), p.Probed.Load(), p.Hashed.Load(), p.Bytes.Load()
	line := fmt.Sprintf("recall-archive: probed %d of %s, hashed %d: %s", probed, output.Plural(int(found), "file"), hashed, output.Bytes(bytes))
	if s := elapsed.Seconds(); s >= 0.5 && bytes > 0 {
		line += fmt.Sprintf(" at %s/s", output.Bytes(int64(float64(bytes)/s)))
	}
	return line
}

func printAdded(w io.Writer, rep recall.AddReport) {
	fmt.Fprintf(w, "batch %s: %s added (%s), %d unchanged, %d skipped as not media\n",
		rep.Batch, output.Plural(rep.Added, "file"), output.Plural(rep.NewContents, "new content"), rep.Unchanged, rep.Skipped)
	printProblems(w, rep.Problems)
}
