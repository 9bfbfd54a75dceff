package sqlstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testdb"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// BenchmarkSendAndRecord measures durable pairs per second: each pair is the
// sending transition, committed before a request would go out, and the
// outcome, committed after; workers claim 10 operations at a time. Every
// commit is durable (SQLite synchronous FULL, or PostgreSQL's default
// synchronous_commit), except in the sqlite-normal cases. In the chained
// cases a worker commits the outcome of one operation and the sending of
// its next in one transaction, which the Tx methods allow: one commit per
// pair instead of two.
func BenchmarkSendAndRecord(b *testing.B) {
	type benchCase struct {
		name    string
		dsn     func(testing.TB) string
		sync    sqlstore.Synchronous
		workers int
		chained bool
	}
	cases := []benchCase{
		{"sqlite-full/workers-1", sqlitePath, sqlstore.Full, 1, false},
		{"sqlite-full/workers-4", sqlitePath, sqlstore.Full, 4, false},
		{"sqlite-full/workers-1-chained", sqlitePath, sqlstore.Full, 1, true},
		{"sqlite-normal/workers-1", sqlitePath, sqlstore.Normal, 1, false},
		{"sqlite-normal/workers-4", sqlitePath, sqlstore.Normal, 4, false},
	}
	for _, w := range []int{1, 4, 16} {
		cases = append(cases, benchCase{fmt.Sprintf("postgres/workers-%d", w), testdb.Postgres, "", w, false})
	}
	cases = append(cases, benchCase{"postgres/workers-1-chained", testdb.Postgres, "", 1, true})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			db, err := sqlstore.Open(ctx, c.dsn(b), sqlstore.Options{Synchronous: c.sync, MaxConns: c.workers + 2})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			j := journal.New(db.JournalStore(), journal.Options{})
			// Record the operations outside the timer, in one transaction.
			err = db.Update(ctx, func(tx *sqlstore.Tx) error {
				for i := range b.N {
					if _, _, err := j.InsertTx(ctx, tx, journal.NewOperation{Key: fmt.Sprintf("op-%07d", i), Kind: "charge"}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			errs := make(chan error, c.workers)
			for w := range c.workers {
				name := fmt.Sprintf("w%d", w)
				wg.Go(func() {
					if c.chained {
						errs <- chained(ctx, db, j, name)
						return
					}
					for {
						ops, err := j.Claim(ctx, "charge", name, 10)
						if err != nil || len(ops) == 0 {
							errs <- err
							return
						}
						for _, op := range ops {
							if _, err := j.Send(ctx, op.Key, name); err != nil {
								errs <- err
								return
							}
							if _, err := j.Record(ctx, op.Key, journal.Report{Worker: name, To: journal.Applied}); err != nil {
								errs <- err
								return
							}
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			close(errs)
			for err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pairs/s")
		})
	}
}

// chained works through the queue committing, in each transaction, the
// outcome of the operation just sent and the sending of the next.
func chained(ctx context.Context, db *sqlstore.DB, j *journal.Journal, name string) error {
	var last string // sent, outcome not yet recorded
	for {
		ops, err := j.Claim(ctx, "charge", name, 10)
		if err != nil {
			return err
		}
		if len(ops) == 0 {
			if last == "" {
				return nil
			}
			_, err := j.Record(ctx, last, journal.Report{Worker: name, To: journal.Applied})
			return err
		}
		for _, op := range ops {
			err := db.Update(ctx, func(tx *sqlstore.Tx) error {
				if last != "" {
					if _, err := j.RecordTx(ctx, tx, last, journal.Report{Worker: name, To: journal.Applied}); err != nil {
						return err
					}
				}
				_, err := j.SendTx(ctx, tx, op.Key, name)
				return err
			})
			if err != nil {
				return err
			}
			last = op.Key // ... its request would go out here ...
		}
	}
}

func sqlitePath(t testing.TB) string { return filepath.Join(t.TempDir(), "bench.db") }
