package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
)

// claimCases are the cases of claims, their leases and recovery: a lease is
// its worker's until it runs out, claims never overlap, and kept leases
// outlast their length.
func claimCases() []testCase {
	return []testCase{
		{name: "Leases", run: leases},
		{name: "RecoverMakesAbandonedSendsAmbiguous", run: recoverMakesAbandonedSendsAmbiguous},
		{name: "ClaimsNeverOverlap", run: claimsNeverOverlap},
		{name: "ClaimKey", run: claimKey},
		{name: "KeepLeasesOutlastsTheLease", realClock: true, run: keepLeasesOutlastsTheLease},
	}
}

// leases: a claimed operation is its worker's until the lease runs out: another
// worker can neither claim nor send it before then, and can after.
func leases(t *testing.T, h Harness) {
	e := open(t, h)
	e.insert(t, "a")
	e.claim(t, "a", "w1")
	if ops, err := e.j.Claim(e.ctx, "charge", "w2", 10); err != nil || len(ops) != 0 {
		t.Fatalf("claim of a held operation by w2: %d, %v", len(ops), err)
	}
	if _, err := e.j.Send(e.ctx, "a", "w2"); !errors.Is(err, journal.ErrLeaseLost) || !strings.Contains(err.Error(), `"w1"`) {
		t.Fatalf("send by a worker without the lease: %v", err)
	}
	e.clock.Advance(lease / 2)
	if err := e.j.Renew(e.ctx, "w1", "a"); err != nil {
		t.Fatalf("renew: %v", err)
	}
	e.clock.Advance(lease * 3 / 4) // past the first lease, within the renewed one
	if _, err := e.j.Send(e.ctx, "a", "w1"); err != nil {
		t.Fatalf("send within the renewed lease: %v", err)
	}

	// A pending claim whose worker died is claimable again.
	e.insert(t, "b")
	e.claim(t, "b", "w1")
	e.clock.Advance(lease + time.Second)
	if _, err := e.j.Send(e.ctx, "b", "w1"); !errors.Is(err, journal.ErrLeaseLost) || !strings.Contains(err.Error(), "ran out") {
		t.Fatalf("send after the lease ran out: %v", err)
	}
	if err := e.j.Renew(e.ctx, "w1", "b"); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("renew after the lease ran out: %v", err)
	}
	e.claim(t, "b", "w2")
	if _, err := e.j.Send(e.ctx, "b", "w2"); err != nil {
		t.Fatalf("send by the new holder: %v", err)
	}
}

// recoverMakesAbandonedSendsAmbiguous: once their leases run out, Recover
// makes a request sent by a worker that died ambiguous and gives back a
// claim never sent; before, it touches nothing.
func recoverMakesAbandonedSendsAmbiguous(t *testing.T, h Harness) {
	e := open(t, h)
	e.into(t, "sent-then-died", journal.Sending)
	e.into(t, "claimed-then-died", journal.Pending)
	e.claim(t, "claimed-then-died", "w9")
	if got, err := e.j.Recover(e.ctx); err != nil || len(got) != 0 {
		t.Fatalf("recover before any lease ran out: %d, %v", len(got), err)
	}
	e.clock.Advance(lease + time.Second)
	got, err := e.j.Recover(e.ctx)
	if err != nil || len(got) != 1 || got[0].Key != "sent-then-died" || got[0].State != journal.Ambiguous {
		t.Fatalf("recover: %+v, %v", got, err)
	}
	op, _ := e.j.Get(e.ctx, "sent-then-died")
	if op.State != journal.Ambiguous || op.LastPhase != "sent" || !strings.Contains(op.LastError, "w1") {
		t.Fatalf("recovered operation: %+v", op)
	}
	hist, _ := e.j.History(e.ctx, "sent-then-died")
	if last := hist[len(hist)-1]; last.Actor != "recovery" || last.To != journal.Ambiguous {
		t.Fatalf("recovery's audit entry: %+v", last)
	}
	// Never handed out again; the abandoned claim is.
	ops, err := e.j.Claim(e.ctx, "charge", "w2", 10)
	if err != nil || len(ops) != 1 || ops[0].Key != "claimed-then-died" {
		t.Fatalf("claim after recovery: %+v, %v", ops, err)
	}
	// Another worker's report on it is refused; its sender's answer
	// is kept (see LateAnswerIsKept).
	if _, err := e.j.Record(e.ctx, "sent-then-died", journal.Report{Worker: "w2", To: journal.Applied}); !errors.Is(err, journal.ErrIllegalTransition) {
		t.Fatalf("another worker's report on a recovered operation: %v", err)
	}
}

