package sqlstore_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// TestFrozenWorker stops a worker process (SIGSTOP, as a freeze or a long
// pause does) at a point of one request, for longer than the lease it was
// sent under; recovery declares the request ambiguous, and a second worker
// under the same name finishes the queue. Then the frozen worker goes on
// (SIGCONT). Counted at the server:
//
//   - stopped after the sending commit, or with its connection ready and
//     no byte written: it never starts writing, so that the request, found
//     not charged and resolved as not applied, is sent once, by the second
//     worker;
//   - stopped after the answer: its late answer is kept, and the request
//     is applied, with one effect.
func TestFrozenWorker(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, b backend) {
		for _, point := range []string{"sent", "connected", "answered"} {
			t.Run(point, func(t *testing.T) { frozenWorker(t, b, point) })
		}
	})
}

func frozenWorker(t *testing.T, b backend, point string) {
	const lease = time.Second
	const frozen = "op-000"
	q := newQueue(t, b, 4)
	q.srv.SetDefault(faultserver.Step{Status: 200})
	cfg := workerConfig{DSN: q.dsn, Server: q.srv.URL(), Name: "w", Lease: lease, Stop: point + ":" + frozen}
	victim := startWorker(t, cfg)
	defer func() {
		victim.Process.Kill()
		victim.Wait()
	}()
	waitStopped(t, victim.Process.Pid)
	time.Sleep(lease + 200*time.Millisecond)

	// Another process, on the store's own clock.
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, q.dsn, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	j := journal.New(db.JournalStore(), journal.Options{})
	l := ledger.New(db.LedgerStore(), nil)
	if got, err := j.Recover(ctx); err != nil || len(got) != 1 || got[0].Key != frozen {
		t.Fatalf("recovery while the worker is frozen: %+v, %v; want %s made ambiguous", got, err, frozen)
	}
	if point != "answered" {
		// The server has no record of it: it is resolved as not applied
		// (its lease is over), and sent again.
		if n := effects(q.srv)[frozen]; n != 0 {
			t.Fatalf("%d effects of %s before the freeze ended", n, frozen)
		}
		if _, err := j.Resolve(ctx, frozen, journal.Resolution{To: journal.NotApplied, By: "reconcile", Note: "the server has no record of it"}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Void(ctx, ledger.AttemptHoldID(frozen, 1)); err != nil {
			t.Fatal(err)
		}
		if rep, err := j.RetrySafe(ctx, journal.Scope{Kind: "charge", Keys: []string{frozen}}); err != nil || len(rep.Moved) != 1 {
			t.Fatalf("retry: %+v, %v", rep, err)
		}
	}
	// The second worker has the same name: in a PID namespace of its own,
	// say.
	cfg.Stop, cfg.Lease = "", 30*time.Second
	if err := startWorker(t, cfg).Wait(); err != nil {
		t.Fatalf("the second worker: %v", err)
	}
	if point == "answered" {
		if op, _ := j.Get(ctx, frozen); op.State != journal.Ambiguous {
			t.Fatalf("%s before the frozen worker goes on: %s", frozen, op.State)
		}
	}
	victim.Process.Signal(syscall.SIGCONT)
	victim.Wait() // it may fail: its other claims were taken over

	sent := effects(q.srv)
	for _, k := range q.keys {
		op, err := j.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if sent[k] != 1 || op.State != journal.Applied {
			t.Errorf("%s: %d effects, %s; want one, applied", k, sent[k], op.State)
		}
	}
	if point == "answered" {
		op, _ := j.Get(ctx, frozen)
		if op.Resolution == nil || !strings.Contains(op.Resolution.Note, "answer arrived after") {
			t.Errorf("%s applied without the late answer's resolution: %+v", frozen, op.Resolution)
		}
	}
}

// waitStopped waits until process pid is stopped.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatalf("the worker is gone before it stopped: %v", err)
		}
		if s := string(b); strings.Contains(s[strings.LastIndexByte(s, ')'):], ") T") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker never stopped at its point")
		}
	}
}
