package journal_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

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
		sent, err := j.Send(ctx, op.Key, "worker-1")
		if err != nil {
			panic(err)
		}
		// ... the request goes out here, under sent.Fence(ctx) ...
		_ = sent
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

// A request is sent under the context its sending commit bounds: it never
// starts once the lease the commit took is over, so that a worker that
// wakes from a pause after recovery made its operation ambiguous sends
// nothing.
func ExampleOperation_Fence() {
	ctx := context.Background()
	db, done := exampleDB()
	defer done()
	j := journal.New(db.JournalStore(), journal.Options{SendLease: 2 * time.Minute})
	j.Insert(ctx, journal.NewOperation{Key: "charge-order-9", Kind: "charge"})
	worker := journal.ProcessWorker()
	if _, err := j.ClaimKey(ctx, "charge-order-9", worker); err != nil {
		panic(err)
	}
	sent, err := j.Send(ctx, "charge-order-9", worker)
	if err != nil {
		panic(err)
	}
	fenced, cancel := sent.Fence(ctx)
	defer cancel()
	deadline, _ := fenced.Deadline()
	fmt.Println("the request must be over within the sending lease:", time.Until(deadline) <= 2*time.Minute)
	// req, _ := http.NewRequestWithContext(fenced, "POST", url, body)
	// resp, err := client.Do(req) // a rubicon transport.Client
	j.Record(ctx, "charge-order-9", journal.Report{Worker: worker, To: journal.Applied, Attempt: sent.Attempts})
	// Output:
	// the request must be over within the sending lease: true
}

// A worker keeps its claim renewed while it prepares a request, and sends
// it only while the claim is held.
func ExampleJournal_KeepLeases() {
	ctx := context.Background()
	db, done := exampleDB()
	defer done()
	j := journal.New(db.JournalStore(), journal.Options{})
	j.Insert(ctx, journal.NewOperation{Key: "upload-3", Kind: "upload"})
	if _, err := j.ClaimKey(ctx, "upload-3", "worker-1"); err != nil {
		panic(err)
	}
	held, stop := j.KeepLeases(ctx, "worker-1", "upload-3")
	// ... convert the upload under held, which ends if the lease is lost ...
	if held.Err() != nil {
		fmt.Println("not sent:", context.Cause(held))
		return
	}
	if _, err := j.Send(ctx, "upload-3", "worker-1"); err != nil {
		panic(err)
	}
	if err := stop(); err != nil {
		fmt.Println("renewals:", err) // failures that were tried again, or the loss
	}
	fmt.Println("sent while the lease was held")
	// Output:
	// sent while the lease was held
}

// exampleDB opens a database of its own for an example, and returns what
// removes it.
func exampleDB() (*sqlstore.DB, func()) {
	dir, _ := os.MkdirTemp("", "journal-example")
	db, err := sqlstore.Open(context.Background(), filepath.Join(dir, "rubicon.db"), sqlstore.Options{})
	if err != nil {
		panic(err)
	}
	return db, func() {
		db.Close()
		os.RemoveAll(dir)
	}
}