// claimsNeverOverlap: workers claiming one queue at once are never given
// the same operation, and between them take all of it.
func claimsNeverOverlap(t *testing.T, h Harness) {
	e := open(t, h)
	const n = 60
	for i := range n {
		e.insert(t, fmt.Sprintf("q-%02d", i))
	}
	claimed := make(chan string, n*2)
	done := make(chan error)
	for w := range 6 {
		go func() {
			for {
				ops, err := e.j.Claim(context.Background(), "charge", fmt.Sprintf("w%d", w), 3)
				if err != nil || len(ops) == 0 {
					done <- err
					return
				}
				for _, op := range ops {
					claimed <- op.Key
				}
			}
		}()
	}
	for range 6 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	close(claimed)
	seen := map[string]bool{}
	for k := range claimed {
		if seen[k] {
			t.Fatalf("%s claimed twice", k)
		}
		seen[k] = true
	}
	if len(seen) != n {
		t.Fatalf("%d of %d operations claimed", len(seen), n)
	}
}

// claimKey: one operation claimed by key is its worker's alone; the same worker
// may claim it again.
func claimKey(t *testing.T, h Harness) {
	e := open(t, h)
	e.insert(t, "k")
	if op, err := e.j.ClaimKey(e.ctx, "k", "w1"); err != nil || op.Worker != "w1" || op.LeaseExpires.IsZero() {
		t.Fatalf("claim: %+v, %v", op, err)
	}
	if _, err := e.j.ClaimKey(e.ctx, "k", "w2"); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("claim of a held operation: %v", err)
	}
	if _, err := e.j.ClaimKey(e.ctx, "k", "w1"); err != nil {
		t.Fatalf("the holder claims again: %v", err)
	}
	e.clock.Advance(lease + time.Second)
	if _, err := e.j.ClaimKey(e.ctx, "k", "w2"); err != nil {
		t.Fatalf("claim after the lease ran out: %v", err)
	}
	if _, err := e.j.Send(e.ctx, "k", "w2"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.j.ClaimKey(e.ctx, "k", "w2"); !errors.Is(err, journal.ErrIllegalTransition) {
		t.Fatalf("claim of a sending operation: %v", err)
	}
	if _, err := e.j.ClaimKey(e.ctx, "missing", "w2"); !errors.Is(err, journal.ErrNotFound) {
		t.Fatalf("claim of an unknown key: %v", err)
	}
}

// keepLeasesOutlastsTheLease: on the real clock, a kept lease outlasts its
// length while a lease not kept runs out, and a stopped keeper keeps
// nothing.
func keepLeasesOutlastsTheLease(t *testing.T, h Harness) {
	ctx := context.Background()
	const short = 450 * time.Millisecond
	j := journal.New(h.Open(t, time.Now).JournalStore(), journal.Options{Lease: short}) // the real clock
	for _, k := range []string{"kept", "not-kept"} {
		j.Insert(ctx, journal.NewOperation{Key: k, Kind: "upload"})
	}
	if ops, err := j.Claim(ctx, "upload", "w1", 2); err != nil || len(ops) != 2 {
		t.Fatalf("claim: %d, %v", len(ops), err)
	}
	_, stop := j.KeepLeases(ctx, "w1", "kept")
	time.Sleep(3 * short)
	if _, err := j.Send(ctx, "kept", "w1"); err != nil {
		t.Fatalf("send after three lease durations with the keeper: %v", err)
	}
	if _, err := j.Send(ctx, "not-kept", "w1"); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("send after three lease durations without the keeper: %v", err)
	}
	// The keeper goes on renewing the sending lease; stopping reports
	// no failure.
	time.Sleep(2 * short)
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if got, err := j.Recover(ctx); err != nil || len(got) != 0 {
		t.Fatalf("recover found %d kept operations expired: %v", len(got), err)
	}
	// A keeper on a lease that is gone reports it.
	_, stop = j.KeepLeases(ctx, "w1", "not-kept")
	time.Sleep(short)
	if err := stop(); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("keeper of a lost lease: %v", err)
	}
}
