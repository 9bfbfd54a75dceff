package storetest

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
)

// leaseCases are the rules that keep a lease when processes share a name,
// clocks disagree or jump, answers come late and renewals fail: who holds
// a lease is the store's to judge, by its own clock, and a sender's
// answer is never thrown away.
func leaseCases() []testCase {
	return []testCase{
		{name: "IdenticalNamesNeverShareALease", run: identicalNames},
		{name: "SkewedWorkerClocksChangeNothing", run: skewedClocks},
		{name: "SendingDeadlineComesBeforeTheLease", run: sendingDeadline},
		{name: "LateAnswerIsKept", run: lateAnswer},
		{name: "AnswerRecordedByALaterRun", run: answerFromOutbox},
		{name: "NotAppliedWaitsForTheLease", run: notAppliedWaits},
		{name: "RenewalNeverShortensALease", run: renewalNeverShortens},
		{name: "KeeperRetriesFailedRenewals", realClock: true, run: keeperRetries},
	}
}

// identicalNames: two journals (two processes) given the same worker name
// never act on each other's leases: no claim, send, renewal, annotation
// or report of one touches an operation the other holds, and the failed
// send of one never records its failure over the other's request.
func identicalNames(t *testing.T, h Harness) {
	e := open(t, h)
	other := journal.New(e.s.JournalStore(), journal.Options{Lease: lease})
	const w = "host:1" // both processes in PID namespaces of their own
	e.insert(t, "k")
	if _, err := e.j.ClaimKey(e.ctx, "k", w); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ClaimKey(e.ctx, "k", w); !errors.Is(err, journal.ErrLeaseLost) || !strings.Contains(err.Error(), "same name") {
		t.Fatalf("a claim under the same name through another journal: %v; want a lease error that says another process has the name", err)
	}
	if ops, err := other.Claim(e.ctx, "charge", w, 10); err != nil || len(ops) != 0 {
		t.Fatalf("the other journal's claim of the kind: %d operations, %v", len(ops), err)
	}
	if _, err := other.Send(e.ctx, "k", w); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("a sending commit through the other journal: %v", err)
	}
	if err := other.Renew(e.ctx, w, "k"); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("a renewal through the other journal: %v", err)
	}
	if _, err := e.j.Send(e.ctx, "k", w); err != nil {
		t.Fatal(err)
	}
	// The other process's send failed before the boundary: its failure is
	// not this request's.
	if _, err := other.Record(e.ctx, "k", journal.Report{Worker: w, To: journal.FailedSafe, Phase: "not_sent", Detail: "sending commit refused"}); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("the other journal's failure recorded over the request in flight: %v", err)
	}
	if err := other.Annotate(e.ctx, "k", w, journal.Evidence{"job": "x"}); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("the other journal's annotation: %v", err)
	}
	if op, _ := e.j.Get(e.ctx, "k"); op.State != journal.Sending || op.Evidence["job"] != nil {
		t.Fatalf("after the other journal's attempts: %+v", op)
	}
	if op, err := e.j.Record(e.ctx, "k", journal.Report{Worker: w, To: journal.Applied}); err != nil || op.State != journal.Applied {
		t.Fatalf("the sender's answer: %+v, %v", op, err)
	}

	// A claim that ran out is the other journal's to take, and then no
	// longer the first one's.
	e.insert(t, "k2")
	if _, err := e.j.ClaimKey(e.ctx, "k2", w); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(lease + time.Second)
	if _, err := other.ClaimKey(e.ctx, "k2", w); err != nil {
		t.Fatalf("a claim after the lease ran out: %v", err)
	}
	if _, err := e.j.Send(e.ctx, "k2", w); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("the first journal's send after its lease was taken over: %v", err)
	}
	if _, err := e.j.ClaimKey(e.ctx, "k2", w); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("the first journal's claim back while the other's lease runs: %v", err)
	}
}

