package sqlstore_test

import (
	"bufio"
	"fmt"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
)

// TestWorkerProcessesShareOneQueue runs several worker processes against one
// database: every operation is claimed, sent and applied exactly once.
func TestWorkerProcessesShareOneQueue(t *testing.T) {
	t.Parallel()
	testkit.Long(t)
	forEach(t, func(t *testing.T, b backend) {
		const n, workers = 200, 4
		q := newQueue(t, b, n)
		dsn, e, keys, srv := q.dsn, q.e, q.keys, q.srv

		started := time.Now()
		var cmds = make([]interface{ Wait() error }, workers)
		for w := range workers {
			cmds[w] = startWorker(t, workerConfig{DSN: dsn, Server: srv.URL(), Name: fmt.Sprintf("w%d", w), Lease: 30 * time.Second})
		}
		for w, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("worker %d: %v", w, err)
			}
		}
		t.Logf("%d operations by %d processes in %s", n, workers, time.Since(started).Round(time.Millisecond))

		sent := effects(srv)
		byWorker := map[string]int{}
		for _, k := range keys {
			op, err := e.j.Get(e.ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if op.State != journal.Applied || op.Attempts != 1 || sent[k] != 1 {
				t.Errorf("%s: %s after %d attempts, %d effects; want applied once", k, op.State, op.Attempts, sent[k])
			}
			byWorker[op.Worker]++
		}
		if len(srv.Requests()) != n {
			t.Errorf("the server saw %d requests for %d operations", len(srv.Requests()), n)
		}
		t.Logf("operations per worker: %v", byWorker)
		acct, _ := e.l.Account(e.ctx, "budget")
		if acct.Held != 0 || acct.Spent != ledger.Amount(9*n) {
			t.Errorf("budget after the run: %+v, want nothing held and %d spent", acct, 9*n)
		}
	})
}

// TestHoldsFromManyProcessesNeverExceedTheLimit: processes racing for one
// budget are granted exactly what fits.
func TestHoldsFromManyProcessesNeverExceedTheLimit(t *testing.T) {
	t.Parallel()
	testkit.Long(t)
	forEach(t, func(t *testing.T, b backend) {
		const procs, limit = 4, 1_000
		dsn := b.DSN(t)
		e := openDSN(t, dsn)
		if _, err := e.l.Open(e.ctx, "shared", "micro-USD", limit); err != nil {
			t.Fatal(err)
		}
		type proc struct {
			cmd interface{ Wait() error }
			out *bufio.Reader
		}
		var ps []proc
		for i := range procs {
			cmd, out, err := runHolder(t, workerConfig{DSN: dsn, Name: fmt.Sprintf("p%d", i), Mode: "hold"})
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, proc{cmd, out})
		}
		total := 0
		for i, p := range ps {
			var ready string
			var granted int
			if _, err := fmt.Fscan(p.out, &ready, &granted); err != nil {
				t.Fatalf("holder %d: %v", i, err)
			}
			if err := p.cmd.Wait(); err != nil {
				t.Fatalf("holder %d: %v", i, err)
			}
			total += granted
		}
		acct, _ := e.l.Account(e.ctx, "shared")
		if total != limit/7 || acct.Held != ledger.Amount(7*total) {
			t.Fatalf("%d holds granted across %d processes, %d held: want %d holds and never past %d", total, procs, acct.Held, limit/7, limit)
		}
		if bad, err := e.l.Verify(e.ctx); err != nil || len(bad) != 0 {
			t.Fatalf("verify: %+v %v", bad, err)
		}
	})
}
