package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/recall"
)

// batchesCommand is "recall-archive batches": the archive's batches, with
// their files, progress and money.
func batchesCommand(o recall.Options) *command.Command {
	return &command.Command{Name: "batches", DB: true, JSON: true, Summary: "list the batches: files, recordings per state, money spent, when made",
		Help: `Recordings are counted once however many files hold them; 'recall-archive
status BATCH' tells more of one batch. Money spent is real money; the
sandbox's play money is shown apart.`,
		Run: archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
			bs, err := a.Batches(ctx)
			return r.Done(bs, err, func(w io.Writer) { printBatches(w, bs) })
		})}
}

func printBatches(w io.Writer, bs []recall.BatchSummary) {
	if len(bs) == 0 {
		fmt.Fprintln(w, "no batches: 'recall-archive add BATCH PATH' makes one")
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BATCH\tFILES\tDONE\tAMBIGUOUS\tFAILED\tREFUSED\tWAITING\tSPENT\tCREATED")
	for _, b := range bs {
		t := b.Transcription
		spent := "$" + b.Spent.Decimal(6)
		if b.Play > 0 {
			spent += fmt.Sprintf(" (play $%s)", b.Play.Decimal(6))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", b.Name, b.Files, t["done"], t["ambiguous"], t["failed"], t["refused_by_budget"],
			t["waiting"]+t["sending"], spent, b.Created.Local().Format(time.DateTime))
	}
	tw.Flush()
	fmt.Fprintf(w, "%s\n", output.Plural(len(bs), "batch", "batches"))
}

// completeBatches lists the batches of the archive that --db names, for
// the shell to complete BATCH with; an archive that does not exist yet
// is not made.
func completeBatches(ctx context.Context, r *command.Run) ([]string, error) {
	dsn, err := r.DSN()
	if err != nil {
		return nil, err
	}
	if !strings.Contains(dsn, "://") {
		if _, err := os.Stat(dsn); err != nil {
			return nil, err
		}
	}
	a, err := recall.Open(ctx, dsn, recall.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return a.BatchNames(ctx)
}