// skewedClocks: a worker whose own clock is far ahead, far behind, or
// jumps, changes neither who holds a lease nor what is recorded: the
// store's clock judges.
func skewedClocks(t *testing.T, h Harness) {
	e := open(t, h)
	skewed := func(d time.Duration) *journal.Journal {
		return journal.New(e.s.JournalStore(), journal.Options{Lease: lease, Now: func() time.Time { return e.clock.Now().Add(d) }})
	}
	ahead, behind := skewed(120*time.Second), skewed(-120*time.Second)
	var jump atomic.Int64
	jumping := journal.New(e.s.JournalStore(), journal.Options{Lease: lease, Now: func() time.Time {
		return e.clock.Now().Add(time.Duration(jump.Load()))
	}})

	for _, k := range []string{"held", "sent", "behind", "jumped"} {
		e.insert(t, k)
	}
	if _, err := e.j.ClaimKey(e.ctx, "held", "w1"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.j.ClaimKey(e.ctx, "sent", "w1"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.j.Send(e.ctx, "sent", "w1"); err != nil {
		t.Fatal(err)
	}
	// The worker whose clock is ahead sees every lease run out: the store
	// does not.
	if got, err := ahead.Recover(e.ctx); err != nil || len(got) != 0 {
		t.Fatalf("recovery by a worker 120 s ahead: %d operations made ambiguous, %v; want none", len(got), err)
	}
	if _, err := ahead.ClaimKey(e.ctx, "held", "w2"); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("a claim by a worker 120 s ahead of a lease that runs: %v", err)
	}
	// The worker whose clock is behind takes leases that last as long as
	// anyone's, and times its records by the store.
	if _, err := behind.ClaimKey(e.ctx, "behind", "w3"); err != nil {
		t.Fatal(err)
	}
	op, err := behind.Send(e.ctx, "behind", "w3")
	if want := e.clock.Now().Add(lease); err != nil || !op.LeaseExpires.Equal(want) || !op.Updated.Equal(e.clock.Now()) {
		t.Fatalf("a send by a worker 120 s behind: lease until %s, updated %s, %v; want %s and the store's now", op.LeaseExpires, op.Updated, err, want)
	}
	hist, _ := e.j.History(e.ctx, "behind")
	if at := hist[len(hist)-1].At; !at.Equal(e.clock.Now()) {
		t.Fatalf("its audit entry is timed %s, want the store's %s", at, e.clock.Now())
	}
	e.clock.Advance(lease / 2)
	if got, err := e.j.Recover(e.ctx); err != nil || len(got) != 0 {
		t.Fatalf("recovery half a lease after the send of a worker behind: %d made ambiguous, %v", len(got), err)
	}
	// A clock that jumps between the claim and the send.
	if _, err := jumping.ClaimKey(e.ctx, "jumped", "w4"); err != nil {
		t.Fatal(err)
	}
	jump.Store(int64(time.Hour))
	if _, err := jumping.Send(e.ctx, "jumped", "w4"); err != nil {
		t.Fatalf("a send after the worker's clock jumped an hour ahead, within the lease: %v", err)
	}
	jump.Store(-int64(time.Hour))
	for _, k := range []string{"sent", "behind", "jumped"} {
		j := map[string]*journal.Journal{"sent": e.j, "behind": behind, "jumped": jumping}[k]
		w := map[string]string{"sent": "w1", "behind": "w3", "jumped": "w4"}[k]
		if op, err := j.Record(e.ctx, k, journal.Report{Worker: w, To: journal.Applied}); err != nil || op.State != journal.Applied {
			t.Fatalf("%s answered: %s, %v; want applied", k, op.State, err)
		}
	}
}

// sendingDeadline: a sending commit gives its sender a deadline on the
// sender's own monotonic clock, no later than the lease the store holds
// for it, and a context bound to it; an operation read back has none.
func sendingDeadline(t *testing.T, h Harness) {
	e := open(t, h)
	const sendLease = 20 * time.Second
	j := journal.New(e.s.JournalStore(), journal.Options{Lease: lease, SendLease: sendLease})
	e.insert(t, "k")
	if _, err := j.ClaimKey(e.ctx, "k", "w1"); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	op, err := j.Send(e.ctx, "k", "w1")
	if err != nil {
		t.Fatal(err)
	}
	if op.Deadline.IsZero() || op.Deadline.After(before.Add(sendLease)) || op.Deadline.Before(before.Add(sendLease*98/100)) {
		t.Fatalf("the deadline is %s after the send began, want just under the sending lease of %s", op.Deadline.Sub(before), sendLease)
	}
	if !op.LeaseExpires.Equal(e.clock.Now().Add(sendLease)) {
		t.Fatalf("the store's lease runs until %s, want %s", op.LeaseExpires, e.clock.Now().Add(sendLease))
	}
	ctx, cancel := op.Fence(e.ctx)
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || !d.Equal(op.Deadline) {
		t.Fatalf("the fence's deadline: %s, %v; want %s", d, ok, op.Deadline)
	}
	read, _ := j.Get(e.ctx, "k")
	if !read.Deadline.IsZero() {
		t.Fatalf("an operation read back has a deadline: %s", read.Deadline)
	}
	ctx, cancel = read.Fence(e.ctx)
	defer cancel()
	if ctx.Err() == nil || !strings.Contains(context.Cause(ctx).Error(), "no sending deadline") {
		t.Fatalf("the fence of an operation read back: %v; want a context already ended, saying why", context.Cause(ctx))
	}
	// A deadline that passed ends the fence with a cause that names the
	// operation.
	op.Deadline = time.Now().Add(-time.Millisecond)
	ctx, cancel = op.Fence(e.ctx)
	defer cancel()
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !strings.Contains(context.Cause(ctx).Error(), `"k"`) {
		t.Fatalf("a fence past its deadline: %v, cause %v", ctx.Err(), context.Cause(ctx))
	}
}

// lateAnswer: the answer that reaches the sender after recovery declared
// its request's outcome unknown is kept: it settles the operation, with a
// resolution and an audit entry that say how.
func lateAnswer(t *testing.T, h Harness) {
	e := open(t, h)
	for _, k := range []string{"applied", "refused", "unsent", "silent"} {
		e.into(t, k, journal.Sending)
	}
	e.clock.Advance(lease + time.Second) // the sender froze
	if got, err := e.j.Recover(e.ctx); err != nil || len(got) != 4 {
		t.Fatalf("recover: %d, %v", len(got), err)
	}
	if _, err := e.j.Record(e.ctx, "applied", journal.Report{Worker: "w2", To: journal.Applied}); !errors.Is(err, journal.ErrIllegalTransition) {
		t.Fatalf("another worker's answer for it: %v", err)
	}
	other := journal.New(e.s.JournalStore(), journal.Options{Lease: lease})
	if _, err := other.Record(e.ctx, "applied", journal.Report{Worker: "w1", To: journal.Applied}); !errors.Is(err, journal.ErrIllegalTransition) {
		t.Fatalf("an answer under the sender's name through another journal: %v", err)
	}
	for _, tt := range []struct {
		key  string
		rep  journal.Report
		want journal.State
	}{
		{"applied", journal.Report{To: journal.Applied, Phase: "answered", Evidence: journal.Evidence{"request_id": "req_9"}}, journal.Applied},
		{"refused", journal.Report{To: journal.NotApplied, Phase: "answered", Detail: "answered 400 Bad Request"}, journal.NotApplied},
		{"unsent", journal.Report{To: journal.FailedSafe, Phase: "not_sent", Detail: "the lease ran out before the first byte"}, journal.NotApplied},
		{"silent", journal.Report{To: journal.Ambiguous, Phase: "sent", Evidence: journal.Evidence{"bytes_written": 10}}, journal.Ambiguous},
	} {
		tt.rep.Worker = "w1"
		op, err := e.j.Record(e.ctx, tt.key, tt.rep)
		if err != nil || op.State != tt.want {
			t.Fatalf("%s: the late report: %s, %v; want %s", tt.key, op.State, err, tt.want)
		}
		got, _ := e.j.Get(e.ctx, tt.key)
		hist, _ := e.j.History(e.ctx, tt.key)
		last := hist[len(hist)-1]
		if tt.want == journal.Ambiguous {
			if last.To != journal.Ambiguous || last.Actor != "recovery" || got.Evidence["bytes_written"] == nil {
				t.Fatalf("%s: a late report without an answer: last entry %+v, evidence %v; want its evidence kept and no transition", tt.key, last, got.Evidence)
			}
			continue
		}
		if got.State != tt.want || got.Resolution == nil || got.Resolution.By != "w1" || !strings.Contains(got.Resolution.Note, "declared unknown") {
			t.Fatalf("%s: read back %+v", tt.key, got)
		}
		if last.From != journal.Ambiguous || last.To != tt.want || last.Actor != "w1" || !strings.HasPrefix(last.Reason, "late answer: ") {
			t.Fatalf("%s: audit entry %+v; want ambiguous → %s by w1, a late answer", tt.key, last, tt.want)
		}
	}
	if got, _ := e.j.Get(e.ctx, "applied"); got.Evidence["request_id"] != "req_9" {
		t.Fatalf("the late answer's evidence: %v", got.Evidence)
	}
	// Settled, it takes no second answer.
	if _, err := e.j.Record(e.ctx, "applied", journal.Report{Worker: "w1", To: journal.NotApplied}); !errors.Is(err, journal.ErrIllegalTransition) {
		t.Fatalf("a second late answer: %v", err)
	}
}

// notAppliedWaits: an ambiguous request is not resolved as not applied
// while the lease it was sent under runs, since its sender may still be
// sending it; the refusal says until when. Applied is taken at once.
func notAppliedWaits(t *testing.T, h Harness) {
	e := open(t, h)
	e.into(t, "k", journal.Ambiguous)
	e.into(t, "k2", journal.Ambiguous)
	sent, _ := e.j.Get(e.ctx, "k")
	not := journal.Resolution{To: journal.NotApplied, By: "reconcile", Note: "the provider has no record of it"}
	_, err := e.j.Resolve(e.ctx, "k", not)
	var te *journal.TransitionError
	if !errors.As(err, &te) || !te.Until.Equal(sent.LeaseExpires) || !strings.Contains(err.Error(), sent.LeaseExpires.UTC().Format(time.RFC3339)) {
		t.Fatalf("not applied within the lease: %v; want a refusal until %s", err, sent.LeaseExpires)
	}
	if op, _ := e.j.Get(e.ctx, "k"); op.State != journal.Ambiguous {
		t.Fatalf("the refusal moved it to %s", op.State)
	}
	if op, err := e.j.Resolve(e.ctx, "k2", journal.Resolution{To: journal.Applied, By: "ana", Note: "the charge is listed"}); err != nil || op.State != journal.Applied {
		t.Fatalf("applied within the lease: %s, %v", op.State, err)
	}
	e.clock.Advance(sent.LeaseExpires.Sub(e.clock.Now()) - time.Millisecond)
	if _, err := e.j.Resolve(e.ctx, "k", not); !errors.As(err, &te) {
		t.Fatalf("not applied a moment before the lease ends: %v", err)
	}
	e.clock.Advance(time.Millisecond)
	if op, err := e.j.Resolve(e.ctx, "k", not); err != nil || op.State != journal.NotApplied {
		t.Fatalf("not applied once the lease ran out: %s, %v", op.State, err)
	}
}

// renewalNeverShortensALease: a renewal by the claim's lease leaves a
// longer sending lease as it is.
func renewalNeverShortens(t *testing.T, h Harness) {
	e := open(t, h)
	j := journal.New(e.s.JournalStore(), journal.Options{Lease: lease, SendLease: 10 * lease})
	e.insert(t, "k")
	if _, err := j.ClaimKey(e.ctx, "k", "w1"); err != nil {
		t.Fatal(err)
	}
	sent, err := j.Send(e.ctx, "k", "w1")
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(lease)
	if err := j.Renew(e.ctx, "w1", "k"); err != nil {
		t.Fatal(err)
	}
	if op, _ := j.Get(e.ctx, "k"); !op.LeaseExpires.Equal(sent.LeaseExpires) {
		t.Fatalf("after a renewal the sending lease runs until %s, want %s still", op.LeaseExpires, sent.LeaseExpires)
	}
	e.clock.Advance(9*lease - time.Second)
	if err := j.Renew(e.ctx, "w1", "k"); err != nil {
		t.Fatal(err)
	}
	if op, _ := j.Get(e.ctx, "k"); !op.LeaseExpires.Equal(e.clock.Now().Add(lease)) {
		t.Fatalf("a renewal near the end of the sending lease: until %s, want %s", op.LeaseExpires, e.clock.Now().Add(lease))
	}
}

// keeperRetries: a renewal that fails for a passing reason is tried again
// within the lease, and reported when the keeper stops; renewals that keep
// failing end the keeper's context once the lease could have run out, and
// the store then lets another worker take the operation.
func keeperRetries(t *testing.T, h Harness) {
	ctx := context.Background()
	const short = 600 * time.Millisecond
	s := h.Open(t, time.Now) // the real clock
	flaky := &failingStore{Store: s.JournalStore()}
	j := journal.New(flaky, journal.Options{Lease: short})
	plain := journal.New(s.JournalStore(), journal.Options{Lease: short})
	for _, k := range []string{"a", "b"} {
		if _, _, err := plain.Insert(ctx, journal.NewOperation{Key: k, Kind: "upload"}); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := j.ClaimKey(ctx, "a", "w1"); err != nil {
		t.Fatal(err)
	}
	flaky.fail.Store(2) // the first two renewals fail
	held, stop := j.KeepLeases(ctx, "w1", "a")
	time.Sleep(2 * short)
	if held.Err() != nil {
		t.Fatalf("the keeper's context ended after two failed renewals that were tried again: %v", context.Cause(held))
	}
	if _, err := j.Send(ctx, "a", "w1"); err != nil {
		t.Fatalf("send after renewals that failed twice and were tried again: %v", err)
	}
	err := stop()
	var re *journal.RenewError
	if !errors.As(err, &re) || re.Lost || re.Failures != 2 || errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("stop after two failed renewals made good: %v; want a report of 2 failures, the lease kept", err)
	}

	if _, err := j.ClaimKey(ctx, "b", "w1"); err != nil {
		t.Fatal(err)
	}
	flaky.fail.Store(1 << 20) // every renewal fails
	held, stop = j.KeepLeases(ctx, "w1", "b")
	select {
	case <-held.Done():
	case <-time.After(5 * short):
		t.Fatalf("the keeper's context lasted %s past a lease of %s that could not be renewed", 5*short, short)
	}
	if !errors.As(context.Cause(held), &re) || !re.Lost || !errors.Is(context.Cause(held), journal.ErrLeaseLost) || !strings.Contains(re.Error(), "nothing more is sent") {
		t.Fatalf("the cause: %v; want a renewal error that says the lease may be gone", context.Cause(held))
	}
	if err := stop(); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("stop: %v", err)
	}
	// The keeper gave up no later than the store's lease ran out; soon
	// after, another worker takes the operation.
	for deadline := time.Now().Add(2 * short); ; time.Sleep(20 * time.Millisecond) {
		_, err := plain.ClaimKey(ctx, "b", "w2")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("another worker's claim, %s after the lease could not be renewed: %v", 2*short, err)
		}
	}
}

