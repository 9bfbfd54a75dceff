package sqlstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// BenchmarkSendAndRecord measures durable pairs per second: each pair is the
// sending transition, committed before a request would go out, and the
// outcome, committed after; workers claim 10 operations at a time. Every
// commit is durable (SQLite synchronous FULL, or PostgreSQL's default
// synchronous_commit), except in the sqlite-normal cases.
func BenchmarkSendAndRecord(b *testing.B) {
	cases := []struct {
		name    string
		dsn     func(testing.TB) string
		sync    sqlstore.Synchronous
		workers int
	}{
		{"sqlite-full/workers-1", sqlitePath, sqlstore.Full, 1},
		{"sqlite-full/workers-4", sqlitePath, sqlstore.Full, 4},
		{"sqlite-normal/workers-1", sqlitePath, sqlstore.Normal, 1},
		{"sqlite-normal/workers-4", sqlitePath, sqlstore.Normal, 4},
	}
	for _, w := range []int{1, 4, 16} {
		cases = append(cases, struct {
			name    string
			dsn     func(testing.TB) string
			sync    sqlstore.Synchronous
			workers int
		}{fmt.Sprintf("postgres/workers-%d", w), freshSchema, "", w})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.name[:8] == "postgres" && !postgresOn() {
				b.Skip("PostgreSQL is off")
			}
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

func sqlitePath(t testing.TB) string { return filepath.Join(t.TempDir(), "bench.db") }
