package journal_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// A worker claims an operation, commits sending before the request goes
// out, and records what happened. A request that got no answer leaves the
// operation ambiguous: no worker sends it again, and a person resolves it.
func Example() {
	dir, _ := os.MkdirTemp("", "journal-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, filepath.Join(dir, "rubicon.db"), sqlstore.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	j := journal.New(db.JournalStore(), journal.Options{})

	for _, key := range []string{"charge-order-7", "charge-order-8"} {
		j.Insert(ctx, journal.NewOperation{Key: key, Kind: "charge", Subject: "orders/" + key[len("charge-"):]})
	}
	ops, _ := j.Claim(ctx, "charge", "worker-1", 10)
	for _, op := range ops {
		if _, err := j.Send(ctx, op.Key, "worker-1"); err != nil {
			panic(err)
		}
		// ... the request goes out here ...
		report := journal.Report{Worker: "worker-1", To: journal.Applied}
		if op.Key == "charge-order-8" {
			// The connection broke after the request was written.
			report = journal.Report{Worker: "worker-1", To: journal.Ambiguous, Phase: "sent", Detail: "connection reset"}
		}
		j.Record(ctx, op.Key, report)
	}

	rep, _ := j.RetrySafe(ctx, journal.Scope{Kind: "charge"})
	fmt.Println("moved back to pending:", len(rep.Moved))
	for _, l := range rep.Left {
		fmt.Printf("left %s (%s)\n", l.Key, l.State)
	}

	// Until the lease it was sent under runs out, the request may still be
	// on its way: it cannot be settled as not applied yet.
	_, err = j.Resolve(ctx, "charge-order-8", journal.Resolution{
		To: journal.NotApplied, By: "ana", Note: "no such charge in the provider's dashboard",
	})
	var early *journal.TransitionError
	if errors.As(err, &early) && !early.Until.IsZero() {
		fmt.Println("not applied: refused until the lease runs out")
	}
	op, _ := j.Resolve(ctx, "charge-order-8", journal.Resolution{
		To: journal.Applied, By: "ana", Note: "the charge is in the provider's dashboard",
	})
	fmt.Println(op.Key, "resolved as", op.State, "by", op.Resolution.By)
	hist, _ := j.History(ctx, "charge-order-8")
	for _, e := range hist {
		fmt.Printf("%s → %s by %s\n", e.From, e.To, e.Actor)
	}
	// Output:
	// moved back to pending: 0
	// left charge-order-7 (applied)
	// left charge-order-8 (ambiguous)
	// not applied: refused until the lease runs out
	// charge-order-8 resolved as applied by ana
	//  → pending by journal
	// pending → sending by worker-1
	// sending → ambiguous by worker-1
	// ambiguous → applied by ana
}