// failingStore fails the next fail writes, as a store whose connection
// broke would; reads go through.
type failingStore struct {
	journal.Store
	fail atomic.Int64
}

var errBroken = errors.New("storetest: the connection to the store broke")

func (s *failingStore) Update(ctx context.Context, fn func(journal.Tx) error) error {
	if s.fail.Add(-1) >= 0 {
		return errBroken
	}
	return s.Store.Update(ctx, fn)
}

// answerFromOutbox: an answer that its worker kept (on its disk, because
// the store could not be reached) is recorded by a later run, through
// another journal, for the journal and the attempt that sent it, and only
// for those.
func answerFromOutbox(t *testing.T, h Harness) {
	e := open(t, h)
	e.into(t, "k", journal.Sending)
	e.into(t, "late", journal.Sending)
	sent, _ := e.j.Get(e.ctx, "k")
	next := journal.New(e.s.JournalStore(), journal.Options{Lease: lease}) // the next run
	kept := journal.Report{Worker: "w1", To: journal.Applied, Instance: sent.Instance, Attempt: sent.Attempts}
	for _, bad := range []journal.Report{
		{Worker: "w1", To: journal.Applied}, // as the next run's own
		{Worker: "w1", To: journal.Applied, Instance: sent.Instance, Attempt: sent.Attempts + 1}, // another attempt
		{Worker: "w2", To: journal.Applied, Instance: sent.Instance, Attempt: sent.Attempts},     // another worker
	} {
		if _, err := next.Record(e.ctx, "k", bad); !errors.Is(err, journal.ErrLeaseLost) {
			t.Fatalf("report %+v by the next run: %v; want it refused", bad, err)
		}
	}
	if op, err := next.Record(e.ctx, "k", kept); err != nil || op.State != journal.Applied {
		t.Fatalf("the kept answer recorded by the next run: %s, %v", op.State, err)
	}
	// After recovery, the kept answer settles the ambiguous operation.
	e.clock.Advance(lease + time.Second)
	if _, err := next.Recover(e.ctx); err != nil {
		t.Fatal(err)
	}
	late, _ := e.j.Get(e.ctx, "late")
	kept.Instance, kept.Attempt = late.Instance, late.Attempts
	if op, err := next.Record(e.ctx, "late", kept); err != nil || op.State != journal.Applied || op.Resolution == nil {
		t.Fatalf("a kept answer after recovery: %+v, %v", op, err)
	}
}
